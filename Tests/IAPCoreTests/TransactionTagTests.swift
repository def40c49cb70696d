import Foundation
import IAPCore
import Testing

/// The outbox keys its tombstones by transaction ID, stored as a number when
/// the ID is a canonical decimal (StoreKit's are) and as text otherwise. IDs
/// that only look alike must stay distinct, through replay, forget and
/// compaction.
@Suite("Transaction tags")
struct TransactionTagTests {
    static let ids = ["123", "0123", "00", "0", "18446744073709551615", "18446744073709551616",
                      "99999999999999999999", "1e5", "-5", "abc", "2000000000000000001", "٣"]

    static func fill(_ dir: String) throws -> Outbox {
        let (box, _) = try Outbox.open(directory: dir)
        var recordIDs: [UInt64] = []
        for (i, txn) in ids.enumerated() {
            recordIDs.append(try box.put(key: Int64(i + 1), kind: .purchase, transactionID: txn, facts: .sample(i + 1)).id)
        }
        // A revocation record for "123" too: same ID, other flavor.
        recordIDs.append(try box.put(key: 100, kind: .revocation, transactionID: "123", facts: .sample(100)).id)
        box.confirm(recordIDs)
        _ = try box.flushConfirms()
        return box
    }

    static func expectAll(_ box: Outbox, _ ids: [String], revocation: Bool) {
        for txn in ids { #expect(box.hasTombstone(transaction: txn, flavor: .transaction), "tombstone for \"\(txn)\"") }
        #expect(box.hasTombstone(transaction: "123", flavor: .revocation) == revocation)
        #expect(!box.hasTombstone(transaction: "1234", flavor: .transaction))
        #expect(!box.hasTombstone(transaction: "0123", flavor: .revocation))
        #expect(box.tombstoneCount == ids.count + (revocation ? 1 : 0))
    }

    @Test("IDs that only look alike keep separate tombstones through reopen and compaction")
    func distinctThroughReplayAndCompaction() throws {
        let env = TestEnv()
        try env.makeDataDir()
        var box = try Self.fill(env.dataDir)
        Self.expectAll(box, Self.ids, revocation: true)
        box.close()
        (box, _) = try Outbox.open(directory: env.dataDir)
        Self.expectAll(box, Self.ids, revocation: true)
        try box.compact()
        box.close()
        (box, _) = try Outbox.open(directory: env.dataDir)
        Self.expectAll(box, Self.ids, revocation: true)
        box.close()
    }

    @Test("forgetting finished transactions forgets exactly those, and the forget survives a reopen")
    func forgetExactly() throws {
        let env = TestEnv()
        try env.makeDataDir()
        try Self.fill(env.dataDir).close()
        var (box, _) = try Outbox.open(directory: env.dataDir)
        // Still unfinished at the store: "0123" and "18446744073709551616" (not "123", not the wrapped value).
        try box.forgetFinished(stillUnfinished: ["0123", "18446744073709551616"])
        // Revocation tombstones are not forgotten by this (they wait for their own finish).
        Self.expectAll(box, ["0123", "18446744073709551616"], revocation: true)
        box.close()
        (box, _) = try Outbox.open(directory: env.dataDir)
        Self.expectAll(box, ["0123", "18446744073709551616"], revocation: true)
        box.close()
    }
}
