@testable import IAPCore
import Testing

/// StoreTransaction keeps its fields behind one reference (copy-on-write):
/// it must still behave as a value. A change to a copy never shows in the
/// original (or in a copy another thread holds), equality compares fields,
/// and every field reads back what was set.
@Suite("StoreTransaction is a value")
struct StoreTransactionValueTests {
    static func sample(_ id: String = "1000000001") -> StoreTransaction {
        StoreTransaction(id: id, originalID: id, productID: "coins_100", kind: .consumable, purchaseDateMs: 1_700_000_000_000,
                         price: "0.99", currency: "USD", environment: "simulator", storefront: "USA")
    }

    @Test("a change to a copy leaves the original as it was, field by field")
    func copiesAreIndependent() {
        let original = Self.sample()
        var copy = original
        #expect(copy == original)
        copy.verified = false
        copy.price = "1.99"
        copy.expiresDateMs = 42
        copy.offer = TransactionOffer(kind: .introductory, id: nil, paymentMode: .freeTrial, period: nil)
        copy.familyShared = true
        #expect(original.verified == true && original.price == "0.99" && original.expiresDateMs == nil)
        #expect(original.offer == nil && original.familyShared == false)
        #expect(copy.verified == false && copy.price == "1.99" && copy.expiresDateMs == 42)
        #expect(copy != original)
        // Back to the original's fields: equal again, though not the same box.
        copy.verified = true
        copy.price = "0.99"
        copy.expiresDateMs = nil
        copy.offer = nil
        copy.familyShared = false
        #expect(copy == original)
    }

    @Test("copies held by other threads while one thread changes its own: no thread sees another's change")
    func copiesAcrossThreads() async {
        let shared = Self.sample()
        let seen = await withTaskGroup(of: Bool.self) { g -> [Bool] in
            for i in 0..<8 {
                g.addTask {
                    var mine = shared
                    var ok = true
                    for n in 0..<2_000 {
                        mine.quantity = Int64(i * 10_000 + n)
                        ok = ok && mine.quantity == Int64(i * 10_000 + n) && shared.quantity == 1
                    }
                    return ok
                }
            }
            var all: [Bool] = []
            for await ok in g { all.append(ok) }
            return all
        }
        #expect(seen == Array(repeating: true, count: 8))
        #expect(shared == Self.sample())
    }
}
