@testable import IAPCore
import Testing

/// HeldRecords finds the store's unfinished list in the order the store
/// re-delivered its transactions, and hashes only what is out of that
/// order: whatever the order, the answer is the hashed lookup's.
@Suite("Held records at open")
struct HeldRecordsTests {
    static func transaction(_ id: String) -> StoreTransaction {
        StoreTransaction(id: id, originalID: id, productID: "coins_100", kind: .consumable, purchaseDateMs: 1_700_000_000_000,
                         price: "0.99", currency: "USD", environment: "simulator", storefront: "USA")
    }

    /// Holds one verified record per ID (key = its place), and an unverified
    /// one of `unverified`.
    static func held(_ ids: [String], unverified: String? = nil) -> (HeldRecords, [String: Int]) {
        let held = HeldRecords(capacity: ids.count + 1, confirmCalls: 0)
        var records = ids.enumerated().map { n, id in
            OutboxRecord(id: UInt64(n + 1), key: Int64(n + 1), kind: .purchase, transactionID: id,
                         facts: .purchase(transaction(id), origin: .game, alreadyOwned: false, clickKey: nil))
        }
        if let u = unverified {
            records.append(OutboxRecord(id: 99, key: 99, kind: .unverified, transactionID: Outbox.unverifiedTag(u),
                                        facts: .purchase(transaction(u), origin: .game, alreadyOwned: false, clickKey: nil)))
        }
        for r in records { held.hold(r, StoredPurchase(r)!) }
        var slots: [String: Int] = [:]
        for id in ids { slots[id] = held.slot(ofTransaction: id) }
        return (held, slots)
    }

    static func listed(_ held: HeldRecords, _ slots: [String: Int], reported: [String], unfinished: [String]) -> Set<String> {
        for id in reported { _ = held.noteReported(transaction(id), tag: TransactionTag(id, .transaction), unverified: false) }
        let listed = held.listedSlots(unfinished)
        return Set(slots.filter { listed[$0.value] }.keys)
    }

    @Test("listed in the order reported, in another order, with gaps and strangers: the same answer as a lookup")
    func listedWhateverTheOrder() {
        let ids = (1...40).map { String(2_000_000_000_000_000 + $0 * 7) }
        let cases: [(reported: [String], unfinished: [String])] = [
            (ids, ids),
            (ids, ids.reversed()),
            (ids, ids.enumerated().filter { $0.offset % 3 != 0 }.map(\.element)),
            (ids, ["1", "2"] + ids.prefix(10) + ["3"] + ids.suffix(10)),
            (Array(ids.prefix(20)), ids),
            ([], ids),
            (ids, []),
            (ids.shuffledForTest(seed: 7), ids),
        ]
        for (n, c) in cases.enumerated() {
            let (held, byID) = Self.held(ids)
            let got = Self.listed(held, byID, reported: c.reported, unfinished: c.unfinished)
            #expect(got == Set(c.unfinished).intersection(ids), "case \(n)")
        }
    }

    @Test("a numeric ID written another way is found by its tag, not by its text")
    func sameNumberOtherText() {
        let (held, byID) = Self.held(["1000"])
        let got = Self.listed(held, byID, reported: ["1000"], unfinished: ["01000"])
        #expect(TransactionTag("01000", .transaction) == TransactionTag("1000", .transaction) ? got == ["1000"] : got.isEmpty)
    }

    @Test("noteReported says whether a record of the transaction's own namespace is held")
    func heldNamespace() {
        let (held, _) = Self.held(["500"], unverified: "600")
        let t500 = Self.transaction("500"), t600 = Self.transaction("600")
        #expect(held.noteReported(t500, tag: TransactionTag("500", .transaction), unverified: false))
        #expect(!held.noteReported(t500, tag: TransactionTag("500", .transaction), unverified: true))
        #expect(held.noteReported(t600, tag: TransactionTag("600", .transaction), unverified: true))
        #expect(!held.noteReported(t600, tag: TransactionTag("600", .transaction), unverified: false))
        #expect(!held.noteReported(Self.transaction("700"), tag: TransactionTag("700", .transaction), unverified: false))
    }
}

extension Array {
    /// A fixed permutation (a seeded Fisher-Yates): the same every run.
    func shuffledForTest(seed: UInt64) -> [Element] {
        var out = self, s = seed
        for i in stride(from: out.count - 1, to: 0, by: -1) {
            s = s &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            out.swapAt(i, Int((s >> 33) % UInt64(i + 1)))
        }
        return out
    }
}
