#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The release `DurableLog`: a real file, appended with write(2), made
/// durable with fdatasync and a sync of its directory, rewritten by a
/// temporary file renamed over it. Each operation is also offered as its
/// steps (`openDeferringDirectorySync`, `cutBack`, `syncData`,
/// `replaceDeferringDirectorySync`, `syncDirectoryIfNeeded`), so a wrapper
/// (IAPTestSupport's `SimulatedDisk`) can fail or record each of them.
public final class POSIXLogFile: DurableLog {
    /// The most of a log read at open: well below a phone's memory (100,000
    /// results waiting take about 40 MB). Of a larger file (damage, a tool,
    /// a bug) only this much is read, never all of it into memory; the
    /// caller keeps the whole file aside and reports it (issue 21: refusing
    /// it locked the game out of its purchases for good).
    public static let maxFileBytes = 128 << 20
    public let path: String
    // Owned by one thread (the outbox's), never reached across a call out:
    // run-time exclusivity checks on these three can find nothing (4 a
    // write), and are off.
    @exclusivity(unchecked) private var fd: Int32
    @exclusivity(unchecked) public private(set) var size: Int
    /// Set when a rename or create is not yet known to be durable: the next
    /// `sync()` syncs the directory too, so nothing acknowledged after it can
    /// sit in a file the directory does not durably name.
    @exclusivity(unchecked) private var directoryNeedsSync = false
    /// Set from the open until the first sync: the directory, perhaps made,
    /// moved or restored by the game, may never have been synced. The first
    /// `sync()` anchors it (`POSIX.anchorDirectory`: its parent, then
    /// itself, unless the SDK did so already in this open). An open that
    /// writes nothing syncs nothing.
    @exclusivity(unchecked) private var directoryNeedsAnchor = true

    /// Opens (creating, owner-only) the log at `path` and returns it with the
    /// scan of what it held and the bytes read (the first `maxFileBytes` of
    /// a larger file: `scan.unreadBytes` says how many more there are). The
    /// caller decides what to do with damage.
    public static func open(path: String) throws(IAPError) -> (POSIXLogFile, RecordFrame.Scan, [UInt8]) {
        let (file, scan, bytes, created) = try openDeferringDirectorySync(path: path)
        if created { try file.syncDirectoryIfNeeded() }
        return (file, scan, bytes)
    }

    /// `open` without its last step: a file it created (`created`) is not
    /// durably named until `syncDirectoryIfNeeded()`, which `open` calls for
    /// a created file only (an existing one's directory is anchored at its
    /// first `sync()`).
    public static func openDeferringDirectorySync(path: String) throws(IAPError)
        -> (file: POSIXLogFile, scan: RecordFrame.Scan, bytes: [UInt8], created: Bool)
    {
        let existing = try POSIX.readPrefix(path, upTo: POSIXLogFile.maxFileBytes, noFollow: true)
        let bytes = existing?.bytes ?? []
        var scan = RecordFrame.scan(bytes)
        scan.unreadBytes = (existing?.size ?? 0) - bytes.count
        let fd = try POSIX.createOwnerOnly(path, flags: O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        // A compaction a crash interrupted before its rename leaves this; the
        // log itself is whole (old or new), so the leftover is garbage.
        try POSIX.clearTemporary(path + ".tmp")
        let file = POSIXLogFile(path: path, fd: fd, size: existing?.size ?? 0)
        // A new file is durable only once its directory entry is.
        if existing == nil { file.directoryNeedsSync = true }
        return (file, scan, bytes, existing == nil)
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
            try POSIX.writeAll(fd, framed)
        } catch {
            _ = ftruncate(fd, off_t(size))
            throw error
        }
        size += framed.count
    }

    /// True when the next `sync()` must also sync the directory.
    public var needsDirectorySync: Bool { directoryNeedsSync }

    public func sync() throws(IAPError) {
        try syncData()
        try syncDirectoryIfNeeded()
    }

    /// The file's data only (fdatasync), not its directory entry.
    public func syncData() throws(IAPError) {
        try POSIX.syncData(fd)
    }

    /// Syncs the directory when a create or rename is not known to be
    /// durable yet, and anchors it at the first sync of an open.
    public func syncDirectoryIfNeeded() throws(IAPError) {
        if directoryNeedsSync {
            try POSIX.syncDirectory(POSIX.parent(of: path))
            directoryNeedsSync = false
        } else if directoryNeedsAnchor {
            try POSIX.anchorDirectory(POSIX.parent(of: path))
        }
        directoryNeedsAnchor = false
    }

    /// Cuts the file back to `length` (drops a torn tail) durably.
    public func truncate(to length: Int) throws(IAPError) {
        try cutBack(to: length)
        try sync()
    }

    /// Cuts the file back to `length`, not durably (`truncate` syncs).
    public func cutBack(to length: Int) throws(IAPError) {
        guard ftruncate(fd, off_t(length)) == 0 else { throw IAPError(.io, "cannot truncate \(path): \(POSIX.errnoText)") }
        size = length
    }

    /// Replaces the whole log with `payloads`, atomically (old or new, never
    /// neither), then appends continue on the new file: temporary file,
    /// sync, rename, sync the directory. The descriptor written is the one
    /// kept, so no reopen can fail after the rename and leave appends going
    /// to the old, unlinked file.
    public func rewrite(_ payloads: [[UInt8]]) throws(IAPError) {
        try replaceDeferringDirectorySync(payloads)
        try syncDirectoryIfNeeded()
    }

    /// The steps of a rewrite, for a test disk that fails one of them.
    public enum RewriteStep: Sendable { case write, sync, rename }

    /// `rewrite` without its last step: the rename is not durable until
    /// `syncDirectoryIfNeeded()`. `before` runs ahead of each step, once
    /// the temporary file exists (a simulated disk fails a step there, so
    /// the clean-up of a failed rewrite is what it tests); it throws to
    /// make that step fail.
    public func replaceDeferringDirectorySync(_ payloads: [[UInt8]],
                                              before step: (RewriteStep) throws(IAPError) -> Void = { _ in }) throws(IAPError) {
        var out: [UInt8] = []
        for p in payloads { RecordFrame.encode(p, into: &out) }
        let tmp = path + ".tmp"
        try POSIX.clearTemporary(tmp)
        let nfd = try POSIX.createOwnerOnly(tmp, flags: O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC)
        do throws(IAPError) {
            try step(.write)
            try POSIX.writeAll(nfd, out)
            try step(.sync)
            try POSIX.syncData(nfd)
        } catch {
            close(nfd)
            unlink(tmp)
            throw error
        }
        FaultPoint.duringCompaction.reach()
        do throws(IAPError) { try step(.rename) } catch {
            close(nfd)
            unlink(tmp)
            throw error
        }
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
        directoryNeedsSync = true
    }
}
