/// The record codec's bytes: little-endian integers and length-prefixed
/// strings, written by `ByteWriter` and read back, never trapping, by
/// `ByteReader`. The outbox's records (`OutboxEntry`, `ResultFactsCodec`)
/// and the simulated store's charges (`SimTransaction`) use them.

/// Writes a record: each integer or string is one append into a
/// `ByteBuffer` of 256 bytes to start with (a result record is ~200).
public struct ByteWriter {
    private var buffer = ByteBuffer(capacity: 256)

    public init() {}

    /// The bytes written.
    public var out: [UInt8] { buffer.bytes }
    public mutating func u8(_ v: UInt8) { buffer.append(v) }
    public mutating func u16(_ v: UInt16) { buffer.append(raw: v.littleEndian) }
    public mutating func u32(_ v: UInt32) { buffer.append(raw: v.littleEndian) }
    public mutating func u64(_ v: UInt64) { buffer.append(raw: v.littleEndian) }
    /// At most 65,535 bytes of the string's UTF-8 (longer ones are cut).
    public mutating func str16(_ s: String) {
        ByteWriter.withUTF8(s) { b in
            let n = min(b.count, 0xFFFF)
            u16(UInt16(n))
            if let p = b.baseAddress { buffer.append(p, n) }
        }
    }
    /// A string of any length: u32 length, then its UTF-8 bytes.
    public mutating func str32(_ s: String) {
        ByteWriter.withUTF8(s) { b in
            u32(UInt32(b.count))
            if let p = b.baseAddress { buffer.append(p, b.count) }
        }
    }
    /// `s`'s UTF-8 without copying a native or small string (a bridged one,
    /// an NSString on Apple platforms, is copied once).
    private static func withUTF8(_ s: String, _ body: (UnsafeBufferPointer<UInt8>) -> Void) {
        if s.utf8.withContiguousStorageIfAvailable(body) == nil {
            var copy = s
            copy.withUTF8(body)
        }
    }
    public mutating func i64(_ v: Int64) { u64(UInt64(bitPattern: v)) }
    /// A purchase token's 16 bytes, copied from the token in place.
    public mutating func token(_ t: PurchaseToken) { t.withBytes { buffer.append($0.baseAddress!, 16) } }
}

/// Reads a record back: a read is nil when the bytes left are too few or
/// not what it reads, never a trap (after a nil, the record is refused
/// whole: where the reader stands then means nothing).
public struct ByteReader {
    @usableFromInline let b: [UInt8]
    @usableFromInline var pos: Int
    /// Where the record ends in `b` (a frame's payload inside a whole file).
    @usableFromInline let end: Int
    public init(_ b: [UInt8]) { self.init(b, 0..<b.count) }
    /// Reads the bytes of `b` in `span` only, without copying them out.
    public init(_ b: [UInt8], _ span: Range<Int>) {
        precondition(span.lowerBound >= 0 && span.upperBound <= b.count, "a span outside its bytes")
        self.b = b
        pos = span.lowerBound
        end = span.upperBound
    }
    @inlinable public var remaining: Int { end - pos }
    public mutating func u8() -> UInt8? { guard remaining >= 1 else { return nil }; defer { pos += 1 }; return b[pos] }
    public mutating func u16() -> UInt16? { littleEndian(UInt16.self) }
    public mutating func u32() -> UInt32? { littleEndian(UInt32.self) }
    public mutating func u64() -> UInt64? { littleEndian(UInt64.self) }
    /// The next `T`'s bytes, little-endian, read in one load.
    private mutating func littleEndian<T: FixedWidthInteger>(_: T.Type) -> T? {
        let n = MemoryLayout<T>.size
        guard remaining >= n else { return nil }
        let at = pos
        pos += n
        return b.withUnsafeBytes { T(littleEndian: $0.loadUnaligned(fromByteOffset: at, as: T.self)) }
    }
    public mutating func str16() -> String? { u16().flatMap { text(Int($0)) } }
    public mutating func str32() -> String? { u32().flatMap { text(Int($0)) } }
    /// Reads a string written by `str32`, and gives `previous` back, not a
    /// new `String`, when its bytes are the ones `previous` was read from
    /// at `previousAt`: a transaction's original ID is usually its own ID,
    /// and a 16-digit ID is a heap string (about 550 instructions to make).
    public mutating func str32(orSame previous: String, readAt previousAt: Int) -> String? {
        guard let n = u32().map(Int.init), remaining >= n else { return nil }
        if n == previous.utf8.count, previousAt >= 0, previousAt + n <= pos,
           sameBytes(at: pos, asBytesAt: previousAt, count: n) {
            pos += n
            return previous
        }
        return text(n)
    }

