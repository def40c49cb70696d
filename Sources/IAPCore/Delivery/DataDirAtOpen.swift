/// What `Coordinator.open` reads from `dataDir` before the bridge exists:
/// the directory's lock, the outbox, this install's identifier.
struct DataDirAtOpen {
    let lockFD: Int32
    let outbox: Outbox
    let report: Outbox.OpenReport
    let install: InstallID.Loaded

    /// Prepares and locks `dataDir`, then reads `install-id` and the outbox.
    /// Unlocks on failure. `beforeRepair` runs before a damaged file is set
    /// aside or rewritten, and may refuse (Coordinator.open: the store failed).
    static func read(_ config: BridgeConfig, storage: any LogStorage,
                     beforeRepair: () throws(IAPError) -> Void = {}) throws(IAPError) -> DataDirAtOpen {
        try POSIX.prepareDirectory(config.dataDir, role: "dataDir")
        let fd = try POSIX.lockDirectory(config.dataDir)
        do throws(IAPError) {
            let install = try InstallID.load(dataDir: config.dataDir, beforeRepair: beforeRepair)
            let (outbox, report) = try Outbox.open(directory: config.dataDir, storage: storage, beforeRepair: beforeRepair)
            return DataDirAtOpen(lockFD: fd, outbox: outbox, report: report, install: install)
        } catch {
            POSIX.unlockDirectory(fd)
            throw error
        }
    }

    /// C2 at a reopen: results read here are shown again only once dataDir's
    /// entry and the outbox's bytes are durable (the game may have moved or
    /// restored it unsynced; an earlier sync may have failed, or its process
    /// been killed before it). An open with nothing to show syncs nothing.
    /// The store is open by then: a `dataDir` inside the simulator's locked
    /// `stateDir` anchors that in turn.
    func anchorIfShowing(_ config: BridgeConfig) throws(IAPError) {
        guard outbox.liveCount > 0 else { return }
        try POSIX.anchorDirectory(config.dataDir)
        try outbox.makeOpenedBytesDurable()
    }

    /// Gives everything back when the bridge is not made after all.
    func close() {
        outbox.close()
        POSIX.unlockDirectory(lockFD)
    }
}
