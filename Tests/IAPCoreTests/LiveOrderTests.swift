@testable import IAPCore
import Testing

/// The outbox lists its live records oldest first from IDs kept in the
/// order they were added (no sort): through removals, the dropping of the
/// removed IDs once they outnumber the live, and a reopen.
@Suite struct LiveOrderTests {
    @Test("live records oldest first, each once, through confirms, drops of removed IDs and a reopen")
    func oldestFirstThroughRemovals() throws {
        let env = TestEnv()
        try env.makeDataDir()
        var (box, _) = try Outbox.open(directory: env.dataDir)
        var expected: [UInt64] = []
        var seed: UInt64 = 12_345
        func next() -> UInt64 {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return seed >> 33
        }
        // Rounds of adds and confirms: most records leave, so the removed
        // IDs pass twice the live count several times.
        var txn = 1_000
        for round in 0..<6 {
            for _ in 0..<900 {
                txn += 1
                let r = try box.put(key: Int64(txn), kind: .purchase, transactionID: String(txn), facts: .sample(txn))
                expected.append(r.id)
            }
            var kept: [UInt64] = []
            var gone: [UInt64] = []
            for id in expected { if next() % 4 == 0 { kept.append(id) } else { gone.append(id) } }
            box.confirm(gone)
            _ = try box.flushConfirms()
            expected = kept
            #expect(box.liveRecords.map(\.id) == expected, "round \(round)")
        }
        box.close()
        (box, _) = try Outbox.open(directory: env.dataDir)
        #expect(box.liveRecords.map(\.id) == expected, "after a reopen")
        #expect(box.liveCount == expected.count && !expected.isEmpty)
        box.close()
    }

    @Test("a record whose ID was edited to the top of the range is refused when read: the next IDs do not wrap onto live records")
    func editedTopID() throws {
        let env = TestEnv()
        try env.makeDataDir()
        var (box, _) = try Outbox.open(directory: env.dataDir)
        let first = try box.put(key: 1, kind: .purchase, transactionID: "100", facts: .sample(1))
        box.close()
        for id in [UInt64.max, 1 << 62] {
            let forged = OutboxRecord(id: id, key: 2, kind: .purchase, transactionID: "200", facts: .sample(2))
            try ForgeryTests.append(env, [OutboxEntry.put(forged)])
        }
        let report: Outbox.OpenReport
        (box, report) = try Outbox.open(directory: env.dataDir)
        #expect(report.undecodableRecords == 2)
        #expect(box.liveRecords.map(\.id) == [first.id])
        let next = try box.put(key: 3, kind: .purchase, transactionID: "300", facts: .sample(3))
        #expect(next.id > first.id && next.id < 1 << 62)
        box.close()
        (box, _) = try Outbox.open(directory: env.dataDir)
        #expect(box.liveRecords.map(\.id) == [first.id, next.id])
        box.close()
    }
}
