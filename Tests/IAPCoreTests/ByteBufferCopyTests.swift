@testable import IAPCore
import Testing

/// `ByteBuffer.copy`, the word-load copy behind every append: each length
/// from 0 to 80 (every branch: 1-3, 4-7, 8-16, 17-32, longer), from and to
/// every offset within a word, writes exactly those bytes and nothing
/// around them.
@Suite struct ByteBufferCopyTests {
    @Test func everyLengthAndOffset() {
        let src = (0..<128).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
        var failures: [String] = []
        for n in 0...80 {
            for from in 0..<8 {
                for to in 0..<8 {
                    var dst = [UInt8](repeating: 0xEE, count: 128)
                    src.withUnsafeBytes { s in
                        dst.withUnsafeMutableBytes { d in ByteBuffer.copy(d.baseAddress! + to, s.baseAddress! + from, n) }
                    }
                    let copied = Array(dst[to..<(to + n)]) == Array(src[from..<(from + n)])
                    let untouched = dst[..<to].allSatisfy { $0 == 0xEE } && dst[(to + n)...].allSatisfy { $0 == 0xEE }
                    if !copied || !untouched { failures.append("n \(n) from \(from) to \(to)") }
                }
            }
        }
        #expect(failures.isEmpty, "\(failures.prefix(5))")
    }
}
