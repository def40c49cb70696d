import IAPCore

/// The `"storekit"` object of the `iap_open` config, checked strictly.
public struct StoreKitOptions: Sendable, Equatable {
    /// How long one `Transaction.finish()` may take before the SDK stops
    /// waiting for it and moves on (the transaction then stays unfinished and
    /// is finished again at the next launch).
    public var finishTimeoutMs: Int64 = 10_000

    /// What a purchase the player starts on the App Store page does.
    public enum PromotedPurchases: String, Sendable, Equatable {
        /// The game is told (a `"promoted"` message) and decides: it buys
        /// the product with `iap_buy`, or not.
        case ask
        /// Bought at once (1.1's behaviour).
        case buy
    }
    public var promotedPurchases: PromotedPurchases = .ask

    public init() {}

    public static let maxFinishTimeoutMs: Int64 = 600_000

    public static func parse(_ value: JSONValue?) throws(IAPError) -> StoreKitOptions {
        var options = StoreKitOptions()
        guard let value else { return options }
        guard let o = value.objectValue else { throw IAPError(.badConfig, "\"storekit\" must be an object") }
        let known: Set<String> = ["finishTimeoutMs", "promotedPurchases"]
        if let unknown = o.keys.sorted().first(where: { !known.contains($0) }) {
            throw IAPError(.badConfig, "unknown \"storekit\" key \"\(unknown)\" (known: \(known.sorted().joined(separator: ", ")))")
        }
        if let t = o["finishTimeoutMs"] {
            guard let ms = t.int64Value, ms >= 1, ms <= maxFinishTimeoutMs else {
                throw IAPError(.badConfig, "\"storekit\".\"finishTimeoutMs\" must be a whole number of milliseconds from 1 to \(maxFinishTimeoutMs)")
            }
            options.finishTimeoutMs = ms
        }
        if let p = o["promotedPurchases"] {
            guard let text = p.stringValue, let v = PromotedPurchases(rawValue: text) else {
                throw IAPError(.badConfig, "\"storekit\".\"promotedPurchases\" must be \"ask\" or \"buy\"")
            }
            options.promotedPurchases = v
        }
        return options
    }
}
