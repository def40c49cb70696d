import IAPCore

/// One log of a `SimulatedDisk`: the real `POSIXLogFile`, with the disk's
/// fault plans checked and its journal written at each step, in the order
/// the file's own operations take them.
final class SimulatedLog: DurableLog {
    private let file: POSIXLogFile
    private let disk: SimulatedDisk

    init(_ file: POSIXLogFile, on disk: SimulatedDisk) {
        self.file = file
        self.disk = disk
    }

    var path: String { file.path }
    var size: Int { file.size }

    func appendFramed(_ framed: [UInt8]) throws(IAPError) {
        try disk.fire(.write, on: path)
        do throws(IAPError) { try disk.fire(.shortWrite, on: path) } catch {
            // Part of the frame reaches the file, then the disk is full; the
            // log cuts it back as after any failed append.
            let before = file.size
            try? file.appendFramed(Array(framed.prefix(max(1, framed.count / 2))))
            try? file.cutBack(to: before)
            throw error
        }
        try file.appendFramed(framed)
        disk.record(.append(path, framed))
    }

    func sync() throws(IAPError) {
        do throws(IAPError) { try disk.fire(.sync, on: path) } catch {
            disk.record(.syncFailed(path))
            throw error
        }
        try file.syncData()
        if !disk.skipsSync(path) { disk.record(.sync(path)) }
        try syncDirectoryIfNeeded()
    }

    func syncDirectoryIfNeeded() throws(IAPError) {
        // Without a create or rename to name durably, only the open's
        // anchoring of the directory (POSIX's, at most once an open) runs.
        guard file.needsDirectorySync else { return try file.syncDirectoryIfNeeded() }
        try disk.fire(.directorySync, on: path)
        try file.syncDirectoryIfNeeded()
        disk.record(.directorySync(POSIX.parent(of: path)))
    }

    func truncate(to length: Int) throws(IAPError) {
        try file.cutBack(to: length)
        disk.record(.truncate(path, length))
        try sync()
    }

    func rewrite(_ payloads: [[UInt8]]) throws(IAPError) {
        // The temporary file's write and sync, then the rename: each fails
        // where the real one would, after the temporary file exists.
        let path = self.path
        try file.replaceDeferringDirectorySync(payloads) { (step: POSIXLogFile.RewriteStep) throws(IAPError) in
            switch step {
            case .write: try disk.fire(.write, on: path)
            case .sync: try disk.fire(.sync, on: path)
            case .rename: try disk.fire(.rename, on: path)
            }
        }
        var written: [UInt8] = []
        for p in payloads { RecordFrame.encode(p, into: &written) }
        disk.record(.rewrite(path, written))
        try syncDirectoryIfNeeded()
    }

    func close_() { file.close_() }
}
