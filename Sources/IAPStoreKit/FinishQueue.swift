import IAPCore

/// Finishes StoreKit transactions one at a time, each within a time limit.
///
/// `Transaction.finish()` has been seen never to return. Waiting for it would
/// stall every later finish; so each one gets `limitMs`, after which the
/// queue moves on. The abandoned call keeps its task (nothing can cancel
/// Apple's work); the transaction stays unfinished, StoreKit re-delivers it at
/// the next launch, the outbox's tombstone recognizes it, and it is finished
/// then. A transaction already waiting or in progress is not queued twice.
final class FinishQueue: @unchecked Sendable {
    typealias Work = @Sendable () async -> Void

    let limitMs: Int64
    private let onTimeout: @Sendable (String) -> Void
    private let lock = Lock()
    private var waiting: [(id: String, work: Work)] = []
    private var busy: Set<String> = []
    private var draining = false
    private var timedOut = 0

    init(limitMs: Int64, onTimeout: @escaping @Sendable (String) -> Void) {
        self.limitMs = limitMs
        self.onTimeout = onTimeout
    }

    /// Queues `work` (the finish of transaction `id`) unless `id` is queued
    /// or running already. Returns at once.
    func submit(_ id: String, _ work: @escaping Work) {
        let start: Bool = lock.withLock {
            guard busy.insert(id).inserted else { return false }
            waiting.append((id, work))
            guard !draining else { return false }
            draining = true
            return true
        }
        if start && !tasks.spawn({ await self.drain() }) {
            lock.withLock { draining = false }
        }
    }

    /// Every finish task: `stop` waits for them (C8).
    private let tasks = TaskTracker()
    /// Set by `stop` once the queue may take no more: `next` then ends the
    /// drain, whatever is left (finished at the next launch: the outbox's
    /// tombstones recognise the re-delivery).
    private var stopped = false
    /// Signalled when the drain has nothing left (`stop` waits for it).
    private var idle: OneShot? = nil

    /// Lets the finishes already queued (a close's last confirms) run for
    /// up to `limitMs`, then drops what is left, cancels the one under way
    /// and waits for its task to end. Nothing of the queue runs after this
    /// returns but Apple's own `finish()` calls it gave up on (nothing can
    /// cancel those; they return into no SDK code).
    func stop(limitMs: Int64) {
        let due = SDKThread.nowMs() + limitMs
        let wait: OneShot? = lock.withLock {
            guard draining else { return nil }
            let o = OneShot()
            idle = o
            return o
        }
        _ = wait?.wait(timeoutMs: limitMs)
        lock.withLock { stopped = true }
        tasks.stop(limitMs: max(50, due - SDKThread.nowMs()))
    }

    /// Finishes that ran out of time so far.
    var timeoutCount: Int { lock.withLock { timedOut } }

    /// Finish tasks still running (0 once `stop` returned: C8).
    var runningCount: Int { tasks.count }

    private func drain() async {
        while let (id, work) = next() {
            let inTime = await TimeLimit.run(ms: limitMs, work)
            let cancelled = Task.isCancelled   // stopped by the close: no timeout
            lock.withLock {
                busy.remove(id)
                if !inTime && !cancelled { timedOut += 1 }
            }
            if !inTime && !cancelled { onTimeout(id) }
        }
    }

    private func next() -> (String, Work)? {
        let (w, done): ((String, Work)?, OneShot?) = lock.withLock {
            guard !waiting.isEmpty, !stopped, !Task.isCancelled else {
                draining = false
                defer { idle = nil }
                return (nil, idle)
            }
            let w = waiting.removeFirst()
            return ((w.id, w.work), nil)
        }
        done?.signal()
        return w
    }
}

/// Runs async work with a deadline it cannot overrun.
enum TimeLimit {
    /// Starts `work` in its own task; returns true when it completed within
    /// `ms`, false when the time ran out first (the work is then abandoned,
    /// still running).
    /// A cancelled caller (the bridge closing) gets false at once, and the
    /// timer ends with it: only `work` itself may still be running then.
    static func run(ms: Int64, _ work: @escaping @Sendable () async -> Void) async -> Bool {
        let gate = Gate()
        let worker = Task {
            await work()
            gate.open(true)
        }
        let timer = Task {
            try? await Task.sleep(nanoseconds: UInt64(max(1, ms)) * 1_000_000)
            gate.open(false)
        }
        live.withLock { $0 += 1 }
        let inTime = await withTaskCancellationHandler {
            await gate.wait()
        } onCancel: {
            // The work stops where it cooperates (a scan of StoreKit's
            // lists); Apple's own call under way, if any, is left to return.
            worker.cancel()
            gate.open(false)
        }
        timer.cancel()
        _ = await timer.value
        live.withLock { $0 -= 1 }
        return inTime
    }

    /// Calls of `run` under way with their timers (0 once every bridge
    /// closed: C8).
    static var runningCount: Int { live.withLock { $0 } }
    private static let live = Locked(0)

    /// A one-shot result that can be set before or after someone waits.
    private final class Gate: @unchecked Sendable {
        private let lock = Lock()
        private var value: Bool? = nil
        private var waiter: CheckedContinuation<Bool, Never>? = nil

        func open(_ v: Bool) {
            let w: CheckedContinuation<Bool, Never>? = lock.withLock {
                guard value == nil else { return nil }
                value = v
                defer { waiter = nil }
                return waiter
            }
            w?.resume(returning: v)
        }

        func wait() async -> Bool {
            await withCheckedContinuation { (c: CheckedContinuation<Bool, Never>) in
                let ready: Bool? = lock.withLock {
                    if let value { return value }
                    waiter = c
                    return nil
                }
                if let ready { c.resume(returning: ready) }
            }
        }
    }
}
