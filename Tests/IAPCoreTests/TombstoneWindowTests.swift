import Foundation
import IAPCore
import Testing

@Suite("Tombstone window")
struct TombstoneWindowTests {
    @Test("finished transactions keep their tombstones up to the window, then the oldest go; unfinished ones always stay")
    func window() throws {
        let env = TestEnv()
        try POSIX.prepareDirectory(env.dataDir, role: "dataDir")
        let (box, _) = try Outbox.open(directory: env.dataDir)
        defer { box.close() }
        box.finishedTombstonesKept = 3
        var ids: [UInt64] = []
        for i in 1...6 {
            let r = try box.put(key: Int64(i), kind: .purchase, transactionID: "t\(i)", facts: .sample(i))
            ids.append(r.id)
        }
        box.confirm(ids)
        let finished = try box.flushConfirms()
        #expect(Set(finished) == Set((1...6).map { "t\($0)" }))
        #expect(box.tombstoneCount == 6)
        // The store reports t1..t5 finished; t6 is not (say its finish hung).
        box.noteFinished((1...5).map { "t\($0)" })
        #expect(box.tombstoneCount == 4, "window of 3 finished + the unfinished t6")
        for i in 3...6 { #expect(box.hasTombstone(transaction: "t\(i)", flavor: .transaction)) }
        for i in 1...2 { #expect(!box.hasTombstone(transaction: "t\(i)", flavor: .transaction)) }
        // A transaction reported finished twice counts once in the window.
        box.noteFinished(["t5", "t5", "t5"])
        for i in 3...6 { #expect(box.hasTombstone(transaction: "t\(i)", flavor: .transaction)) }
    }
}
