import Foundation
import IAPBridge
import IAPCore
import Testing

/// One test per crash the fuzzers found (docs/HARDENING.md lists them); the
/// crashing inputs themselves are replayed by scripts/fuzz.sh from
/// Fuzz/regressions/<target>/.
@Suite("Fuzz regressions")
struct FuzzRegressionTests {
    @Test("catalog: a huge _timeRate no longer overflows the simulated clock (fuzz target catalog)")
    func hugeTimeRate() throws {
        let s = Scratch("timerate")
        for rate in ["9223372036854775807", "1e18", "4611686018427387904"] {
            let catalog = s.path + "/rate.storekit"
            write(catalog, catalogJSON([("coins", "Coins", "")], settings: ["_timeRate": .number(rate)]))
            let b = try CBridge.open(s.config(catalog: catalog))
            let key = try b.buy("coins")
            let now = try b.simulator(#"{"op":"clock"}"#)["now"]?.int64Value
            #expect(now != nil && now! > 0 && now! <= 253_402_300_799_999, "clock saturates at the end of year 9999")
            let sevens = b.drain().filter { $0["type"]?.stringValue == "7" }
            #expect(sevens.map { $0["key"]?.stringValue } == [String(key)])
            #expect(b.confirm(key) == 0)
            _ = try b.simulator(#"{"op":"advance","seconds":3153600000}"#)
            b.close()
        }
    }
}

extension FuzzRegressionTests {
    /// A put payload as format version 1 wrote it (read now through OutboxV1Migration).
    static func putPayload(id: UInt64, key: Int64, message: String) -> [UInt8] {
        var p: [UInt8] = [0x01]
        for i in 0..<8 { p.append(UInt8((id >> (8 * UInt64(i))) & 0xff)) }
        for i in 0..<8 { p.append(UInt8((UInt64(bitPattern: key) >> (8 * UInt64(i))) & 0xff)) }
        p.append(2)            // kind: failure (no transaction)
        p += [0, 0]            // empty transaction ID
        let m = Array(message.utf8)
        for i in 0..<4 { p.append(UInt8((UInt32(m.count) >> (8 * UInt32(i))) & 0xff)) }
        return p + m
    }

    @Test("outbox: a checksum-valid record with an ID near 2^64 is damage, not a trap at the next purchase (fuzz target outbox)")
    func hugeRecordID() throws {
        let s = Scratch("bigid")
        try FileManager.default.createDirectory(atPath: s.dataDir, withIntermediateDirectories: true)
        var file: [UInt8] = []
        // A failure as format 1 wrote it (a failure record is re-delivered only
        // as what the SDK's writer makes of its fields: OutboxV1Migration).
        let good = #"{"type":"7","key":"5","productID":"coins_100","result":"1","resultName":"cancelled"}"#
        RecordFrame.encode(Self.putPayload(id: 1, key: 5, message: good), into: &file)
        RecordFrame.encode(Self.putPayload(id: UInt64.max - 1, key: 6, message: good), into: &file)
        #expect(OutboxEntry.decode(Self.putPayload(id: UInt64.max - 1, key: 6, message: good)) == nil)
        #expect(OutboxEntry.decode(Self.putPayload(id: 0, key: 6, message: good)) == nil)
        #expect(OutboxEntry.decode(Self.putPayload(id: 1, key: 6, message: good)) != nil)
        write(s.dataDir + "/" + Outbox.fileName, bytes: file)
        #expect(contents(s.dataDir + "/" + Outbox.fileName) == file)

        let b = try CBridge.open(s.config())
        let messages = b.drain()
        #expect(messages.contains { $0["type"]?.stringValue == "outbox_damaged" }, "the bad record is reported")
        #expect(messages.filter { $0["type"]?.stringValue == "7" }.map { $0["key"]?.stringValue } == ["5"], "the good one survives")
        for _ in 0..<3 { try b.buy("coins_100") }  // trapped here: nextID overflowed
        #expect(b.drain().filter { $0["type"]?.stringValue == "7" }.count == 3)
        b.close()
    }
}
