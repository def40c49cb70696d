import IAPCore

/// Every Task the StoreKit backend starts, so that `stop` (called by
/// `iap_close`) can cancel them all and wait for them to end: nothing of the
/// bridge should run after `iap_close` returns (C8).
///
/// StoreKit cannot always be cancelled: a purchase whose payment sheet the
/// player still has open returns only when the player is done. `stop` waits
/// a bounded time for such tasks, then leaves them; a purchase answered
/// after that goes to the bridge open then, or the next one of the process
/// (LatePurchases), and after a relaunch StoreKit delivers the unfinished
/// transaction through `Transaction.updates`: with its key either way (C5). iOS apps link
/// the library statically and never unload it, so a task outliving the
/// bridge there does not run code that is gone.
final class TaskTracker: @unchecked Sendable {
    private let lock = Lock()
    private var running: [Int: Task<Void, Never>] = [:]
    private var nextID = 0
    private var stopped = false
    private var drained: OneShot? = nil

    /// Starts `work` in a Task, unless stopped. Returns false when stopped.
    @discardableResult
    func spawn(_ work: @escaping @Sendable () async -> Void) -> Bool {
        lock.withLock {
            guard !stopped else { return false }
            let id = nextID
            nextID += 1
            // The task may end before it is registered: registration and
            // removal both happen under the lock, removal only after this.
            running[id] = Task { [weak self] in
                await work()
                self?.ended(id)
            }
            return true
        }
    }

    private func ended(_ id: Int) {
        let done: OneShot? = lock.withLock {
            running[id] = nil
            return running.isEmpty ? drained : nil
        }
        done?.signal()
    }

    /// How many tasks are still running.
    var count: Int { lock.withLock { running.count } }

    /// Refuses new tasks, cancels the running ones and waits up to
    /// `limitMs` for them to end. Returns how many were still running.
    @discardableResult
    func stop(limitMs: Int64) -> Int {
        let (tasks, done): ([Task<Void, Never>], OneShot) = lock.withLock {
            stopped = true
            let d = OneShot()
            if running.isEmpty { d.signal() } else { drained = d }
            return (Array(running.values), d)
        }
        for t in tasks { t.cancel() }
        if done.wait(timeoutMs: limitMs) { return 0 }
        return count
    }
}
