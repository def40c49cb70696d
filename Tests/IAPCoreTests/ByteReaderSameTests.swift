@testable import IAPCore
import Testing

/// `ByteReader.str32(orSame:readAt:)`: a string equal to the one read before
/// it comes back as that string; anything else is read as `str32` reads it,
/// and damage reads as nothing.
@Suite struct ByteReaderSameTests {
    static func pair(_ a: String, _ b: String) -> [UInt8] {
        var w = ByteWriter()
        w.str32(a)
        w.str32(b)
        return w.out
    }

    @Test func equalAndDifferentStrings() {
        let cases: [(String, String)] = [
            ("2000000000000001", "2000000000000001"),  // a first purchase: its own original
            ("2000000000000002", "2000000000000001"),  // same length, one byte apart
            ("2000000000000001", "200000000000000"),   // a prefix
            ("2000000000000001", "20000000000000010"), // longer
            ("", ""), ("", "x"), ("x", ""),
            ("é😀 \"q\"", "é😀 \"q\""), ("é😀", "é😁"),
            (String(repeating: "7", count: 40), String(repeating: "7", count: 40)),
        ]
        for (a, b) in cases {
            var r = ByteReader(Self.pair(a, b))
            let at = r.pos + 4
            let first = r.str32()
            #expect(first == a)
            #expect(r.str32(orSame: first ?? "", readAt: at) == b, "\(a) then \(b)")
            #expect(r.remaining == 0)
        }
    }

    /// A length past the end, or a string that is not UTF-8, reads as nil
    /// whether or not it matches.
    @Test func damage() {
        var bytes = Self.pair("2000000000000001", "2000000000000001")
        bytes.removeLast()
        var r = ByteReader(bytes)
        let at = r.pos + 4
        let first = r.str32()!
        #expect(r.str32(orSame: first, readAt: at) == nil)

        var w = ByteWriter()
        w.str32("ab")
        w.u32(2)
        w.u8(0xC3)
        w.u8(0x28)  // not UTF-8
        var bad = ByteReader(w.out)
        let at2 = bad.pos + 4
        let ab = bad.str32()!
        #expect(bad.str32(orSame: ab, readAt: at2) == nil)
    }
}
