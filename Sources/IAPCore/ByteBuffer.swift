/// A growable run of bytes that the JSON writer (`JSONBuffer`) and the
/// record codec (`ByteWriter`) append to: each append is one capacity check
/// and one copy into memory of its own. An `Array` costs about a hundred
/// instructions per `append(contentsOf:)` (a uniqueness check, an
/// exclusivity-checked buffer access, a generic copy), and a purchase makes
/// some seventy appends between its `"7"` and its outbox record.
///
/// A value like any other: a copy that is written to first takes memory of
/// its own (checked with the capacity, at each `reserve`). Not `~Copyable`,
/// though that would need no uniqueness check: a noncopyable type
/// references `swift_runtimeSupportsNoncopyableTypes`, a runtime symbol iOS
/// 15's Swift runtime lacks (`scripts/check-apple.sh` refused the link).
struct ByteBuffer {
    private final class Memory {
        let base: UnsafeMutablePointer<UInt8>
        init(capacity: Int) { base = .allocate(capacity: capacity) }
        deinit { base.deallocate() }
    }

    private var memory: Memory
    private var capacity: Int
    /// Bytes written so far.
    private(set) var count = 0

    init(capacity: Int) {
        self.capacity = max(capacity, 16)
        memory = Memory(capacity: self.capacity)
    }

    /// The bytes written, copied out.
    var bytes: [UInt8] { Array(UnsafeBufferPointer(start: memory.base, count: count)) }

    /// The bytes written, lent (valid only inside `body`).
    func withBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try body(UnsafeBufferPointer(start: memory.base, count: count))
    }

    /// Where the next `n` bytes go, in memory this value alone holds;
    /// the caller writes them there, then calls `advance(by: n)`.
    @inline(__always)
    mutating func reserve(_ n: Int) -> UnsafeMutablePointer<UInt8> {
        if count + n > capacity || !isKnownUniquelyReferenced(&memory) { grow(n) }
        return memory.base + count
    }

    /// Counts `n` bytes written where `reserve` pointed.
    @inline(__always)
    mutating func advance(by n: Int) {
        assert(count + n <= capacity, "ByteBuffer: advanced past what was reserved")
        count += n
    }

    /// Copies `n` bytes; the short runs a message is made of (field names,
    /// IDs, codes: 1 to 32 bytes) with two overlapping word loads and
    /// stores each, no call. A `memcpy` call cost about 25 instructions, and
    /// a `"7"` makes some forty copies. Reads and writes exactly the `n`
    /// bytes at `src` and `dst`.
    @inline(__always)
    static func copy(_ d: UnsafeMutableRawPointer, _ s: UnsafeRawPointer, _ n: Int) {
        if n >= 8 {
            if n <= 16 {
                let a = s.loadUnaligned(as: UInt64.self), b = s.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self)
                d.storeBytes(of: a, as: UInt64.self)
                d.storeBytes(of: b, toByteOffset: n - 8, as: UInt64.self)
            } else if n <= 32 {
                let a = s.loadUnaligned(as: UInt64.self), b = s.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
                let c = s.loadUnaligned(fromByteOffset: n - 16, as: UInt64.self)
                let e = s.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self)
                d.storeBytes(of: a, as: UInt64.self)
                d.storeBytes(of: b, toByteOffset: 8, as: UInt64.self)
                d.storeBytes(of: c, toByteOffset: n - 16, as: UInt64.self)
                d.storeBytes(of: e, toByteOffset: n - 8, as: UInt64.self)
            } else {
                d.copyMemory(from: s, byteCount: n)
            }
        } else if n >= 4 {
            let a = s.loadUnaligned(as: UInt32.self), b = s.loadUnaligned(fromByteOffset: n - 4, as: UInt32.self)
            d.storeBytes(of: a, as: UInt32.self)
            d.storeBytes(of: b, toByteOffset: n - 4, as: UInt32.self)
        } else if n > 0 {
            // 1 to 3 bytes: the first, the middle and the last (overlapping).
            d.storeBytes(of: s.load(as: UInt8.self), as: UInt8.self)
            d.storeBytes(of: s.load(fromByteOffset: n >> 1, as: UInt8.self), toByteOffset: n >> 1, as: UInt8.self)
            d.storeBytes(of: s.load(fromByteOffset: n - 1, as: UInt8.self), toByteOffset: n - 1, as: UInt8.self)
        }
    }

    /// Forgets what was written; the memory stays for the next writes.
    mutating func removeAll() { count = 0 }

    mutating func append(_ p: UnsafeRawPointer, _ n: Int) {
        guard n > 0 else { return }
        ByteBuffer.copy(reserve(n), p, n)
        count += n
    }

    mutating func append(_ byte: UInt8) {
        reserve(1).pointee = byte
        count += 1
    }

    /// `v`'s bytes as they are in memory (callers pass `.littleEndian`).
    @inline(__always)
    mutating func append<T: FixedWidthInteger>(raw v: T) {
        let n = MemoryLayout<T>.size
        UnsafeMutableRawPointer(reserve(n)).storeBytes(of: v, as: T.self)
        count += n
    }

    /// Doubling, so appends stay linear; also the copy a shared value takes.
    @inline(never)
    private mutating func grow(_ n: Int) {
        let newCapacity = count + n > capacity ? max(capacity * 2, count + n) : capacity
        let fresh = Memory(capacity: newCapacity)
        fresh.base.initialize(from: memory.base, count: count)
        memory = fresh
        capacity = newCapacity
    }
}
