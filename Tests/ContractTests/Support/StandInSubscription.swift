#if !canImport(StoreKit)
import IAPCore
import StoreKitStandIn
import Testing

/// The sample catalog's VIP subscription on the stand-in, for the StoreKit
/// suites that test subscription status.
enum StandInSubscription {
    static let vipGroup = StoreKitBackend.catalogProducts().first { $0.id == "vip_monthly" }?.subscription?.subscriptionGroupID ?? ""

    /// Buys vip_monthly with this click key and confirms it; its "7".
    @discardableResult
    static func subscribe(_ b: TestBridge, key: Int64 = 1_820_000_000_001) async throws -> JSONValue {
        let k = try b.buy("vip_monthly", key)
        let r = try #require(await b.result(key: k))
        try b.confirm(k)
        return r
    }

    /// The group of the last "subscription" message.
    static func lastGroup(_ b: TestBridge) -> JSONValue? { b.messages(type: "subscription").last?["groups"]?.arrayValue?.first }
}
#endif
