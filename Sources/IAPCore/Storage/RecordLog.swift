#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import CIAPSupport

/// An append-only file of checksummed records: the outbox's disk format.
///
/// Frame: `"IAPr"` magic (4 bytes) · payload length (u32 LE) · CRC32C of the
/// length bytes and the payload (u32 LE) · payload. A frame is valid only
/// when all of it is present and the checksum matches, so a torn write at any
/// byte, or a flipped bit anywhere, makes exactly the frames it touches
/// invalid; recovery keeps every valid frame before and after.
public enum RecordFrame {
    /// "IAPr" as the little-endian u32 a frame starts with.
    static let magicWord: UInt32 = 0x7250_4149
    public static let magic: [UInt8] = withUnsafeBytes(of: magicWord.littleEndian) { Array($0) }
    public static let headerSize = 12
    /// Larger payloads are refused on write and treated as damage on read.
    public static let maxPayload = 1 << 20

    public static func encode(_ payload: [UInt8], into out: inout [UInt8]) {
        precondition(payload.count <= maxPayload, "outbox record too large")
        // The header is built in place and the array grown once, doubling:
        // four small appends cost more than the CRC of a whole record.
        let len = UInt32(payload.count)
        // Magic, length, CRC: each a little-endian u32.
        var header: (UInt32, UInt32, UInt32) = (magicWord.littleEndian, len.littleEndian, 0)
        var crc = withUnsafeBytes(of: &header.1) { iapc_crc32c(0, $0.baseAddress, 4) }
        crc = payload.withUnsafeBytes { iapc_crc32c(crc, $0.baseAddress, $0.count) }
        header.2 = crc.littleEndian
        let needed = out.count + headerSize + payload.count
        if needed > out.capacity { out.reserveCapacity(max(needed, 2 * out.capacity)) }
        withUnsafeBytes(of: &header) { out.append(contentsOf: $0) }
        out.append(contentsOf: payload)
    }

    /// What a scan of a log found.
    public struct Scan: Sendable {
        /// Where the payload of every valid frame lies in `source`, in file
        /// order: an open decodes them in place (a copy of each, ~450
        /// instructions a record with its release, is what `records` makes).
        public internal(set) var spans: [Range<Int>] = []
        /// The bytes scanned (shared with the caller's array, not copied).
        /// Both set by `scan` only: every span lies inside `source`.
        public internal(set) var source: [UInt8] = []
        /// Payloads of every valid frame, in file order, each copied out.
        public var records: [[UInt8]] { spans.map { Array(source[$0]) } }
        /// Bytes skipped between valid frames (damage in the middle).
        public var skippedBytes = 0
        /// Number of separate damaged spans in the middle.
        public var damagedSpans = 0
        /// Offset just past the last valid frame.
        public var validEnd = 0
        /// Bytes after the last valid frame.
        public var tailBytes = 0
        /// True when the tail is what an interrupted append leaves (a prefix
        /// of a frame, or zeros): dropped silently. Otherwise it is damage.
        public var tailIsTorn = true
        /// Bytes of the file past what was read (a log over
        /// `POSIXLogFile.maxFileBytes`): damage, never dropped silently.
        public var unreadBytes = 0
        public var isClean: Bool { skippedBytes == 0 && tailBytes == 0 && unreadBytes == 0 }
        public var hasDamage: Bool { skippedBytes > 0 || (tailBytes > 0 && !tailIsTorn) || unreadBytes > 0 }
    }

    public static func scan(_ bytes: [UInt8]) -> Scan {
        var s = bytes.withUnsafeBufferPointer { scan($0) }
        s.source = bytes
        return s
    }

    /// The scan of `b`, without `source` (`scan(_:)` sets it).
    private static func scan(_ b: UnsafeBufferPointer<UInt8>) -> Scan {
        var s = Scan()
        let n = b.count
        var pos = 0
        var prefixes: PrefixCRC? = nil
        while pos < n {
            if let end = validFrame(b, at: pos) {
                s.spans.append((pos + headerSize)..<end)
                pos = end
                s.validEnd = end
                continue
            }
            // Damage at `pos`: look for the next valid frame. Each candidate
            // is checked from prefix CRCs in O(log length), without reading
            // its payload again: a file of look-alike headers each claiming a
            // long payload costs a linear scan, not a quadratic one.
            if prefixes == nil { prefixes = PrefixCRC(b) }
            var q = pos + 1
            var next: Int? = nil
            let m1 = magic[1], m2 = magic[2], m3 = magic[3]
            while true {
                // Long runs without a frame (zeros, garbage: an outbox grown
                // past the cap) are skipped eight bytes at a time.
                q = firstIndex(of: magic[0], in: b, from: q)
                guard q + headerSize <= n else { break }
                if b[q + 1] == m1, b[q + 2] == m2, b[q + 3] == m3, prefixes!.validFrame(b, at: q) != nil {
                    next = q
                    break
                }
                q += 1
            }
            if let next {
                s.skippedBytes += next - pos
                s.damagedSpans += 1
                pos = next
            } else {
                s.tailBytes = n - pos
                s.tailIsTorn = isTornTail(b, at: pos)
                break
            }
        }
        return s
    }

    /// CRC32C of every prefix of the file ending at a multiple of `block`
    /// bytes, so the CRC of any span costs at most two partial blocks and one
    /// shift (`iapc_crc32c_shift`). Built once, the first time a scan meets
    /// damage (a clean file never needs it).
    struct PrefixCRC {
        static let block = 64
        let at: [UInt32]

