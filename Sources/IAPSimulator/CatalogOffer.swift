import IAPCore

/// A subscription offer of the catalog: the introductory offer of a product
/// (`introductoryOffer`, or the first of `introductoryOffers`) or one of its
/// win-back offers (`winbackOffers`, Xcode 16). Names are the `.storekit`
/// file's: `paymentMode` `free`, `payAsYouGo` or `payUpFront`,
/// `subscriptionPeriod` (one offer period), `numberOfPeriods`, `displayPrice`.
public struct CatalogOffer: Sendable, Equatable {
    public var kind: TransactionOffer.Kind
    /// The offer's ID (`offerID`, else `referenceName`); nil for an
    /// introductory offer.
    public var id: String?
    /// `free`, `payAsYouGo` or `payUpFront`.
    public var paymentMode: String
    /// One offer period, ISO 8601 ("P1W").
    public var period: String
    public var periods: Int
    /// What one offer period costs, decimal text ("0" for a free trial).
    public var price: String

    /// What is wrong with a paid offer's price (payAsYouGo, payUpFront), if
    /// anything: such an offer with no price, or one that is not a decimal,
    /// was sold for 0 (found by an attack), while the same text as a
    /// product's price refuses the catalog.
    static func priceProblem(_ o: [String: JSONValue]) -> String? {
        guard let mode = o["paymentMode"]?.stringValue, mode == "payAsYouGo" || mode == "payUpFront" else { return nil }
        guard let text = o["displayPrice"]?.stringValue else { return "a \(mode) offer has no \"displayPrice\"" }
        return Price.normalize(text) == nil ? "a \(mode) offer has price \"\(text)\", not a decimal number" : nil
    }

    /// Reads one offer object of a `.storekit` file; nil when it has no
    /// usable period (or a win-back offer no ID).
    static func read(_ o: [String: JSONValue], kind: TransactionOffer.Kind) -> CatalogOffer? {
        let mode = o["paymentMode"]?.stringValue ?? "free"
        let period = o["subscriptionPeriod"]?.stringValue ?? ""
        guard ISODuration(period) != nil else { return nil }
        let periods = Int(clamping: max(1, min(o["numberOfPeriods"]?.int64Value ?? 1, 120)))
        let price = mode == "free" ? "0" : (o["displayPrice"]?.stringValue.flatMap(Price.normalize) ?? "0")
        var id: String? = nil
        if kind != .introductory {
            guard let named = o["offerID"]?.stringValue ?? o["id"]?.stringValue ?? o["referenceName"]?.stringValue,
                  !named.isEmpty else { return nil }
            id = named
        }
        return CatalogOffer(kind: kind, id: id, paymentMode: mode, period: period, periods: periods, price: price)
    }

    /// The `"999"`'s description of it: `{"paymentMode","period","periods","price"}`
    /// (and `"id"` for a win-back offer).
    public var json: JSONValue {
        var o: [String: JSONValue] = [
            "paymentMode": .string(paymentMode), "period": .string(period),
            "periods": .number(String(periods)), "price": .string(price),
        ]
        if let id {
            o["id"] = .string(id)
            o["type"] = .string(kind.rawValue)
        }
        return .object(o)
    }

    /// What a transaction that used it says (StoreKit's `Transaction.Offer`).
    public var transactionOffer: TransactionOffer {
        let mode: TransactionOffer.PaymentMode = switch paymentMode {
        case "payAsYouGo": .payAsYouGo
        case "payUpFront": .payUpFront
        default: .freeTrial
        }
        return TransactionOffer(kind: kind, id: id, paymentMode: mode, period: period)
    }

    /// Pay as you go charges each offer period on its own (a transaction
    /// per period, `periods` of them); a free trial and pay up front cover
    /// all their periods with one transaction.
    var chargesEachPeriod: Bool { paymentMode == "payAsYouGo" }

    /// When the first transaction under the offer ends.
    func firstTermEnd(from ms: Int64) -> Int64 {
        let d = ISODuration(period) ?? ISODuration("P1M")!
        var end = d.added(to: ms)
        if !chargesEachPeriod { for _ in 1..<max(1, periods) { end = d.added(to: end) } }
        return end
    }
}
