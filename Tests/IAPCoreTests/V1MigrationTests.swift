@testable import IAPCore
import Testing

/// Reading a result format 1 stored as JSON into the facts format 2 stores
/// (`OutboxV1Migration`), once, when an old outbox is opened. Formerly the
/// tests of `StoredMessage`, which read the same fields at every open.
@Suite("Format 1 records read into facts")
struct V1MigrationTests {
    private func transaction(product: String) -> StoreTransaction {
        StoreTransaction(id: "2000000000000007", originalID: "2000000000000005", productID: product,
                         kind: .nonConsumable, purchaseDateMs: 1_700_000_000_000, expiresDateMs: nil,
                         revocationDateMs: nil, revocationReason: nil, price: "0.99", currency: "USD", quantity: 1,
                         token: nil, verified: true, jws: "a.b.c", environment: "simulator", isUpgraded: false,
                         familyShared: false)
    }

    /// The purchase a format 1 purchase record's text reads as.
    private func read(_ bytes: [UInt8], transactionID: String = "2000000000000007") -> StoredPurchase {
        let r = OutboxRecord(id: 1, key: 42, kind: .purchase, transactionID: transactionID,
                             facts: OutboxV1Migration.facts(kind: .purchase, key: 42, transactionID: transactionID, message: bytes))
        return StoredPurchase(r)!
    }

    @Test("reads what Messages.purchase wrote", arguments: ["remove_ads", "quote \" back \\ slash", "é😀 \u{01}\n"])
    func readsPurchase(_ product: String) {
        let bytes = Messages.purchase(key: 42, transaction: transaction(product: product), origin: .store,
                                      alreadyOwned: true, clickKey: 17)
        let m = read(bytes)
        #expect(m.productID == product)
        #expect(m.originalID == "2000000000000005")
        #expect(m.kind == .nonConsumable)
        #expect(m.origin == .store)
        #expect(m.alreadyOwned)
        #expect(m.clickKey == 17)
    }

    @Test("every result format 1 wrote renders again to the same bytes", arguments: [true, false])
    func sameBytes(_ verified: Bool) {
        var t = transaction(product: "vip_monthly")
        t.kind = .autoRenewableSubscription
        t.expiresDateMs = 1_702_592_000_000
        t.verified = verified
        t.isUpgraded = true
        t.familyShared = true
        t.storefront = "FRA"
        t.offer = TransactionOffer(kind: .introductory, paymentMode: .freeTrial, period: "P1W")
        let kind: RecordKind = verified ? .purchase : .unverified
        for click: Int64? in [nil, 17] {
            let live = BridgeMessage.purchase(key: 42, transaction: t, origin: .game, alreadyOwned: false, clickKey: click)
            let facts = OutboxV1Migration.facts(kind: kind, key: 42, transactionID: verified ? t.id : "u:" + t.id, message: live.json)
            #expect(facts.message(key: 42)?.json == live.json)
        }
        let failure = BridgeMessage.purchaseFailed(key: 42, productID: "coins_100", failure: .declined, detail: "a parent said no")
        #expect(OutboxV1Migration.facts(kind: .failure, key: 42, transactionID: "", message: failure.json).message(key: 42)?.json
                == failure.json)
        var r = transaction(product: "coins_100")
        r.revocationDateMs = 1_700_000_100_000
        r.revocationReason = "developerIssue"
        let revoked = BridgeMessage.revoked(key: -5, transaction: r, origin: .store)
        #expect(OutboxV1Migration.facts(kind: .revocation, key: -5, transactionID: r.id, message: revoked.json).message(key: -5)?.json
                == revoked.json)
    }

    @Test("absent fields keep their defaults")
    func defaults() {
        let m = read(Messages.purchase(key: 1, transaction: transaction(product: "p"), origin: .game, alreadyOwned: false))
        #expect(m.clickKey == nil)
        #expect(!m.alreadyOwned)
        #expect(m.origin == .game)
        let empty = read(Array(#"{"type":"7"}"#.utf8), transactionID: "u:77")
        #expect(empty.productID == "" && empty.kind == .consumable && empty.origin == .game)
        #expect(empty.originalID == "77" && empty.transaction.id == "77")
    }

    @Test("only top-level fields count: not a name inside a nested value or a string")
    func topLevelOnly() {
        let text = #"{"offer":{"productID":"fake","alreadyOwned":true,"x":[1,{"kind":"k"}]},"note":"\"productID\":\"fake\"","#
            + #""productID":"real","alreadyOwned":false,"kind":"consumable"}"#
        let m = read(Array(text.utf8))
        #expect(m.productID == "real")
        #expect(!m.alreadyOwned)
        #expect(m.kind == .consumable)
    }

    @Test("a damaged record reads as empty from the damage on", arguments: [
        #"{"productID":"p","kind""#, #"{"productID":"p","kind":"#, #"{"productID":"p" "kind":"c"}"#,
        #"{"productID":"p","kind":{"#, #"{"productID":"p","kind":"c"#,
    ])
    func damaged(_ text: String) {
        let m = read(Array(text.utf8))
        #expect(m.productID == "p")
        #expect(m.kind == .consumable)
    }

    @Test("garbage never traps and yields the defaults", arguments: ["", "{", "}", "[1]", #"{""#, #"{"a"#, "{\"\\"])
    func garbage(_ text: String) {
        let m = read(Array(text.utf8))
        #expect(m.productID == "" && m.kind == .consumable && !m.alreadyOwned && m.clickKey == nil)
    }

    @Test("a failure or revocation record whose text is not what the writer makes reads as edited, with its product")
    func edited() {
        let success = Messages.purchase(key: 42, transaction: transaction(product: "coins_500"), origin: .game, alreadyOwned: false)
        #expect(OutboxV1Migration.facts(kind: .failure, key: 42, transactionID: "", message: success) == .edited(productID: "coins_500"))
        #expect(OutboxV1Migration.facts(kind: .revocation, key: 42, transactionID: "2000000000000007", message: success)
                == .edited(productID: "coins_500"))
        let failure = BridgeMessage.purchaseFailed(key: 42, productID: "coins_100", failure: .cancelled, detail: "d").json
        #expect(OutboxV1Migration.facts(kind: .failure, key: 43, transactionID: "", message: failure) == .edited(productID: "coins_100"),
                "a failure moved to another key")
    }

    @Test("agrees with the full parser on 2,000 generated objects")
    func agreesWithParser() throws {
        var rng = SystemRandomNumberGenerator()
        let names = ["productID", "originalTransactionID", "kind", "origin", "clickKey", "alreadyOwned", "other", "jws"]
        for _ in 0..<2_000 {
            let bytes = JSONFieldsTests.randomObject(names: names, using: &rng)
            let full = try JSONParser.parse(bytes: bytes)
            let m = read(bytes)
            #expect(m.productID == (full["productID"]?.stringValue ?? ""))
            #expect(m.originalID == (full["originalTransactionID"]?.stringValue ?? "2000000000000007"))
            #expect(m.kind == (full["kind"]?.stringValue.flatMap(ProductKind.init(rawValue:)) ?? .consumable))
            // A word that is not an origin (an edit) reads as the default, as a missing one does.
            #expect(m.origin == (full["origin"]?.stringValue.flatMap(PurchaseOrigin.init(rawValue:)) ?? .game))
            #expect(m.alreadyOwned == (full["alreadyOwned"]?.boolValue ?? false))
            #expect(m.clickKey == full["clickKey"]?.stringValue.flatMap { Int64($0) })
            #expect(m.transaction.jws == full["jws"]?.stringValue)
        }
    }
}
