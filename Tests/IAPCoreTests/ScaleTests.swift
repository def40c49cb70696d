import Foundation
import IAPCore
import Testing

/// Regressions the benchmark (scripts/bench.sh) found at scale: histories
/// far longer than the flow tests make.
@Suite("Scale")
struct ScaleTests {
    @Test("a history of 70,000 confirmed transactions is forgotten without exceeding the frame limit, and stays forgotten")
    func forgetLongHistory() throws {
        let env = TestEnv()
        try env.makeDataDir()
        // 70,000 tombstones of 19-byte IDs: one forget frame would need
        // ~1.5 MB, over RecordFrame.maxPayload (1 MB).
        let count = 70_000
        var file: [UInt8] = []
        for i in 0..<count {
            RecordFrame.encode(OutboxEntry.tombstone(txn: String(2_000_000_000_000_000_001 + Int64(i)), flavor: .transaction).encoded(), into: &file)
        }
        try POSIX.replaceFile(env.dataDir + "/" + Outbox.fileName, with: file)

        let (box, report) = try Outbox.open(directory: env.dataDir)
        #expect(!report.isDamaged)
        #expect(box.tombstoneCount == count)
        try box.forgetFinished(stillUnfinished: ["2000000000000000001"])
        #expect(box.tombstoneCount == 1)
        box.close()

        let (again, report2) = try Outbox.open(directory: env.dataDir)
        #expect(!report2.isDamaged, "the forget frames must be valid frames")
        #expect(again.tombstoneCount == 1, "every forgotten tombstone stays forgotten after a reopen")
        again.close()
    }
}
