@testable import IAPCore
import Testing

/// The one-pass reader of a stored result's fields (read at every open for
/// each held record, C11) against the full JSON parser.
@Suite("Stored message fields")
struct StoredMessageTests {
    private func transaction(product: String) -> StoreTransaction {
        StoreTransaction(id: "2000000000000007", originalID: "2000000000000005", productID: product,
                         kind: .nonConsumable, purchaseDateMs: 1_700_000_000_000, expiresDateMs: nil,
                         revocationDateMs: nil, revocationReason: nil, price: "0.99", currency: "USD", quantity: 1,
                         token: nil, verified: true, jws: "a.b.c", environment: "simulator", isUpgraded: false,
                         familyShared: false)
    }

    @Test("reads what Messages.purchase wrote", arguments: ["remove_ads", "quote \" back \\ slash", "é😀 \u{01}\n"])
    func readsPurchase(_ product: String) {
        let bytes = Messages.purchase(key: 42, transaction: transaction(product: product), origin: "store",
                                      alreadyOwned: true, clickKey: 17)
        let m = StoredMessage(bytes)
        #expect(m.productID == product)
        #expect(m.originalTransactionID == "2000000000000005")
        #expect(m.kind == "nonConsumable")
        #expect(m.origin == "store")
        #expect(m.alreadyOwned)
        #expect(m.clickKey == 17)
    }

    @Test("absent fields keep their defaults")
    func defaults() {
        let m = StoredMessage(Messages.purchase(key: 1, transaction: transaction(product: "p"), origin: "game", alreadyOwned: false))
        #expect(m.clickKey == nil)
        #expect(!m.alreadyOwned)
        #expect(m.origin == "game")
        let empty = StoredMessage(Array(#"{"type":"7"}"#.utf8))
        #expect(empty.productID == "" && empty.kind == nil && empty.origin == "game" && empty.originalTransactionID == nil)
    }

    @Test("only top-level fields count: not a name inside a nested value or a string")
    func topLevelOnly() {
        let text = #"{"offer":{"productID":"fake","alreadyOwned":true,"x":[1,{"kind":"k"}]},"note":"\"productID\":\"fake\"","#
            + #""productID":"real","alreadyOwned":false,"kind":"consumable"}"#
        let m = StoredMessage(Array(text.utf8))
        #expect(m.productID == "real")
        #expect(!m.alreadyOwned)
        #expect(m.kind == "consumable")
    }

    @Test("a damaged record reads as empty from the damage on", arguments: [
        #"{"productID":"p","kind""#, #"{"productID":"p","kind":"#, #"{"productID":"p" "kind":"c"}"#,
        #"{"productID":"p","kind":{"#, #"{"productID":"p","kind":"c"#,
    ])
    func damaged(_ text: String) {
        let m = StoredMessage(Array(text.utf8))
        #expect(m.productID == "p")
        #expect(m.kind == nil)
    }

    @Test("garbage never traps and yields the defaults", arguments: ["", "{", "}", "[1]", #"{""#, #"{"a"#, "{\"\\"])
    func garbage(_ text: String) {
        let m = StoredMessage(Array(text.utf8))
        #expect(m.productID == "" && m.kind == nil && !m.alreadyOwned && m.clickKey == nil)
    }

    @Test("agrees with the full parser on 2,000 generated objects")
    func agreesWithParser() throws {
        var rng = SystemRandomNumberGenerator()
        let names = ["productID", "originalTransactionID", "kind", "origin", "clickKey", "alreadyOwned", "other", "jws"]
        for _ in 0..<2_000 {
            let bytes = JSONFieldsTests.randomObject(names: names, using: &rng)
            let full = try JSONParser.parse(bytes: bytes)
            let m = StoredMessage(bytes)
            #expect(m.productID == (full["productID"]?.stringValue ?? ""))
            #expect(m.originalTransactionID == full["originalTransactionID"]?.stringValue)
            #expect(m.kind == full["kind"]?.stringValue)
            #expect(m.origin == (full["origin"]?.stringValue ?? "game"))
            #expect(m.alreadyOwned == (full["alreadyOwned"]?.boolValue ?? false))
            #expect(m.clickKey == full["clickKey"]?.stringValue.flatMap { Int64($0) })
        }
    }
}
