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

    /// `price` (a decimal string such as "0.99") times `n`, exactly: what n
    /// units cost ("2.97"). The price unchanged when it does not parse.
    public static func times(_ price: String, _ n: Int64) -> String {
        guard n != 1 else { return price }
        let parts = price.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count <= 2, let whole = Int64(parts[0]) else { return price }
        let frac = parts.count == 2 ? String(parts[1]) : ""
        guard frac.count <= 6, frac.allSatisfy(\.isNumber) else { return price }
        var scale: Int64 = 1
        for _ in 0..<frac.count { scale *= 10 }
        let units = whole * scale + (Int64(frac) ?? 0)
        let (total, overflow) = units.multipliedReportingOverflow(by: n)
        guard !overflow else { return price }
        guard !frac.isEmpty else { return String(total) }
        let fracText = String(total % scale)
        return "\(total / scale)." + String(repeating: "0", count: frac.count - fracText.count) + fracText
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
