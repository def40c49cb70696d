import Foundation
import IAPCore
import Testing

/// The scanner after damage checks each candidate frame from prefix CRCs,
/// without reading its payload again. These tests check it finds exactly
/// what the plain check finds, and that a file built to make the plain check
/// quadratic (look-alike headers, each claiming a long payload) is scanned
/// correctly. Its speed is a benchmark figure (scan_garbage_mb_per_s in
/// BENCHMARKS.md), not a timed test.
@Suite("Linear scan")
struct LinearScanTests {
    /// The plain scan (the definition): every position, every candidate's
    /// payload read and checked.
    static func reference(_ bytes: [UInt8]) -> [[UInt8]] {
        var out: [[UInt8]] = []
        var pos = 0
        func valid(_ p: Int) -> Int? {
            guard p + 12 <= bytes.count, Array(bytes[p..<(p + 4)]) == RecordFrame.magic else { return nil }
            let len = Int(bytes[p + 4]) | Int(bytes[p + 5]) << 8 | Int(bytes[p + 6]) << 16 | Int(bytes[p + 7]) << 24
            guard len <= RecordFrame.maxPayload, p + 12 + len <= bytes.count else { return nil }
            var frame: [UInt8] = []
            RecordFrame.encode(Array(bytes[(p + 12)..<(p + 12 + len)]), into: &frame)
            return Array(bytes[p..<(p + 12)]) == Array(frame[0..<12]) ? p + 12 + len : nil
        }
        while pos < bytes.count {
            if let e = valid(pos) {
                out.append(Array(bytes[(pos + 12)..<e]))
                pos = e
                continue
            }
            var q = pos + 1
            while q < bytes.count && valid(q) == nil { q += 1 }
            pos = q
        }
        return out
    }

    @Test("on 600 random damaged files the scan finds exactly the frames the plain check finds")
    func agreesWithReference() {
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<600 {
            var bytes: [UInt8] = []
            for _ in 0..<Int.random(in: 0...12, using: &rng) {
                let payload = (0..<Int.random(in: 0...200, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
                RecordFrame.encode(payload, into: &bytes)
                if Bool.random(using: &rng) {  // junk between frames: bytes, headers, look-alikes
                    for _ in 0..<Int.random(in: 0...40, using: &rng) {
                        switch Int.random(in: 0...2, using: &rng) {
                        case 0: bytes.append(UInt8.random(in: 0...255, using: &rng))
                        case 1: bytes += RecordFrame.magic + [UInt8.random(in: 0...255, using: &rng), 0, 0, 0, 1, 2, 3, 4]
                        default: bytes += RecordFrame.magic
                        }
                    }
                }
            }
            // Flip a few bits anywhere.
            for _ in 0..<Int.random(in: 0...3, using: &rng) where !bytes.isEmpty {
                bytes[Int.random(in: 0..<bytes.count, using: &rng)] ^= UInt8(1) << UInt8.random(in: 0...7, using: &rng)
            }
            #expect(RecordFrame.scan(bytes).records == Self.reference(bytes))
        }
    }

    @Test("1.4 MB of look-alike headers, each claiming a payload that runs almost to the end, then one real frame: found")
    func adversarialHeaders() {
        var bytes: [UInt8] = []
        let size = 1_400_000
        while bytes.count < size {
            let remaining = UInt32(max(0, size - bytes.count - 12 - 64))
            bytes += RecordFrame.magic
            bytes += [UInt8(remaining & 0xff), UInt8((remaining >> 8) & 0xff), UInt8((remaining >> 16) & 0xff), UInt8(remaining >> 24)]
            bytes += [0xde, 0xad, 0xbe, 0xef]
        }
        let junk = bytes.count
        RecordFrame.encode(Array("the one real record".utf8), into: &bytes)
        let s = RecordFrame.scan(bytes)
        #expect(s.records == [Array("the one real record".utf8)])
        #expect(s.skippedBytes == junk && s.damagedSpans == 1)
    }
}
