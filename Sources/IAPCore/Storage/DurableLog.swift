/// An open append-only log of `RecordFrame` frames: the outbox's file and
/// the simulated store's. The release implementation is `POSIXLogFile`;
/// tests wrap it (IAPTestSupport's `SimulatedDisk`) to fail chosen
/// operations and record what reached the disk.
public protocol DurableLog: AnyObject {
    /// Where the log lives (a wrapper keeps the real file's path).
    var path: String { get }
    /// Bytes in the log, counting appends not synced yet.
    var size: Int { get }
    /// Appends already-framed bytes. Not durable until `sync()`. On failure
    /// the log is cut back to where it was, so a failed append never leaves
    /// part of a frame in front of the frames written after it.
    func appendFramed(_ framed: [UInt8]) throws(IAPError)
    /// Makes every append so far durable (and the log's name, after a
    /// create or a rewrite).
    func sync() throws(IAPError)
    /// Cuts the log back to `length` (drops a torn tail), durably.
    func truncate(to length: Int) throws(IAPError)
    /// Replaces the whole log with `payloads` atomically (old or new, never
    /// neither); appends then continue on the new log.
    func rewrite(_ payloads: [[UInt8]]) throws(IAPError)
    func close_()
}

/// Where logs live: opens them and says how the outbox treats them.
/// `POSIXStorage` (real files, fsync) everywhere except tests.
public protocol LogStorage: Sendable {
    /// Opens (creating, owner-only) the log `name` in `directory` and returns
    /// it with the scan of what it held and the bytes read (at most
    /// `POSIXLogFile.maxFileBytes`: `scan.unreadBytes` says how many more
    /// there are). The caller decides what to do with damage.
    func openLog(directory: String, name: String) throws(IAPError) -> (log: any DurableLog, scan: RecordFrame.Scan, bytes: [UInt8])
    /// Size above which an outbox log holding mostly confirmed history is
    /// compacted; read at each check (a test may change it mid-session).
    var compactionThreshold: Int { get }
    /// True only in the power-loss explorer's check of itself: the outbox
    /// trusts a log again after a failed write or sync (as 1.0 did) instead
    /// of moving to a fresh file (C12). Always false outside tests.
    var trustsLogAfterFailedSync: Bool { get }
}

extension LogStorage {
    public var compactionThreshold: Int { Outbox.defaultCompactThreshold }
    public var trustsLogAfterFailedSync: Bool { false }
}

/// The release storage: real files in real directories.
public struct POSIXStorage: LogStorage {
    public init() {}

    public func openLog(directory: String, name: String) throws(IAPError) -> (log: any DurableLog, scan: RecordFrame.Scan, bytes: [UInt8]) {
        let (file, scan, bytes) = try POSIXLogFile.open(path: directory + "/" + name)
        return (file, scan, bytes)
    }
}