        init(_ b: UnsafeBufferPointer<UInt8>) {
            var v: [UInt32] = [0]
            v.reserveCapacity(b.count / PrefixCRC.block + 2)
            var crc: UInt32 = 0
            var i = 0
            while i + PrefixCRC.block <= b.count {
                crc = iapc_crc32c(crc, b.baseAddress! + i, PrefixCRC.block)
                v.append(crc)
                i += PrefixCRC.block
            }
            at = v
        }

        /// CRC32C of bytes [0, i).
        func prefix(_ b: UnsafeBufferPointer<UInt8>, _ i: Int) -> UInt32 {
            let k = i / PrefixCRC.block
            return iapc_crc32c(at[k], b.baseAddress! + k * PrefixCRC.block, i - k * PrefixCRC.block)
        }

        /// Same answer as `RecordFrame.validFrame`, in O(log length).
        func validFrame(_ b: UnsafeBufferPointer<UInt8>, at pos: Int) -> Int? {
            guard pos + headerSize <= b.count else { return nil }
            let len = Int(readU32(b, pos + 4))
            guard len <= maxPayload, pos + headerSize + len <= b.count else { return nil }
            let s = pos + headerSize, e = s + len
            // crc(L || P) = shift(crc(L), |P|) ^ crc(P); crc(P) = S[e] ^ shift(S[s], |P|).
            let lenCRC = iapc_crc32c(0, b.baseAddress! + pos + 4, 4)
            let crc = iapc_crc32c_shift(lenCRC ^ prefix(b, s), UInt64(len)) ^ prefix(b, e)
            return crc == readU32(b, pos + 8) ? e : nil
        }
    }

    private static func readU32(_ b: UnsafeBufferPointer<UInt8>, _ at: Int) -> UInt32 {
        UInt32(b[at]) | UInt32(b[at + 1]) << 8 | UInt32(b[at + 2]) << 16 | UInt32(b[at + 3]) << 24
    }

    /// The end offset of a valid frame starting at `pos`, or nil.
    private static func validFrame(_ b: UnsafeBufferPointer<UInt8>, at pos: Int) -> Int? {
        guard pos + headerSize <= b.count,
              b[pos] == magic[0], b[pos + 1] == magic[1], b[pos + 2] == magic[2], b[pos + 3] == magic[3]
        else { return nil }
        let len = Int(readU32(b, pos + 4))
        guard len <= maxPayload, pos + headerSize + len <= b.count else { return nil }
        var crc = iapc_crc32c(0, b.baseAddress! + pos + 4, 4)
        crc = iapc_crc32c(crc, b.baseAddress! + pos + headerSize, len)
        return crc == readU32(b, pos + 8) ? pos + headerSize + len : nil
    }

    /// The first index at or after `from` holding `byte` (`b.count` if none).
    /// Eight bytes at a time where aligned: a scan over a long damaged run
    /// costs a fraction of a byte-by-byte loop (which a debug build makes
    /// slower still).
    static func firstIndex(of byte: UInt8, in b: UnsafeBufferPointer<UInt8>, from: Int) -> Int {
        guard let base = b.baseAddress else { return b.count }
        let n = b.count
        var i = from
        while i < n && (Int(bitPattern: base + i) & 7) != 0 {
            if base[i] == byte { return i }
            i += 1
        }
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        let pattern = ones &* UInt64(byte)
        while i + 8 <= n {
            // A zero byte in x means a match (the classic "has zero byte" test).
            let x = UnsafeRawPointer(base + i).load(as: UInt64.self) ^ pattern
            if (x &- ones) & ~x & highs != 0 { break }
            i += 8
        }
        while i < n {
            if base[i] == byte { return i }
            i += 1
        }
        return n
    }

    /// True when every byte from `from` on is zero; eight at a time where aligned.
    static func allZero(_ b: UnsafeBufferPointer<UInt8>, from: Int) -> Bool {
        guard let base = b.baseAddress else { return true }
        let n = b.count
        var i = from
        while i < n && (Int(bitPattern: base + i) & 7) != 0 {
            if base[i] != 0 { return false }
            i += 1
        }
        while i + 8 <= n {
            if UnsafeRawPointer(base + i).load(as: UInt64.self) != 0 { return false }
            i += 8
        }
        while i < n {
            if base[i] != 0 { return false }
            i += 1
        }
        return true
    }

    /// A tail an interrupted append can leave: a prefix of a frame header,
    /// a header whose payload runs past the end, or all zeros.
    private static func isTornTail(_ b: UnsafeBufferPointer<UInt8>, at pos: Int) -> Bool {
        let rest = b.count - pos
        if allZero(b, from: pos) { return true }
        if rest < 4 { return (0..<rest).allSatisfy { b[pos + $0] == magic[$0] } }
        guard b[pos] == magic[0], b[pos + 1] == magic[1], b[pos + 2] == magic[2], b[pos + 3] == magic[3] else { return false }
        if rest < headerSize { return true }
        let len = Int(readU32(b, pos + 4))
        guard len <= maxPayload, pos + headerSize + len > b.count else { return false }
        // A complete last frame whose length field was damaged (a flipped bit
        // made it longer) also looks cut short. It checks with its true
        // length, which a real torn append does not: that is damage, and is
        // reported, never dropped silently.
        let actual = UInt32(rest - headerSize)
        let lenBytes: [UInt8] = [UInt8(actual & 0xff), UInt8((actual >> 8) & 0xff), UInt8((actual >> 16) & 0xff), UInt8(actual >> 24)]
        var crc = iapc_crc32c(0, lenBytes, 4)
        crc = iapc_crc32c(crc, b.baseAddress! + pos + headerSize, Int(actual))
        return crc != readU32(b, pos + 8)
    }
}
