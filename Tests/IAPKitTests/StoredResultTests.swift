@testable import IAPCore
@testable import IAPKit
import Testing

/// A purchase record the store vouches for without reporting its facts is
/// shown as stored: the C ABI the JSON rendered from its facts, the Swift
/// API their value. A record format 1 stored as JSON is read back into
/// those facts once (`OutboxV1Migration`): the event must be the live one.
@Suite("IAPKit: stored results")
struct StoredResultTests {
    static let transaction = StoreTransaction(
        id: "2000000000000042", originalID: "2000000000000040", productID: "vip_monthly",
        kind: .autoRenewableSubscription, purchaseDateMs: 1_700_000_000_150, expiresDateMs: 1_702_592_000_150,
        price: "2.99", currency: "EUR", quantity: 1, verified: true, jws: "a.b.c", environment: "sandbox",
        isUpgraded: true, familyShared: true, storefront: "FRA")

    @Test("a stored success read back from its bytes is the event the live one was", arguments: [true, false])
    func roundTrip(verified: Bool) throws {
        var t = Self.transaction
        t.verified = verified
        let live = BridgeMessage.purchase(key: 1_700_000_000_123, transaction: t, origin: .game, alreadyOwned: true,
                                          clickKey: 1_699_999_999_999)
        let kind: RecordKind = verified ? .purchase : .unverified
        let facts = OutboxV1Migration.facts(kind: kind, key: 1_700_000_000_123, transactionID: verified ? t.id : "u:" + t.id,
                                            message: live.json)
        let stored = try #require(facts.message(key: 1_700_000_000_123))
        #expect(stored.json == live.json, "rendered again, byte for byte")
        #expect(IAPEvent(stored) == IAPEvent(live))
        guard case .purchase(let r) = IAPEvent(stored) else { Issue.record("not a purchase"); return }
        #expect(r.result == (verified ? .success : .unverified) && r.shouldGrant == verified)
        #expect(r.transaction?.storefront == "FRA" && r.transaction?.familyShared == true && r.clickKey == 1_699_999_999_999)
    }

    @Test("the typed result says what the C ABI's JSON says")
    func sameFactsAsJSON() throws {
        let m = BridgeMessage.purchase(key: -42, transaction: Self.transaction, origin: .store, alreadyOwned: false, clickKey: nil)
        let json = try JSONParser.parse(bytes: m.json)
        guard case .purchase(let r) = IAPEvent(m), let t = r.transaction else { Issue.record("not a purchase"); return }
        #expect(json["key"]?.stringValue == String(r.key) && json["result"]?.stringValue == String(r.result.rawValue))
        #expect(json["transactionID"]?.stringValue == t.id && json["originalTransactionID"]?.stringValue == t.originalID)
        #expect(json["price"]?.stringValue == t.price && json["currency"]?.stringValue == t.currency)
        #expect(json["purchaseDate"]?.int64Value == t.purchaseDate && json["expiresDate"]?.int64Value == t.expiresDate)
        #expect(json["origin"]?.stringValue == r.origin.rawValue && json["kind"]?.stringValue == t.kind.rawValue)
        #expect(json["ownershipType"]?.stringValue == "familyShared" && json["jws"]?.stringValue == t.jws)

        let f = BridgeMessage.purchaseFailed(key: 5, productID: "coins_100", failure: .networkError, detail: "offline")
        let fj = try JSONParser.parse(bytes: f.json)
        guard case .purchase(let fr) = IAPEvent(f) else { Issue.record("not a purchase"); return }
        #expect(fj["result"]?.stringValue == String(fr.result.rawValue) && fr.result == .networkError)
        #expect(fj["message"]?.stringValue == fr.message && fr.transaction == nil)
    }
}
