import Foundation
import IAPCore
import Testing

/// An outbox a newer IAPBridge wrote (a game updated, then rolled back): whole
/// frames with good checksums this version cannot read. Nothing is lost, and
/// the game is told what it most likely is, not "damaged on disk" (an attack
/// on updates).
@Suite("An outbox from a newer version")
struct NewerOutboxTests {
    @Test("records of a kind this version does not know: every result it can read recovered, the report says a newer version may have written them")
    func unknownRecordKinds() throws {
        let env = TestEnv()
        var b = try env.open()
        _ = b.drain()
        let key = try b.buy("coins_100", 0)
        #expect(b.drainResults().map(\.keyValue) == [key])
        b.close()
        // Two frames of a future entry kind, checksums valid.
        var frames: [UInt8] = []
        RecordFrame.encode([0xF9, 1, 2, 3], into: &frames)
        RecordFrame.encode([0xFA], into: &frames)
        let path = env.dataDir + "/" + Outbox.fileName
        var bytes = try #require(try POSIX.readFile(path))
        bytes += frames
        try POSIX.replaceFile(path, with: bytes)

        b = try env.open()
        let ms = b.drain()
        let report = try #require(ms.first { $0["type"]?.stringValue == "outbox_damaged" })
        #expect(report["undecodableRecords"]?.int64Value == 2)
        let text = report["message"]?.stringValue ?? ""
        #expect(text.contains("newer version") && !text.contains("damaged on disk"), "\(text)")
        #expect(b.results(ms).map(\.keyValue) == [key], "the stored result is recovered")
        b.close()
    }
}
