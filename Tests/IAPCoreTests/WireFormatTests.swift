import Foundation
@testable import IAPCore
import Testing

/// The bytes the SDK writes by hand, checked against references written
/// independently of the fast paths that produce them.
@Suite("Wire formats written by hand")
struct WireFormatTests {
    /// CRC-32C, bit by bit (the reflected Castagnoli polynomial).
    static func referenceCRC32C(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for b in bytes {
            crc ^= UInt32(b)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
        }
        return ~crc
    }

    static func le32(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }

    @Test("a record frame is \"IAPr\", the length and the CRC-32C of length and payload, little-endian, then the payload; frames append", arguments: [0, 1, 7, 8, 9, 300, 5_000])
    func frameLayout(_ size: Int) {
        let payload = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        let earlier: [UInt8] = [1, 2, 3]
        var out = earlier
        RecordFrame.encode(payload, into: &out)
        let len = WireFormatTests.le32(UInt32(size))
        let expected = earlier + Array("IAPr".utf8) + len + WireFormatTests.le32(WireFormatTests.referenceCRC32C(len + payload)) + payload
        #expect(out == expected)
        #expect(RecordFrame.scan(Array(out.dropFirst(3))).records == [payload])
    }

    @Test("many frames into one buffer: each one whole, in order (the buffer grows by doubling, never loses a byte)")
    func framesAppend() {
        var out: [UInt8] = []
        let payloads = (0..<500).map { i in [UInt8](repeating: UInt8(truncatingIfNeeded: i), count: i % 37) }
        for p in payloads { RecordFrame.encode(p, into: &out) }
        let scan = RecordFrame.scan(out)
        #expect(scan.records == payloads)
        #expect(scan.isClean)
    }

    @Test("the record codec's integers are little-endian and its strings length-prefixed, byte for byte")
    func byteWriter() {
        var w = ByteWriter()
        w.u8(0xAB)
        w.u16(0x0102)
        w.u32(0x0304_0506)
        w.u64(0x0708_090A_0B0C_0D0E)
        w.i64(-2)
        w.str16("é1")
        w.str32("")
        w.str32("xy")
        let expected: [UInt8] = [0xAB, 0x02, 0x01, 0x06, 0x05, 0x04, 0x03, 0x0E, 0x0D, 0x0C, 0x0B, 0x0A, 0x09, 0x08, 0x07]
            + [0xFE] + [UInt8](repeating: 0xFF, count: 7)
            + [3, 0, 0xC3, 0xA9, 0x31] + [0, 0, 0, 0] + [2, 0, 0, 0, 0x78, 0x79]
        #expect(w.out == expected)
        // str16 keeps at most 65,535 bytes.
        var long = ByteWriter()
        long.str16(String(repeating: "a", count: 70_000))
        #expect(long.out.count == 2 + 0xFFFF && long.out[0] == 0xFF && long.out[1] == 0xFF)
    }

