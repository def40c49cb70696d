#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The file operations the outbox's durability rests on, written against
/// POSIX directly so every write and sync is visible and counted.
public enum POSIX {
    /// How many data syncs this process has issued (for the fsync-count figure).
    @_spi(Testing) nonisolated(unsafe) public static var syncCount: Int64 = 0

    public static var errnoText: String { String(cString: strerror(errno)) }

    /// Flushes a file's data to stable storage. On Apple platforms `fsync`
    /// only reaches the drive's cache; `F_FULLFSYNC` is what survives power
    /// loss, with `fsync` as the fallback where the file system refuses it.
    public static func syncData(_ fd: Int32) throws(IAPError) {
        _ = iapAtomicIncrement(&syncCount)
        #if canImport(Darwin)
        if fcntl(fd, F_FULLFSYNC) == 0 { return }
        if fsync(fd) == 0 { return }
        #else
        if fdatasync(fd) == 0 { return }
        #endif
        throw IAPError(.io, "sync failed: \(errnoText)")
    }

    /// Makes a created, renamed or removed directory entry durable.
    ///
    /// A directory this process locked (`lockDirectory`: a data or state
    /// directory) is anchored by its first sync: its parent is synced
    /// first, once a lock, so the directory's own entry is durable before
    /// anything written in it is acknowledged. The game may have created,
    /// moved or restored the directory without syncing it (engines'
    /// persistent-path helpers do), and a power cut would then take the
    /// outbox with it (C12). Until stop 30 every open synced both
    /// directories and their parents on the game's thread: four syncs
    /// (F_FULLFSYNC on an Apple device) at launches that need none.
    public static func syncDirectory(_ path: String) throws(IAPError) {
        let held = heldDirectory(path)
        if let held, held.unanchored { try anchorParent(of: path, key: held.key) }
        try syncDirectoryEntries(path, descriptor: held?.descriptor)
    }

    /// Anchors a directory this process locked, if no sync has yet (its
    /// parent, then itself: `syncDirectory`); nothing otherwise. Called
    /// before the SDK acts on what it read there: an open about to show
    /// stored results again, the first purchase of an open (its token
    /// carries the install identity read from `install-id`).
    public static func anchorDirectory(_ path: String) throws(IAPError) {
        guard let held = heldDirectory(path), held.unanchored else { return }
        try anchorParent(of: path, key: held.key)
        try syncDirectoryEntries(path, descriptor: held.descriptor)
    }

    /// Syncs the parent of the locked directory `path` (whose lock-map key
    /// is `key`) and marks it anchored. A parent that is itself a locked
    /// directory not anchored yet (a dataDir inside the stateDir) is
    /// anchored in turn.
    private static func anchorParent(of path: String, key: String) throws(IAPError) {
        let parentPath = parent(of: path)
        if parentPath != path { try syncDirectory(parentPath) }
        lockedDirectories.withLock { _ = $0.unanchored.remove(key) }
    }

