/// Store events whose result could not be stored (a failed write or sync):
/// handled again on a fresh file, with a back-off, once the disk recovers
/// (C12). Nothing is shown before it is durable.
extension Coordinator {
    func scheduleRetry() {
        assertOwner()
        guard retryDelayMs == 0 else { return }
        retryDelayMs = 100
        executor.schedule(afterMs: retryDelayMs) { [weak self] in self?.retryStores() }
    }

    /// Handles again the events whose result could not be stored; backs off
    /// (100 ms doubling to 5 s) while the disk keeps failing.
    func retryStores() {
        assertOwner()
        guard !closed, !retryEvents.isEmpty else { retryDelayMs = 0; return }
        let events = retryEvents
        retryEvents = []
        retrying = true
        for e in events {
            storeFailed = false
            dispatch(e)
            if storeFailed { retryEvents.append(e) }
        }
        retrying = false
        if retryEvents.isEmpty {
            retryDelayMs = 0
        } else {
            retryDelayMs = min(retryDelayMs * 2, 5_000)
            executor.schedule(afterMs: retryDelayMs) { [weak self] in self?.retryStores() }
        }
    }
}
