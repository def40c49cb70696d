import Foundation
import IAPCore
import Testing

/// Regression tests for the outbox's recovery and commit rules, one bug each.
@Suite("Outbox recovery")
struct OutboxRecoveryTests {
    /// An outbox with `n` unconfirmed results; returns the frame starts.
    static func fill(_ s: Scratch, _ n: Int) throws -> [Int] {
        mkdir(s.dataDir, 0o700)
        let (box, _) = try Outbox.open(directory: s.dataDir)
        for i in 1...n { _ = try box.put(key: Int64(i), kind: .purchase, transactionID: "t\(i)", facts: .sample(i)) }
        box.close()
        let bytes = s.read(s.outboxPath)
        var starts: [Int] = []
        var pos = 0
        while pos < bytes.count {
            starts.append(pos)
            pos += RecordFrame.headerSize + (Int(bytes[pos + 4]) | Int(bytes[pos + 5]) << 8)
        }
        return starts
    }

    @Test("a bit flipped in the length of the last record is damage, reported, not a torn tail dropped in silence")
    func lastRecordLengthFlip() throws {
        let s = Scratch()
        let starts = try Self.fill(s, 3)
        var bytes = s.read(s.outboxPath)
        bytes[starts[2] + 5] ^= 0x01     // length + 256: looks cut short
        s.write(s.outboxPath, bytes)
        let (box, report) = try Outbox.open(directory: s.dataDir)
        #expect(box.liveRecords.map(\.key) == [1, 2])
        #expect(report.damagedCopy != nil, "the last record was synced and acknowledged: losing it must be reported")
        #expect(report.droppedTailBytes == bytes.count - starts[2])
        box.close()
    }

    @Test("a torn tail (an append cut short) is dropped silently and cut off the file; every record before it is kept")
    func tornTail() throws {
        let s = Scratch()
        let starts = try Self.fill(s, 3)
        let bytes = s.read(s.outboxPath)
        for cut in [starts[2] + 1, starts[2] + 7, starts[2] + 12, bytes.count - 1] {
            s.write(s.outboxPath, Array(bytes[0..<cut]))
            let (box, report) = try Outbox.open(directory: s.dataDir)
            #expect(box.liveRecords.map(\.key) == [1, 2])
            #expect(report.damagedCopy == nil && report.droppedTailBytes == cut - starts[2])
            box.close()
            #expect(s.read(s.outboxPath).count == starts[2])
        }
        // Zeros after the last record (a file extended, its data never written).
        s.write(s.outboxPath, Array(bytes[0..<starts[2]]) + [UInt8](repeating: 0, count: 300))
        let (box, report) = try Outbox.open(directory: s.dataDir)
        #expect(box.liveRecords.count == 2 && report.damagedCopy == nil)
        box.close()
    }

    @Test("a compaction killed before its rename leaves the old log whole; the leftover is removed; appends go to the new file after one")
    func compactionLeftovers() throws {
        let s = Scratch()
        _ = try Self.fill(s, 3)
        let before = s.read(s.outboxPath)
        s.write(s.outboxPath + ".tmp", [1, 2, 3])          // what a kill mid-compaction leaves
        var (box, report) = try Outbox.open(directory: s.dataDir)
        #expect(report.damagedCopy == nil && box.liveRecords.count == 3)
        #expect(!POSIX.exists(s.outboxPath + ".tmp"))
        #expect(s.read(s.outboxPath) == before)
        box.confirm([box.liveRecords[0].id])
        _ = try box.flushConfirms()
        try box.compact()
        _ = try box.put(key: 4, kind: .purchase, transactionID: "t4", facts: .sample(4))
        box.close()
        (box, report) = try Outbox.open(directory: s.dataDir)
        #expect(box.liveRecords.map(\.key) == [2, 3, 4], "the result written after the compaction is in the new file")
        #expect(box.hasTombstone(transaction: "t1", flavor: .transaction))
        box.close()
    }

    @Test("a confirmed transaction may be finished only once flushConfirms made the confirm durable")
    func finishOnlyAfterFlush() throws {
        let s = Scratch()
        _ = try Self.fill(s, 2)
        let (box, _) = try Outbox.open(directory: s.dataDir)
        let r = box.liveRecords
        box.confirm([r[0].id])
        #expect(box.isFinishPending(transaction: "t1"))
        #expect(box.hasTombstone(transaction: "t1", flavor: .transaction))
        // A result written now carries the confirm in the same synced write.
        _ = try box.put(key: 3, kind: .purchase, transactionID: "t3", facts: .sample(3))
        #expect(box.isFinishPending(transaction: "t1"), "finishing is still the flush's job")
        #expect(try box.flushConfirms() == ["t1"])
        #expect(!box.isFinishPending(transaction: "t1"))
        #expect(try box.flushConfirms().isEmpty)
        box.close()
        let (again, _) = try Outbox.open(directory: s.dataDir)
        #expect(again.liveRecords.map(\.key) == [2, 3])
        again.close()
    }

    @Test("every damaged open keeps its own copy")
    func copiesNeverCollide() throws {
        let s = Scratch()
        let starts = try Self.fill(s, 2)
        let original = s.read(s.outboxPath)
        var copies: [String] = []
        for _ in 0..<3 {
            var bytes = original
            bytes[starts[0] + RecordFrame.headerSize] ^= 0x40
            s.write(s.outboxPath, bytes)
            let (box, report) = try Outbox.open(directory: s.dataDir)
            copies.append(try #require(report.damagedCopy))
            box.close()
        }
        #expect(Set(copies).count == 3)
        #expect(copies.allSatisfy { POSIX.exists($0) })
    }
}