    /// The lock map's view of `path`: its key, the held descriptor, and
    /// whether it waits for its anchoring sync. Nil when `stat` fails.
    private static func heldDirectory(_ path: String) -> (key: String, descriptor: Int32?, unanchored: Bool)? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        let key = "\(st.st_dev):\(st.st_ino)"
        return lockedDirectories.withLock { (key, $0.directoryFD[key], $0.unanchored.contains(key)) }
    }

    /// Syncs a directory's entries: through `descriptor` when this process
    /// holds one (a locked directory: one open and close fewer), otherwise
    /// through a descriptor opened for it.
    private static func syncDirectoryEntries(_ path: String, descriptor: Int32?) throws(IAPError) {
        let fd = descriptor ?? open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw IAPError(.io, "cannot open directory \(path): \(errnoText)") }
        defer { if descriptor == nil { close(fd) } }
        _ = iapAtomicIncrement(&syncCount)
        #if canImport(Darwin)
        let synced = fcntl(fd, F_FULLFSYNC) == 0 || fsync(fd) == 0
        #else
        let synced = fsync(fd) == 0
        #endif
        guard synced else { throw IAPError(.io, "directory sync failed for \(path): \(errnoText)") }
        syncedDirectoriesWatch.withLock { watch in
            for prefix in watch.keys where path.hasPrefix(prefix) { watch[prefix]?.append(path) }
        }
    }

    /// Tests: each directory synced whose path starts with a watched prefix,
    /// in order, by prefix (a test adds its own directory's; tests running
    /// beside it watch others). Empty outside tests: a lock a directory sync.
    @_spi(Testing) public static let syncedDirectoriesWatch = Locked<[String: [String]]>([:])

    public static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(IAPError) {
        var off = 0
        while off < bytes.count {
            let n = write(fd, bytes.baseAddress! + off, bytes.count - off)
            if n < 0 {
                if errno == EINTR { continue }
                throw IAPError(.io, "write failed: \(errnoText)")
            }
            off += n
        }
    }

    public static func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws(IAPError) {
        var failure: IAPError? = nil
        bytes.withUnsafeBytes { (b: UnsafeRawBufferPointer) in
            do throws(IAPError) { try writeAll(fd, b) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    /// Reads a whole regular file (nil when it does not exist). Never blocks
    /// on an odd file: opened non-blocking, and anything but a regular file
    /// (a FIFO, a device, a directory) is refused before a byte is read; one
    /// larger than `limit` too. `noFollow`: a symbolic link is refused (the
    /// SDK's own files are never links: one to /dev/zero would read forever).
    public static func readFile(_ path: String, limit: Int = 1 << 30, noFollow: Bool = false) throws(IAPError) -> [UInt8]? {
        guard let got = try readPrefix(path, upTo: limit, noFollow: noFollow) else { return nil }
        guard got.isWhole else {
            throw IAPError(.io, "\(path) is \(got.size) bytes, more than the \(limit) allowed: move it away")
        }
        return got.bytes
    }

    /// What `readPrefix` read: the first bytes of the file, and its size.
    public struct Prefix: Sendable {
        public var bytes: [UInt8]
        /// The file's size (at least what was read; more when it grew).
        public var size: Int
        /// True when `bytes` is the whole file.
        public var isWhole: Bool { bytes.count == size }
    }

    /// Reads at most `limit` bytes from the start of a regular file (nil when
    /// it does not exist), as `readFile` checks it, and says how large it is:
    /// a file over the limit is read up to it, never into memory whole.
    public static func readPrefix(_ path: String, upTo limit: Int, noFollow: Bool = false) throws(IAPError) -> Prefix? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | (noFollow ? O_NOFOLLOW : 0))
        if fd < 0 {
            if errno == ENOENT { return nil }
            if errno == ELOOP { throw IAPError(.io, "\(path) is a symbolic link; the SDK's files never are: move it away") }
            throw IAPError(.io, "cannot open \(path): \(errnoText)")
        }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw IAPError(.io, "cannot stat \(path): \(errnoText)") }
        guard (st.st_mode & S_IFMT) == S_IFREG else {
            throw IAPError(.io, "\(path) is not a regular file (a FIFO, device or directory): move it away")
        }
        let size = Int(st.st_size)
        // What fstat reports is read straight into the array: one
        // allocation, no buffer zeroed and copied (the outbox and the
        // simulator's log are read whole at every open).
        let limit = max(limit, 0)
        let first = min(max(size, 0), limit)
        var failure: Int32 = 0
        var out = [UInt8](unsafeUninitializedCapacity: first) { buf, count in
            count = 0
            while count < first {
                let n = read(fd, buf.baseAddress! + count, first - count)
                if n < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return
                }
                if n == 0 { return }  // shorter than fstat said: it shrank while read
                count += n
            }
        }
        if failure != 0 { throw IAPError(.io, "cannot read \(path): \(String(cString: strerror(failure)))") }
        if out.count < first { return Prefix(bytes: out, size: out.count) }
        // Bytes past what fstat reported: a file that grew while it was read.
        // One byte first, so the usual end of file needs no buffer; then a
        // chunk at a time.
        var chunk: [UInt8] = []
        while out.count < limit {
            let n: Int
            if chunk.isEmpty {
                var byte: UInt8 = 0
                n = read(fd, &byte, 1)
                if n == 1 {
                    out.append(byte)
                    chunk = [UInt8](repeating: 0, count: 1 << 12)
                    continue
                }
            } else {
                let want = min(chunk.count, limit - out.count)
                n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress!, want) }
                if n > 0 {
                    out.append(contentsOf: chunk[0..<n])
                    continue
                }
            }
            if n < 0 {
                if errno == EINTR { continue }
                throw IAPError(.io, "cannot read \(path): \(errnoText)")
            }
            return Prefix(bytes: out, size: out.count)
        }
        // At the limit: whole only if nothing follows (a file that grew
        // while it was read counts as larger).
        var probe: UInt8 = 0
        while true {
            let n = read(fd, &probe, 1)
            if n < 0 && errno == EINTR { continue }
            if n == 0 { return Prefix(bytes: out, size: out.count) }
            return Prefix(bytes: out, size: max(size, out.count + 1))
        }
    }

    /// A name beside `path` for a bad file set aside: `<path>.damaged-<ms>`
    /// (with `-<n>` when taken), before `ext` when `path` ends with it.
    public static func damagedPath(_ path: String, ext: String = "") -> String {
        let stem = !ext.isEmpty && path.hasSuffix(ext) ? String(path.dropLast(ext.count)) : path
        let ms = nowMs()
        var candidate = stem + ".damaged-\(ms)" + ext
        var n = 1
        while exists(candidate) {
            candidate = stem + ".damaged-\(ms)-\(n)" + ext
            n += 1
        }
        return candidate
    }

    /// Moves a bad file (or whatever is at `path`: a directory, a FIFO, a
    /// link) aside to `damagedPath`, durably; returns where it went.
    public static func setAside(_ path: String, ext: String = "") throws(IAPError) -> String {
        let aside = damagedPath(path, ext: ext)
        guard rename(path, aside) == 0 else { throw IAPError(.io, "cannot move \(path) aside to \(aside): \(errnoText)") }
        try syncDirectory(parent(of: path))
        return aside
    }

    /// A second name for the file at `path` (no copy): false when the file
    /// system refuses hard links.
    public static func link(_ path: String, as other: String) -> Bool {
        #if canImport(Glibc)
        return Glibc.link(path, other) == 0
        #elseif canImport(Musl)
        return Musl.link(path, other) == 0
        #else
        return Darwin.link(path, other) == 0
        #endif
    }

    /// Writes `bytes` to `path` so that a crash leaves either the old file or
    /// the new one, never neither: temporary file, sync, rename, sync the
    /// directory. `sync: false` skips the syncs (non-durable state only).
    public static func replaceFile(_ path: String, with bytes: [UInt8], sync: Bool = true,
                                   beforeRename: () -> Void = {}) throws(IAPError) {
        let tmp = path + ".tmp"
        try clearTemporary(tmp)
        let fd = try createOwnerOnly(tmp, flags: O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC)
        do {
            try writeAll(fd, bytes)
            if sync { try syncData(fd) }
        } catch {
            close(fd)
            unlink(tmp)
            throw error
        }
        close(fd)
        beforeRename()
        guard rename(tmp, path) == 0 else {
            let e = errnoText
            unlink(tmp)
            throw IAPError(.io, "cannot rename \(tmp): \(e)")
        }
        if sync { try syncDirectory(parent(of: path)) }
    }

    /// Opens `path` with `flags` (which include `O_CREAT`), owner-only
    /// (0600) even when it already existed with a wider mode, and on Apple
    /// devices in the protection class the outbox needs. Every path is one
    /// of the SDK's own names, never followed as a symbolic link (one in a
    /// copied dataDir had a game's save chmodded and overwritten). A file of
    /// ours the process may not write (its mode narrowed) is given back its
    /// mode once: refused, it refused every iap_open.
    public static func createOwnerOnly(_ path: String, flags: Int32) throws(IAPError) -> Int32 {
        var fd = open(path, flags | O_NOFOLLOW, 0o600)
        if fd < 0 && errno == EACCES && nonRegularKind(path) == nil && chmod(path, 0o600) == 0 {
            fd = open(path, flags | O_NOFOLLOW, 0o600)
        }
        guard fd >= 0 else { throw IAPError(.io, "cannot open \(path): \(errnoText)") }
        _ = fchmod(fd, 0o600)
        applyProtectionClass(fd)
        return fd
    }

    /// Makes room for a temporary file of the SDK's at `tmp`: a leftover
    /// file or link is removed (the link itself, never what it names);
    /// anything else (a directory) is set aside. A directory there refused
    /// every open that had to write the file.
    public static func clearTemporary(_ tmp: String) throws(IAPError) {
        switch nonRegularKind(tmp) {
        case nil, "a symbolic link": unlink(tmp)
        default: _ = try setAside(tmp)
        }
    }

    /// Apple devices encrypt files by protection class. StoreKit can deliver
    /// a transaction while the device is locked (a renewal, an Ask to Buy
    /// approval, a purchase finishing in the background), so the outbox must
    /// stay writable then: NSFileProtectionCompleteUntilFirstUserAuthentication,
    /// which is data protection class C. Set here through `fcntl` so the SDK
    /// needs no Foundation; a file system without data protection refuses it,
    /// which is harmless. New files also inherit their directory's class.
    public static func applyProtectionClass(_ fd: Int32) {
        #if canImport(Darwin) && (os(iOS) || os(tvOS) || os(watchOS) || os(visionOS))
        let setProtectionClass: Int32 = 64  // F_SETPROTECTIONCLASS, <sys/fcntl.h>
        let classC: Int32 = 3               // PROTECTION_CLASS_C
        _ = fcntl(fd, setProtectionClass, classC)
        #endif
    }

    /// The directory holding `path` ("/a/b/" and "/a/b" both give "/a").
    public static func parent(of path: String) -> String {
        let path = withoutTrailingSlashes(path)
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// `path` without its trailing slashes; "/" stays "/".
    public static func withoutTrailingSlashes(_ path: String) -> String {
        var p = Substring(path)
        while p.count > 1, p.hasSuffix("/") { p = p.dropLast() }
        return String(p)
    }

    public static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    /// The process's working directory (where a relative path is read
    /// from), or nil when it cannot be told.
    public static var currentDirectory: String? {
        var buf = [CChar](repeating: 0, count: 4096)
        guard getcwd(&buf, buf.count) != nil else { return nil }
        return String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `path` with repeated slashes, "." components and trailing slashes
    /// gone: "//d1/./" and "/d1" name one directory, whatever the file
    /// system ("..", symbolic links: not resolved).
    public static func lexicallyNormal(_ path: String) -> String {
        let parts = path.split(separator: "/", omittingEmptySubsequences: true).filter { $0 != "." }
        return (path.hasPrefix("/") ? "/" : "") + parts.joined(separator: "/")
    }

    /// What is at `path` when it is not a regular file ("a directory", "a
    /// FIFO", "a symbolic link", ...); nil for a regular file or nothing.
    /// `lstat`: a link is reported as one, never followed, and a FIFO is
    /// never opened (an open would block).
    public static func nonRegularKind(_ path: String) -> String? {
        var st = stat()
        guard lstat(path, &st) == 0 else { return nil }
        switch st.st_mode & S_IFMT {
        case S_IFREG: return nil
        case S_IFDIR: return "a directory"
        case S_IFIFO: return "a FIFO"
        case S_IFLNK: return "a symbolic link"
        case S_IFSOCK: return "a socket"
        default: return "a device"
        }
    }

    /// `prepareDirectory`'s checks, creating nothing: an open checks dataDir
    /// this way before the store makes its own directory, so a dataDir the
    /// open would refuse leaves nothing behind (docs/HARDENING.md).
    public static func checkDirectory(_ path: String, role: String) throws(IAPError) {
        let path = try checkedPath(path, role: role)
        var st = stat()
        if stat(path, &st) == 0 {
            guard (st.st_mode & S_IFMT) == S_IFDIR else { throw IAPError(.io, "\(role) \(path) exists and is not a directory") }
            guard access(path, W_OK | X_OK) == 0 else { throw IAPError(.io, "\(role) \(path) is not writable") }
        } else {
            try checkParent(of: path, role: role)
            let parentPath = parent(of: path)
            guard access(parentPath, W_OK | X_OK) == 0 else {
                throw IAPError(.io, "cannot create \(role) \(path): its parent \(parentPath) is not writable")
            }
        }
    }

    /// A config's directory path, checked (not empty, absolute, no NUL) and
    /// without trailing slashes.
    private static func checkedPath(_ path: String, role: String) throws(IAPError) -> String {
        guard !path.isEmpty else { throw IAPError(.badConfig, "\(role) is empty") }
        guard path.hasPrefix("/") else { throw IAPError(.badConfig, "\(role) must be an absolute path, got \"\(path)\"") }
        guard !path.utf8.contains(0) else { throw IAPError(.badConfig, "\(role) contains a NUL byte") }
        return withoutTrailingSlashes(path)
    }

    /// A missing directory can be created only in an existing directory:
    /// the message says which of the two its parent is not.
    private static func checkParent(of path: String, role: String) throws(IAPError) {
        let parentPath = parent(of: path)
        var pst = stat()
        guard stat(parentPath, &pst) == 0 else {
            throw IAPError(.io, "\(role) \(path) does not exist and its parent \(parentPath) does not exist either (only the last component is created)")
        }
        guard (pst.st_mode & S_IFMT) == S_IFDIR else {
            throw IAPError(.io, "\(role) \(path) does not exist and its parent \(parentPath) is not a directory")
        }
    }

    /// Checks a data directory the way the config promises: absolute, a
    /// directory, writable; created (owner-only) when only its last
    /// component is missing. Not synced here: `lockDirectory` marks it for
    /// anchoring (`syncDirectory`, `anchorDirectory`).
    public static func prepareDirectory(_ path: String, role: String) throws(IAPError) {
        let path = try checkedPath(path, role: role)
        var st = stat()
        if stat(path, &st) == 0 {
            guard (st.st_mode & S_IFMT) == S_IFDIR else { throw IAPError(.io, "\(role) \(path) exists and is not a directory") }
        } else {
            try checkParent(of: path, role: role)
            if mkdir(path, 0o700) != 0 && errno != EEXIST {
                throw IAPError(.io, "cannot create \(role) \(path): \(errnoText)")
            }
            let dfd = open(path, O_RDONLY | O_CLOEXEC)
            if dfd >= 0 {
                applyProtectionClass(dfd)
                close(dfd)
            }
        }
        guard access(path, W_OK | X_OK) == 0 else { throw IAPError(.io, "\(role) \(path) is not writable") }
        // Nothing is synced here: the directory's entry (and its own
        // entries) are made durable before the SDK acknowledges a write in
        // it or acts on what it read there (`syncDirectory`,
        // `anchorDirectory`; `lockDirectory` comes next).
    }

    /// Takes an exclusive lock on `dir` for as long as the returned
    /// descriptor is open (`unlockDirectory`). A second bridge on the same
    /// directory (this process or another) is refused.
    ///
    /// `flock` locks, on the lock file `dir/name` and on the directory
    /// itself. A flock lock belongs to the descriptor that took it (its open
    /// file description), so nothing else this process does to the
    /// directory releases it. POSIX record locks (`fcntl` F_SETLK, `lockf`),
    /// used before, belong to the process and go with the first `close` of
    /// any descriptor of the same file: a game that listed its save
    /// directory (opendir/closedir) let a second process in once the lock
    /// file was gone (issue 21). The lock on the directory is what holds
    /// when the lock file is deleted (a game's "clear cache"): a newcomer
    /// makes a new lock file and locks that, but not the directory.
    ///
    /// The price of flock: a child the game forks shares the descriptors
    /// until it execs (they are close-on-exec) or exits. A bridge reopened
    /// in that window (a posix_spawn's microseconds) waits for it, up to
    /// `lockWaitMs`. A child that forks without exec closes its copies in
    /// the fork handler (Linux: `iapc_note_lock_fd`), so it does not keep
    /// the directory busy while it lives.
    public static func lockDirectory(_ dir: String, name: String = ".lock") throws(IAPError) -> Int32 {
        var st = stat()
        guard stat(dir, &st) == 0 else { throw IAPError(.io, "cannot stat \(dir): \(errnoText)") }
        // Bridges within this process are kept apart here first, keyed by
        // the directory's device and inode so two spellings of one path
        // collide (and are refused at once, without waiting).
        let key = "\(st.st_dev):\(st.st_ino)"
        let claimed = lockedDirectories.withLock { $0.keys.insert(key).inserted }
        guard claimed else { throw IAPError(.busy, "\(dir) is in use by another open bridge") }
        // A lock file that is not one (a link, a directory: a copied
        // dataDir, a tool) is set aside: no other bridge can hold it, and
        // the directory's own lock, below, still keeps two processes out.
        if nonRegularKind(dir + "/" + name) != nil {
            do throws(IAPError) { _ = try setAside(dir + "/" + name) } catch {
                lockedDirectories.withLock { _ = $0.keys.remove(key) }
                throw error
            }
        }
        let fd: Int32
        do throws(IAPError) { fd = try createOwnerOnly(dir + "/" + name, flags: O_RDWR | O_CREAT | O_CLOEXEC) } catch {
            lockedDirectories.withLock { _ = $0.keys.remove(key) }
            throw IAPError(.io, "cannot create lock file in \(dir): \(error.message)")
        }
        let fileLock = exclusiveLock(fd)
        if fileLock != 0 {
            let text = String(cString: strerror(fileLock))
            close(fd)
            lockedDirectories.withLock { _ = $0.keys.remove(key) }
            if fileLock == EWOULDBLOCK { throw IAPError(.busy, "\(dir) is in use by another open bridge (another process)") }
            throw IAPError(.io, "cannot lock \(dir)/\(name): \(text)")
        }
        // A file system that cannot lock a directory (or open one) still
        // has the lock file's lock.
        let dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dfd >= 0 && exclusiveLock(dfd) == EWOULDBLOCK {
            close(dfd)
            close(fd)
            lockedDirectories.withLock { _ = $0.keys.remove(key) }
            throw IAPError(.busy, "\(dir) is in use by another open bridge in another process (its lock file was deleted)")
        }
        lockedDirectories.withLock {
            $0.byFD[fd] = key
            if dfd >= 0 { $0.directoryFD[key] = dfd }
            $0.unanchored.insert(key)
        }
        iapc_note_lock_fd(fd, 1)
        if dfd >= 0 { iapc_note_lock_fd(dfd, 1) }
        return fd
    }

    /// How long `lockDirectory` waits for a lock another process holds
    /// before it answers busy: a forked child's copy of this process's
    /// descriptors lives until its exec.
    static let lockWaitMs = 250

    /// An exclusive flock on `fd`, waiting up to `lockWaitMs` for another
    /// holder to let go: 0, or the errno (EWOULDBLOCK: held elsewhere).
    private static func exclusiveLock(_ fd: Int32) -> Int32 {
        let start = monotonicNs()
        while true {
            if flock(fd, LOCK_EX | LOCK_NB) == 0 { return 0 }
            let e = errno
            guard e == EWOULDBLOCK || e == EINTR else { return e }
            if monotonicNs() - start > UInt64(lockWaitMs) * 1_000_000 { return EWOULDBLOCK }
            if e == EWOULDBLOCK { usleep(2_000) }
        }
    }

    /// Releases a lock taken by `lockDirectory` and closes its descriptor.
    public static func unlockDirectory(_ fd: Int32) {
        lockedDirectories.withLock { held in
            if let key = held.byFD.removeValue(forKey: fd) {
                held.keys.remove(key)
                held.unanchored.remove(key)
                if let dfd = held.directoryFD.removeValue(forKey: key) {
                    iapc_note_lock_fd(dfd, 0)
                    close(dfd)
                }
            }
            iapc_note_lock_fd(fd, 0)
            close(fd)
        }
    }

    /// The "device:inode" of every directory this process holds (or is
    /// taking) a lock on, and the descriptor of each lock taken.
    private struct HeldLocks {
        var keys = Set<String>()
        var byFD: [Int32: String] = [:]
        /// The held directory's own descriptor (its shared lock), by key.
        var directoryFD: [String: Int32] = [:]
        /// Locked directories whose parent has not been synced since the
        /// lock was taken (`syncDirectory` does it before their first sync).
        var unanchored = Set<String>()
    }
    private static let lockedDirectories = Locked(HeldLocks())

    public static func nowMs() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }

    public static func monotonicNs() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }
}

import CIAPSupport

@inline(__always)
func iapAtomicIncrement(_ p: UnsafeMutablePointer<Int64>) -> Int64 { iapc_atomic_add_i64(p, 1) }