    @Test("a purchase token's UUID text is Foundation's, and reads back", arguments: [0, 1, 1_700_000_000_123, Int64.max])
    func tokenText(_ key: Int64) throws {
        for token in [PurchaseToken(key: key), PurchaseToken(key: key, install: 0x2AB_CDEF)] {
            let b = token.bytes
            let uuid = UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]))
            #expect(token.uuidString == uuid.uuidString)
            #expect(PurchaseToken(uuidString: token.uuidString)?.bytes == b)
            #expect(PurchaseToken(uuidString: token.uuidString.lowercased())?.bytes == b)
            // Kept in two words: the bytes, key, install, equality and hash
            // survive a round trip through its bytes and through a record's
            // codec, which reads it in place at any offset.
            let back = try #require(PurchaseToken(bytes: b))
            #expect(back == token && back.hashValue == token.hashValue && back.key == key && back.install == token.install)
            for pad in 0..<9 {
                var w = ByteWriter()
                for _ in 0..<pad { w.u8(0xEE) }
                w.token(token)
                w.u8(0x77)
                var r = ByteReader(w.out, pad..<(w.out.count - 1))
                #expect(r.token() == token && r.remaining == 0, "at offset \(pad)")
                #expect(r.token() == nil, "no 16 bytes left")
            }
        }
        #expect(PurchaseToken(bytes: [UInt8](repeating: 1, count: 15)) == nil)
        #expect(PurchaseToken(key: key) != PurchaseToken(key: key, install: 0x2AB_CDEF))
    }

    @Test("UUID text that is not 16 bytes of hex reads as no token", arguments: [
        "", "-", "0123456789ABCDEF0123456789ABCDE", "0123456789ABCDEF0123456789ABCDEF0",
        "0123456789ABCDEF0123456789ABCDEF01", "0123456789ABCDEF0123456789ABCDEG", "01234567-89AB-CDEF-0123-456789ABCDE ",
    ])
    func badTokenText(_ text: String) {
        #expect(PurchaseToken(uuidString: text) == nil)
    }

    @Test("UUID text with dashes anywhere, or none, reads as the same 16 bytes")
    func dashes() {
        let plain = "0123456789abcdef0123456789ABCDEF"
        let expected: [UInt8] = [0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF, 0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF]
        #expect(PurchaseToken(uuidString: plain)?.bytes == expected)
        #expect(PurchaseToken(uuidString: "01234567-89ab-cdef-0123-456789ABCDEF")?.bytes == expected)
        #expect(PurchaseToken(uuidString: "--0123456789abcdef0123456789ABCDEF--")?.bytes == expected)
    }

    @Test("strings longer than the writer's first buffer, with and without escapes, survive a write and a parse")
    func longStrings() throws {
        let plain = String(repeating: "product.id-", count: 300)
        let escaped = String(repeating: "a\"b\\c\u{01}", count: 400)
        var w = JSONObjectWriter()
        w.string("p", plain)
        w.string("e", escaped)
        w.string("z", "")
        let v = try JSONParser.parse(bytes: w.finish())
        #expect(v["p"]?.stringValue == plain)
        #expect(v["e"]?.stringValue == escaped)
        #expect(v["z"]?.stringValue == "")
    }

    /// The escape check as written before it read eight bytes at a time.
    private static func needsEscapeByBytes(_ b: [UInt8]) -> Bool {
        b.contains { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C || $0 == 0x7F }
    }

    @Test("the word-at-a-time escape check agrees with a byte-by-byte one: every byte value at every place of 0-24 byte strings, and 20,000 random ones")
    func escapeCheck() {
        var cases: [[UInt8]] = []
        for length in 0...24 {
            // Padding below, at and above every boundary the check tests.
            for pad: UInt8 in [0x41, 0x21, 0x23, 0x5B, 0x5D, 0x7E, 0x80, 0xFF] {
                let base = [UInt8](repeating: pad, count: length)
                cases.append(base)
                for at in 0..<length {
                    for v in 0...255 {
                        var b = base
                        b[at] = UInt8(v)
                        cases.append(b)
                    }
                }
            }
        }
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            let n = Int(rng.next() % 40)
            // Mostly printable ASCII and UTF-8 bytes, now and then anything.
            cases.append((0..<n).map { _ in rng.next() % 8 == 0 ? UInt8(truncatingIfNeeded: rng.next()) : UInt8(0x20 + rng.next() % 0x5F) | (rng.next() % 4 == 0 ? 0x80 : 0) })
        }
        var disagreements = 0
        for b in cases {
            let fast = b.withUnsafeBufferPointer { JSONBuffer.needsEscape($0) }
            if fast != WireFormatTests.needsEscapeByBytes(b) {
                disagreements += 1
                if disagreements <= 3 { Issue.record("escape check of \(b): \(fast)") }
            }
        }
        #expect(disagreements == 0)
        #expect(cases.count > 400_000)
    }

    @Test("an integer sent as a JSON string (keys) is Swift's text in quotes: 0, ±1, powers of ten and neighbours, Int64.min and .max")
    func quotedIntegers() throws {
        for v in JSONTests.edgeIntegers {
            var w = JSONObjectWriter()
            w.intString("key", v)
            w.int("n", v)
            let text = String(decoding: w.finish(), as: UTF8.self)
            #expect(text == "{\"key\":\"\(v)\",\"n\":\(v)}")
        }
    }

    @Test("a field reads as true, false or null only when it is exactly that literal")
    func literals() {
        let o = JSONFields(Array(#"{"t":true,"f":false,"n":null,"s":"true","x":trues,"y":fals,"z":0}"#.utf8))
        #expect(o["t"]?.boolValue == true && o["t"]?.isNull == false)
        #expect(o["f"]?.boolValue == false)
        #expect(o["n"]?.isNull == true && o["n"]?.boolValue == nil)
        for name: StaticString in ["s", "z"] {
            #expect(o[name]?.boolValue == nil && o[name]?.isNull == false)
        }
        // Not the writer's shape past "x": read up to there, no further.
        #expect(o["x"]?.boolValue == nil)
        #expect(o["y"] == nil || o["y"]?.boolValue == nil)
    }

    @Test("a JSON writer is a value: a copy written to after the copy leaves the original as it was, both ways")
    func writerIsAValue() throws {
        var a = JSONObjectWriter()
        a.string("shared", "x")
        var b = a
        b.string("b", String(repeating: "y", count: 2_000))  // past the first buffer: b grows
        a.int("a", 1)
        var c = a
        c.int("c", 3)  // same capacity: c takes memory of its own
        a.bool("a2", true)
        #expect(String(decoding: a.finish(), as: UTF8.self) == #"{"shared":"x","a":1,"a2":true}"#)
        #expect(try JSONParser.parse(bytes: b.finish())["b"]?.stringValue?.count == 2_000)
        #expect(String(decoding: c.finish(), as: UTF8.self) == #"{"shared":"x","a":1,"c":3}"#)
    }
}
