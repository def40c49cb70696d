import IAPCore
import Testing

/// UTF8Text, the package's own UTF-8 check (the standard library's
/// `String(validating:as:)` needs iOS 18), against the standard library's:
/// both must accept exactly the same byte sequences and make the same string.
@Suite("UTF-8 validation (iOS 15)")
struct UTF8TextTests {
    /// The reference: the standard library on this OS (no availability on Linux).
    static func reference(_ b: [UInt8]) -> String? {
        if #available(macOS 15, iOS 18, tvOS 18, *) { return String(validating: b, as: UTF8.self) }
        Issue.record("the reference needs macOS 15 / iOS 18")
        return nil
    }

    static func agree(_ b: [UInt8]) -> Bool {
        UTF8Text.string(validating: b) == reference(b)
    }

    @Test("every sequence of one and two bytes")
    func oneAndTwoBytes() {
        var disagree: [[UInt8]] = []
        for x in 0...255 {
            if !Self.agree([UInt8(x)]) { disagree.append([UInt8(x)]) }
            for y in 0...255 where !Self.agree([UInt8(x), UInt8(y)]) { disagree.append([UInt8(x), UInt8(y)]) }
        }
        #expect(disagree.isEmpty, "first: \(disagree.prefix(5))")
    }

    @Test("every three-byte sequence with a lead byte of E0-EF, and of every class of bad lead")
    func threeBytes() {
        var disagree = 0, accepted = 0
        for x in [0x80, 0xC1, 0xC2, 0xDF, 0xE0, 0xE1, 0xEC, 0xED, 0xEE, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF] {
            for y in 0...255 {
                for z in 0...255 {
                    let b = [UInt8(x), UInt8(y), UInt8(z)]
                    if !Self.agree(b) { disagree += 1 }
                    if UTF8Text.string(validating: b) != nil { accepted += 1 }
                }
            }
        }
        #expect(disagree == 0)
        #expect(accepted > 10_000)  // the loop reached valid text, not only rejections
    }

    @Test("four-byte sequences: each lead F0-F4 with every second byte, the boundary cases of the rest")
    func fourBytes() {
        var disagree: [[UInt8]] = []
        let edges: [UInt8] = [0x00, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xFF]
        for x in UInt8(0xF0)...0xF7 {
            for y in 0...255 {
                for z in edges { for w in edges {
                    let b = [x, UInt8(y), z, w]
                    if !Self.agree(b) { disagree.append(b) }
                } }
            }
        }
        #expect(disagree.isEmpty, "first: \(disagree.prefix(5))")
        #expect(UTF8Text.string(validating: [0xF0, 0x9F, 0x98, 0x80]) == "😀")
        #expect(UTF8Text.string(validating: [0xF4, 0x90, 0x80, 0x80]) == nil)  // above U+10FFFF
        #expect(UTF8Text.string(validating: [0xED, 0xA0, 0x80]) == nil)        // a surrogate
        #expect(UTF8Text.string(validating: [0xC0, 0xAF]) == nil)              // overlong "/"
    }

    @Test("random text: valid strings, cut and damaged, at every offset")
    func randomText() {
        var rng = SystemRandomNumberGenerator()
        let samples = ["coins_100", "é", "ü€😀", "\u{0}nul", "日本語のテキスト", "a\u{10FFFF}b", ""]
        var disagree = 0
        for _ in 0..<3_000 {
            var b = Array((0..<Int.random(in: 1...6, using: &rng)).map { _ in samples.randomElement(using: &rng)! }.joined().utf8)
            if !b.isEmpty && Bool.random(using: &rng) { b.removeLast(Int.random(in: 0...min(3, b.count), using: &rng)) }
            if !b.isEmpty && Bool.random(using: &rng) { b[Int.random(in: 0..<b.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng) }
            if !Self.agree(b) { disagree += 1 }
            // Slices: the ArraySlice overload reads only its own range.
            if b.count > 2, UTF8Text.string(validating: b[1...]) != Self.reference(Array(b[1...])) { disagree += 1 }
        }
        #expect(disagree == 0)
    }
}
