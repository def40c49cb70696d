#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import IAPCore

/// A test storage (`LogStorage`) over real files: every log it opens is a
/// `POSIXLogFile` wrapped so this disk can fail chosen operations (a full or
/// failing disk: C12 without a broken disk) and record, in order, what
/// reached the files (the power-loss explorer rebuilds every state a power
/// cut could leave from it). The files stay real, so a test can reopen them
/// with a plain bridge. Everything is per instance; thread-safe.
public final class SimulatedDisk: LogStorage, @unchecked Sendable {
    /// `shortWrite`: a write that stores part of its bytes, then fails
    /// (ENOSPC half-way through a frame).
    public enum Kind: Sendable { case write, sync, rename, directorySync, shortWrite }

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

    private struct Plan { let kind: Kind; var skip: Int; var remaining: Int; let code: Int32 }

    /// Faults and counts concern only the logs with this name (nil: every
    /// log): a test can journal the simulated store's log while only the
    /// outbox's disk fails.
    public let faultyLog: String?
    private let lock = Lock()
    private var plans: [Plan] = []
    private var counts: [Kind: Int]? = nil
    private var threshold: Int? = nil
    private var trusting = false
    private var journaling = false
    private var events: [Event] = []
    private var skippedSyncs: Set<String> = []

    public init(faultyLog: String? = nil) { self.faultyLog = faultyLog }

    // MARK: Fault plans

    /// After `skip` operations of `kind`, the next `count` fail with `code`
    /// (EIO, ENOSPC...). `count` < 0: until `clear`.
    public func inject(_ kind: Kind, after skip: Int = 0, count: Int = 1, code: Int32 = EIO) {
        lock.withLock { plans.append(Plan(kind: kind, skip: skip, remaining: count, code: code)) }
    }

    /// Starts counting operations, by kind (a fault sweep counts a
    /// workload's writes and syncs, then fails each in turn).
    public func count() { lock.withLock { counts = [:] } }

    /// How many operations of `kind` happened since `count()`.
    public func counted(_ kind: Kind) -> Int { lock.withLock { counts?[kind] ?? 0 } }

    /// Drops every fault plan and stops counting: the disk works again.
    public func clear() {
        lock.withLock {
            plans = []
            counts = nil
        }
    }

    /// Counts the operation and throws if a plan says it fails.
    func fire(_ kind: Kind, on path: String) throws(IAPError) {
        if let faultyLog, !path.hasSuffix("/" + faultyLog) { return }
        let code: Int32? = lock.withLock {
            if counts != nil { counts![kind, default: 0] += 1 }
            guard let i = plans.firstIndex(where: { $0.kind == kind && $0.remaining != 0 }) else { return nil }
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

    // MARK: Outbox options

    /// The outbox's compaction threshold on this disk (nil: the default), so
    /// a workload small enough for a test still compacts.
    public func setCompactionThreshold(_ bytes: Int?) { lock.withLock { threshold = bytes } }

    public var compactionThreshold: Int { lock.withLock { threshold } ?? Outbox.defaultCompactThreshold }

    /// The power-loss explorer's check of itself: the outbox trusts a log
    /// again after a failed sync (the fresh-file rule off). Read when an
    /// outbox opens.
    public func setTrustsLogAfterFailedSync(_ on: Bool) { lock.withLock { trusting = on } }

    public var trustsLogAfterFailedSync: Bool { lock.withLock { trusting } }

    // MARK: Journal

    /// Starts recording what the logs see (an empty record).
    public func startJournal() {
        lock.withLock {
            journaling = true
            events = []
        }
    }

    /// Stops recording; returns what was recorded.
    public func stopJournal() -> [Event] {
        lock.withLock {
            journaling = false
            skippedSyncs = []
            defer { events = [] }
            return events
        }
    }

    /// What the game was told, in order with the file events.
    public func note(_ text: String) { record(.note(text)) }

    /// Data syncs of logs whose path ends with `suffix` are left out of the
    /// record, as if they had not been made (an injected bug).
    public func skipSyncs(of suffix: String) { lock.withLock { _ = skippedSyncs.insert(suffix) } }

    func skipsSync(_ path: String) -> Bool { lock.withLock { skippedSyncs.contains { path.hasSuffix($0) } } }

    func record(_ e: Event) { lock.withLock { if journaling { events.append(e) } } }

    // MARK: LogStorage

    public func openLog(directory: String, name: String) throws(IAPError) -> (log: any DurableLog, scan: RecordFrame.Scan, bytes: [UInt8]) {
        let (file, scan, bytes, created) = try POSIXLogFile.openDeferringDirectorySync(path: directory + "/" + name)
        let log = SimulatedLog(file, on: self)
        // As POSIXStorage: a created log's entry is synced at open, an
        // existing log's directory at its first sync.
        if created {
            record(.create(file.path))
            try log.syncDirectoryIfNeeded()
        }
        return (log, scan, bytes)
    }
}