    /// The `count` bytes at `at` are those at `other`, both in this record's buffer.
    private func sameBytes(at: Int, asBytesAt other: Int, count n: Int) -> Bool {
        b.withUnsafeBytes { ByteReader.equalBytes($0.baseAddress! + at, $0.baseAddress! + other, n) }
    }

    /// The next `n` bytes as text; nil when fewer are left or they are not UTF-8.
    @usableFromInline
    mutating func text(_ n: Int) -> String? {
        guard remaining >= n else { return nil }
        let start = pos
        pos += n
        return b.withUnsafeBufferPointer { all in
            let s = UnsafeBufferPointer(rebasing: all[start..<(start + n)])
            // Nearly every field is ASCII: one pass, no second validation.
            if s.allSatisfy({ $0 < 0x80 }) { return String(decoding: s, as: UTF8.self) }
            return UTF8Text.string(validating: s)
        }
    }
    public mutating func bytes32() -> [UInt8]? {
        guard let n = u32(), remaining >= Int(n) else { return nil }
        defer { pos += Int(n) }
        return Array(b[pos..<(pos + Int(n))])
    }

    public mutating func i64() -> Int64? { u64().map { Int64(bitPattern: $0) } }
    /// The next string (u32 length, UTF-8) made into a `T` by `make`; the
    /// value `last` holds when the bytes are the ones it was made from: no
    /// String is made, no text matched against an enum's names. For the
    /// fields that repeat from record to record of a log read at open (a
    /// product, a price, a currency: ~200 instructions each a record).
    /// Inlinable: specialized where it is called, in this module or the
    /// simulator's (a generic call looked up `Repeated<T>`'s metadata each time).
    @inlinable
    public mutating func str32<T>(_ last: inout Repeated<T>, _ make: (String) -> T?) -> T? {
        guard let n = u32().map(Int.init), remaining >= n else { return nil }
        if let v = last.value, last.bytes.count == n, n == 0 || sameBytes(at: pos, as: last.bytes) {
            pos += n
            return v
        }
        let start = pos
        guard let s = text(n), let v = make(s) else { return nil }
        last.bytes = Array(b[start..<(start + n)])
        last.value = v
        return v
    }

    /// The bytes at `at` are `other`'s. The caller checked that they fit.
    @usableFromInline
    func sameBytes(at: Int, as other: [UInt8]) -> Bool {
        b.withUnsafeBytes { all in
            other.withUnsafeBytes { o in
                o.count == 0 || ByteReader.equalBytes(all.baseAddress! + at, o.baseAddress!, o.count)
            }
        }
    }

    /// The `n` bytes at `a` and at `b` are equal (a few bytes: compared a
    /// word at a time, not by a call to memcmp).
    @usableFromInline
    static func equalBytes(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer, _ n: Int) -> Bool {
        var i = 0
        while i + 8 <= n {
            if a.loadUnaligned(fromByteOffset: i, as: UInt64.self) != b.loadUnaligned(fromByteOffset: i, as: UInt64.self) {
                return false
            }
            i += 8
        }
        while i < n {
            if a.load(fromByteOffset: i, as: UInt8.self) != b.load(fromByteOffset: i, as: UInt8.self) { return false }
            i += 1
        }
        return true
    }

    /// A purchase token's 16 bytes, read in place (no array).
    public mutating func token() -> PurchaseToken? {
        guard remaining >= 16 else { return nil }
        defer { pos += 16 }
        return PurchaseToken(bytes: b, at: pos)
    }
}

/// The last value read at one field of a run of records, with the bytes it
/// was made from (`ByteReader.str32(_:_:)`).
public struct Repeated<T> {
    @usableFromInline var bytes: [UInt8] = []
    @usableFromInline var value: T? = nil
    public init() {}
}
