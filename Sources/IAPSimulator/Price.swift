import IAPCore

/// Prices as the store shows them: decimal text, a currency from the
/// storefront, and a localized display string.
public enum Price {
    /// "0.99" stays "0.99"; "5" stays "5"; anything not a plain non-negative
    /// decimal is refused.
    public static func normalize(_ text: String) -> String? {
        let t = text.trimmingSpaces
        guard !t.isEmpty, t.utf8.count <= 32 else { return nil }
        var dots = 0
        for c in t.utf8 {
            if c == UInt8(ascii: ".") { dots += 1; continue }
            guard c >= 0x30 && c <= 0x39 else { return nil }
        }
        guard dots <= 1, t.first != ".", t.last != "." else { return nil }
        return t
    }

    /// ISO 4217 code for an App Store storefront (ISO 3166 alpha-3).
    public static func currency(storefront: String) -> String {
        currencies[storefront.uppercased()] ?? "USD"
    }

    /// Built once: the store asks for every transaction it reports.
    private static let currencies: [String: String] = [
        "USA": "USD", "GBR": "GBP", "CAN": "CAD", "AUS": "AUD", "NZL": "NZD", "JPN": "JPY", "CHN": "CNY",
        "KOR": "KRW", "IND": "INR", "BRA": "BRL", "MEX": "MXN", "RUS": "RUB", "TUR": "TRY", "CHE": "CHF",
        "SWE": "SEK", "NOR": "NOK", "DNK": "DKK", "POL": "PLN", "SAU": "SAR", "ARE": "AED", "ISR": "ILS",
        "EGY": "EGP", "ZAF": "ZAR", "SGP": "SGD", "HKG": "HKD", "TWN": "TWD", "THA": "THB", "IDN": "IDR",
        "MYS": "MYR", "PHL": "PHP", "VNM": "VND",
        "DEU": "EUR", "FRA": "EUR", "ITA": "EUR", "ESP": "EUR", "NLD": "EUR", "BEL": "EUR", "AUT": "EUR",
        "IRL": "EUR", "PRT": "EUR", "FIN": "EUR", "GRC": "EUR",
    ]

    public static func display(_ price: String, currency: String) -> String {
        switch currency {
        case "USD", "CAD", "AUD", "NZD", "SGD", "HKD", "MXN": return "$" + price
        case "EUR": return "€" + price
        case "GBP": return "£" + price
        case "JPY", "CNY": return "¥" + price
        case "KRW": return "₩" + price
        case "INR": return "₹" + price
        default: return currency + " " + price
        }
    }

    /// `price` (a decimal string such as "0.99") times `n` (1 to 10^9),
    /// exactly, digit by digit: what n units cost ("2.97"), with as many
    /// decimals as the price. Any number of digits: a price with more than
    /// 6 decimals or 18 integer digits came back as the unit price for
    /// several units (found by an attack). The price unchanged when it does
    /// not parse.
    public static func times(_ price: String, _ n: Int64) -> String {
        guard n != 1, n > 0, n <= 1_000_000_000 else { return price }
        let parts = price.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count <= 2, !parts[0].isEmpty,
              parts.allSatisfy({ $0.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") } }) else { return price }
        let fracCount = parts.count == 2 ? parts[1].count : 0
        var product: [UInt8] = []
        var carry: UInt64 = 0
        for d in (Array(parts[0]) + (parts.count == 2 ? Array(parts[1]) : [])).reversed() {
            let v = UInt64(d - UInt8(ascii: "0")) * UInt64(n) + carry
            product.append(UInt8(v % 10) + UInt8(ascii: "0"))
            carry = v / 10
        }
        while carry > 0 {
            product.append(UInt8(carry % 10) + UInt8(ascii: "0"))
            carry /= 10
        }
        product.reverse()
        var whole = Array(product.dropLast(fracCount))
        while whole.count > 1 && whole.first == UInt8(ascii: "0") { whole.removeFirst() }
        if whole.isEmpty { whole = [UInt8(ascii: "0")] }
        let wholeText = String(decoding: whole, as: UTF8.self)
        return fracCount == 0 ? wholeText : wholeText + "." + String(decoding: product.suffix(fracCount), as: UTF8.self)
    }

}

extension String {
    var trimmingSpaces: String {
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\t" || f == "\n" || f == "\r" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" || l == "\n" || l == "\r" { s = s.dropLast() }
        return String(s)
    }
}
