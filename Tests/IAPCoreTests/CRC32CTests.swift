import CIAPSupport
import Testing

/// The record CRC (iapc_crc32c) runs on the CPU's CRC32C instruction where
/// there is one: every path must give the bit-by-bit CRC-32C, at every
/// length and alignment, and when continued across pieces.
@Suite("CRC-32C")
struct CRC32CTests {
    static func bytes(_ n: Int, seed: UInt64) -> [UInt8] {
        var x = seed &* 0x9E37_79B9_7F4A_7C15 | 1
        return (0..<n).map { _ in
            x ^= x << 13; x ^= x >> 7; x ^= x << 17
            return UInt8(truncatingIfNeeded: x)
        }
    }

    @Test("lengths 0 to 300 at offsets 0 to 7, in one piece and in two: instruction, tables and reference agree")
    func everyLengthAndOffset() {
        print("CRC-32C: \(iapc_crc32c_uses_hardware() == 1 ? "the CPU's instruction" : "tables (no CRC32C instruction here)")")
        var wrong: [String] = []
        for n in 0...300 {
            let all = Self.bytes(n + 8, seed: UInt64(n))
            for offset in 0..<8 {
                let piece = Array(all[offset..<(offset + n)])
                let expected = WireFormatTests.referenceCRC32C(piece)
                all.withUnsafeBytes { raw in
                    let p = raw.baseAddress! + offset
                    if iapc_crc32c(0, p, n) != expected { wrong.append("crc n=\(n) offset=\(offset)") }
                    if iapc_crc32c_tables(0, p, n) != expected { wrong.append("tables n=\(n) offset=\(offset)") }
                    let cut = n / 3
                    if iapc_crc32c(iapc_crc32c(0, p, cut), p + cut, n - cut) != expected { wrong.append("two pieces n=\(n) offset=\(offset)") }
                }
            }
        }
        #expect(wrong.isEmpty, "first: \(wrong.prefix(5))")
    }
}
