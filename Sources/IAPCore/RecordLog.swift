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
    public static let magic: [UInt8] = [0x49, 0x41, 0x50, 0x72]  // "IAPr"
    public static let headerSize = 12
    /// Larger payloads are refused on write and treated as damage on read.
    public static let maxPayload = 1 << 20

    public static func encode(_ payload: [UInt8], into out: inout [UInt8]) {
        precondition(payload.count <= maxPayload, "outbox record too large")
        let len = UInt32(payload.count)
        let lenBytes: [UInt8] = [UInt8(len & 0xff), UInt8((len >> 8) & 0xff), UInt8((len >> 16) & 0xff), UInt8(len >> 24)]
        var crc = iapc_crc32c(0, lenBytes, 4)
        crc = payload.withUnsafeBytes { iapc_crc32c(crc, $0.baseAddress, $0.count) }
        out.append(contentsOf: magic)
        out.append(contentsOf: lenBytes)
        out.append(contentsOf: [UInt8(crc & 0xff), UInt8((crc >> 8) & 0xff), UInt8((crc >> 16) & 0xff), UInt8(crc >> 24)])
        out.append(contentsOf: payload)
    }

    /// What a scan of a log found.
    public struct Scan: Sendable {
        /// Payloads of every valid frame, in file order.
        public var records: [[UInt8]] = []
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
        /// `RecordLogFile.maxFileBytes`): damage, never dropped silently.
        public var unreadBytes = 0
        public var isClean: Bool { skippedBytes == 0 && tailBytes == 0 && unreadBytes == 0 }
        public var hasDamage: Bool { skippedBytes > 0 || (tailBytes > 0 && !tailIsTorn) || unreadBytes > 0 }
    }

    public static func scan(_ bytes: [UInt8]) -> Scan {
        bytes.withUnsafeBufferPointer { scan($0) }
    }

    public static func scan(_ b: UnsafeBufferPointer<UInt8>) -> Scan {
        var s = Scan()
        let n = b.count
        var pos = 0
        var prefixes: PrefixCRC? = nil
        while pos < n {
            if let end = validFrame(b, at: pos) {
                s.records.append(Array(UnsafeBufferPointer(rebasing: b[(pos + headerSize)..<end])))
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

/// The open log file: appends frames, syncs, and rewrites itself atomically.
public final class RecordLogFile {
    /// The most of a log read at open: well below a phone's memory (100,000
    /// results waiting take about 40 MB). Of a larger file (damage, a tool,
    /// a bug) only this much is read, never all of it into memory; the
    /// caller keeps the whole file aside and reports it (issue 21: refusing
    /// it locked the game out of its purchases for good).
    public static let maxFileBytes = 128 << 20
    public let path: String
    private var fd: Int32
    public private(set) var size: Int
    /// Set when a rename or create is not yet known to be durable: the next
    /// `sync()` syncs the directory too, so nothing acknowledged after it can
    /// sit in a file the directory does not durably name.
    private var directoryNeedsSync = false

    /// Opens (creating, owner-only) the log at `path` and returns it with the
    /// scan of what it held and the bytes read (the first `maxFileBytes` of
    /// a larger file: `scan.unreadBytes` says how many more there are). The
    /// caller decides what to do with damage.
    public static func open(path: String) throws(IAPError) -> (RecordLogFile, RecordFrame.Scan, [UInt8]) {
        let existing = try POSIX.readPrefix(path, upTo: RecordLogFile.maxFileBytes, noFollow: true)
        let bytes = existing?.bytes ?? []
        var scan = RecordFrame.scan(bytes)
        scan.unreadBytes = (existing?.size ?? 0) - bytes.count
        let fd = try POSIX.createOwnerOnly(path, flags: O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        // A compaction a crash interrupted before its rename leaves this; the
        // log itself is whole (old or new), so the leftover is garbage.
        unlink(path + ".tmp")
        let file = RecordLogFile(path: path, fd: fd, size: existing?.size ?? 0)
        if existing == nil {
            #if IAP_TEST_HOOKS
            FileJournal.record(.create(path))
            #endif
            // A new file is durable only once its directory entry is.
            file.directoryNeedsSync = true
            try file.syncDirectoryIfNeeded()
        }
        return (file, scan, bytes)
    }

    private init(path: String, fd: Int32, size: Int) {
        self.path = path
        self.fd = fd
        self.size = size
    }

    deinit { if fd >= 0 { close(fd) } }

    public func close_() {
        if fd >= 0 { close(fd) }
        fd = -1
    }

    /// Appends already-framed bytes. Not durable until `sync()`. On failure
    /// the file is cut back to where it was, so a failed append never leaves
    /// part of a frame in front of the frames written after it.
    public func appendFramed(_ framed: [UInt8]) throws(IAPError) {
        do throws(IAPError) {
            #if IAP_TEST_HOOKS
            try IOFaults.fire(path, .write)
            do throws(IAPError) { try IOFaults.fire(path, .shortWrite) } catch {
                // Part of the frame reaches the file, then the disk is full.
                try? POSIX.writeAll(fd, Array(framed.prefix(max(1, framed.count / 2))))
                throw error
            }
            #endif
            try POSIX.writeAll(fd, framed)
        } catch {
            _ = ftruncate(fd, off_t(size))
            throw error
        }
        size += framed.count
        #if IAP_TEST_HOOKS
        FileJournal.record(.append(path, framed))
        #endif
    }

    /// The open descriptor, for a sync made outside the owner's lock; valid
    /// until the next `rewrite` or `close_`, which the owner holds off meanwhile.
    public var descriptor: Int32 { fd }
    /// True when the next `sync()` must also sync the directory.
    public var needsDirectorySync: Bool { directoryNeedsSync }

    public func sync() throws(IAPError) {
        #if IAP_TEST_HOOKS
        do throws(IAPError) { try IOFaults.fire(path, .sync) } catch {
            FileJournal.record(.syncFailed(path))
            throw error
        }
        #endif
        try POSIX.syncData(fd)
        #if IAP_TEST_HOOKS
        if !FileJournal.skipSync(path) { FileJournal.record(.sync(path)) }
        #endif
        try syncDirectoryIfNeeded()
    }

    private func syncDirectoryIfNeeded() throws(IAPError) {
        guard directoryNeedsSync else { return }
        #if IAP_TEST_HOOKS
        try IOFaults.fire(path, .directorySync)
        #endif
        try POSIX.syncDirectory(POSIX.parent(of: path))
        #if IAP_TEST_HOOKS
        FileJournal.record(.directorySync(POSIX.parent(of: path)))
        #endif
        directoryNeedsSync = false
    }

    /// Cuts the file back to `length` (drops a torn tail) durably.
    public func truncate(to length: Int) throws(IAPError) {
        guard ftruncate(fd, off_t(length)) == 0 else { throw IAPError(.io, "cannot truncate \(path): \(POSIX.errnoText)") }
        size = length
        #if IAP_TEST_HOOKS
        FileJournal.record(.truncate(path, length))
        #endif
        try sync()
    }

    /// Replaces the whole log with `payloads`, atomically (old or new, never
    /// neither), then appends continue on the new file: temporary file,
    /// sync, rename, sync the directory. The descriptor written is the one
    /// kept, so no reopen can fail after the rename and leave appends going
    /// to the old, unlinked file.
    public func rewrite(_ payloads: [[UInt8]]) throws(IAPError) {
        var out: [UInt8] = []
        for p in payloads { RecordFrame.encode(p, into: &out) }
        let tmp = path + ".tmp"
        let nfd = try POSIX.createOwnerOnly(tmp, flags: O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC)
        do throws(IAPError) {
            #if IAP_TEST_HOOKS
            try IOFaults.fire(path, .write)
            #endif
            try POSIX.writeAll(nfd, out)
            #if IAP_TEST_HOOKS
            try IOFaults.fire(path, .sync)
            #endif
            try POSIX.syncData(nfd)
        } catch {
            close(nfd)
            unlink(tmp)
            throw error
        }
        FaultPoint.duringCompaction.reach()
        #if IAP_TEST_HOOKS
        do throws(IAPError) { try IOFaults.fire(path, .rename) } catch {
            close(nfd)
            unlink(tmp)
            throw error
        }
        #endif
        guard rename(tmp, path) == 0 else {
            let e = POSIX.errnoText
            close(nfd)
            unlink(tmp)
            throw IAPError(.io, "cannot rename \(tmp): \(e)")
        }
        // The path now names the new file: append there whatever happens next.
        if fd >= 0 { close(fd) }
        fd = nfd
        size = out.count
        #if IAP_TEST_HOOKS
        FileJournal.record(.rewrite(path, out))
        #endif
        directoryNeedsSync = true
        try syncDirectoryIfNeeded()
    }
}


#if IAP_TEST_HOOKS
/// Test hook (debug builds only): makes the next writes or syncs of log files
/// under a directory fail, as a full or failing disk does, so tests can
/// check C12 (a failed sync is a failure) without a broken disk.
public enum IOFaults {
    /// `shortWrite`: a write that stores part of its bytes, then fails
    /// (ENOSPC half-way through a frame).
    public enum Kind: Sendable { case write, sync, rename, directorySync, shortWrite }
    private struct Plan { let prefix: String; let kind: Kind; var skip: Int; var remaining: Int; let code: Int32 }
    nonisolated(unsafe) private static var plans: [Plan] = []
    /// Operations seen under each counted prefix, by kind (a fault sweep
    /// counts a workload's writes and syncs, then fails each in turn).
    nonisolated(unsafe) private static var counted: [String: [Kind: Int]] = [:]
    private static let lock = Lock()

    /// After `skip` operations of `kind` on log files under `prefix`, the
    /// next `count` fail with `code` (EIO, ENOSPC...). `count` < 0: until
    /// `clear`.
    public static func inject(under prefix: String, _ kind: Kind, after skip: Int = 0, count: Int = 1, code: Int32 = EIO) {
        lock.withLock { plans.append(Plan(prefix: prefix, kind: kind, skip: skip, remaining: count, code: code)) }
    }

    /// Starts counting the operations under `prefix`.
    public static func count(under prefix: String) {
        lock.withLock { counted[prefix] = [:] }
    }

    /// How many operations of `kind` happened under `prefix` since `count`.
    public static func counted(under prefix: String, _ kind: Kind) -> Int {
        lock.withLock { counted[prefix]?[kind] ?? 0 }
    }

    public static func clear(under prefix: String) {
        lock.withLock {
            plans.removeAll { $0.prefix == prefix }
            counted[prefix] = nil
        }
    }

    static func fire(_ path: String, _ kind: Kind) throws(IAPError) {
        let code: Int32? = lock.withLock {
            for (prefix, _) in counted where path.hasPrefix(prefix) { counted[prefix]![kind, default: 0] += 1 }
            guard let i = plans.firstIndex(where: { $0.kind == kind && path.hasPrefix($0.prefix) && $0.remaining != 0 }) else { return nil }
            if plans[i].skip > 0 {
                plans[i].skip -= 1
                return nil
            }
            if plans[i].remaining > 0 { plans[i].remaining -= 1 }
            return plans[i].code
        }
        guard let code else { return }
        throw IAPError(.io, "\(kind) failed: \(String(cString: strerror(code))) (injected)")
    }

    /// Per-directory compaction thresholds (a workload small enough for a
    /// test still compacts).
    nonisolated(unsafe) private static var thresholds: [String: Int] = [:]

    public static func setCompactionThreshold(_ bytes: Int?, for directory: String) {
        lock.withLock { thresholds[directory] = bytes }
    }

    static func compactionThreshold(for directory: String) -> Int? {
        lock.withLock { thresholds.isEmpty ? nil : thresholds[directory] }
    }
}
#endif

#if IAP_TEST_HOOKS
/// Test hook (debug builds only): records, in order, what the log files under
/// a directory saw (appends, syncs, rewrites, directory syncs) and what the
/// test notes about what the game was told, so the power-loss explorer can
/// rebuild every on-disk state a power cut could leave. `skipSyncs` turns a
/// log's data syncs into no-ops in the record (the explorer's own check that
/// it catches a missing sync).
public enum FileJournal {
    public enum Event: Sendable, Equatable {
        case create(String)
        case append(String, [UInt8])
        case sync(String)
        case truncate(String, Int)
        /// A fresh file with these bytes (synced) renamed over the path; the
        /// rename is durable once its directory is synced.
        case rewrite(String, [UInt8])
        case directorySync(String)
        /// A data sync of the file failed: on Linux its dirty pages may be
        /// dropped while a later sync reports success ("fsyncgate").
        case syncFailed(String)
        case note(String)
    }
    nonisolated(unsafe) private static var prefix: String? = nil
    nonisolated(unsafe) private static var events: [Event] = []
    nonisolated(unsafe) private static var skipping: Set<String> = []
    private static let lock = Lock()

    public static func start(under prefix: String) {
        lock.withLock {
            Self.prefix = prefix
            events = []
        }
    }

    /// Stops recording; returns what was recorded.
    public static func stop() -> [Event] {
        lock.withLock {
            prefix = nil
            skipping = []
            defer { events = [] }
            return events
        }
    }

    public static func note(_ text: String) { lock.withLock { if prefix != nil { events.append(.note(text)) } } }

    /// Data syncs of logs whose path ends with `suffix` are left out of the
    /// record, as if they had not been made (an injected bug).
    public static func skipSyncs(of suffix: String) { lock.withLock { _ = skipping.insert(suffix) } }

    static func skipSync(_ path: String) -> Bool { lock.withLock { skipping.contains { path.hasSuffix($0) } } }

    static func record(_ e: Event) {
        lock.withLock {
            guard let prefix else { return }
            let path: String
            switch e {
            case .create(let p), .append(let p, _), .sync(let p), .truncate(let p, _), .rewrite(let p, _), .directorySync(let p),
                 .syncFailed(let p): path = p
            case .note: path = prefix
            }
            if path.hasPrefix(prefix) { events.append(e) }
        }
    }
}
#endif
