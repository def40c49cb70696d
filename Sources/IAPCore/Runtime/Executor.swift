/// Where a bridge's delivery state lives and its effects (disk writes and
/// syncs, store calls, emits) run: one serial executor per bridge. Game-facing
/// calls validate, post a job and return; nothing they do waits for the disk
/// (C10). `SDKThread` is the real one; tests drive `ManualExecutor` step by
/// step (the model checker explores interleavings that way).
public protocol Executor: AnyObject, Sendable {
    /// Runs `job` after every job posted before it. Returns false when the
    /// executor has stopped (the job is dropped).
    @discardableResult
    func post(_ job: @escaping @Sendable () -> Void) -> Bool

    /// Runs `job` once `ms` milliseconds (of the executor's clock) have
    /// passed. Returns false when the executor has stopped.
    @discardableResult
    func schedule(afterMs ms: Int64, _ job: @escaping @Sendable () -> Void) -> Bool

    /// Runs `job` the next time no posted job is waiting (timers not yet due
    /// do not count): a barrier behind everything posted before, and behind
    /// everything those jobs posted in turn.
    @discardableResult
    func whenIdle(_ job: @escaping @Sendable () -> Void) -> Bool

    /// True when the caller is running on the executor.
    var isCurrent: Bool { get }

    /// Posts `job` and waits until it ran (see the extension's default).
    @discardableResult
    func runAndWait(_ job: @escaping @Sendable () -> Void) -> Bool

    /// Like `runAndWait`, behind everything queued and what that produces.
    @discardableResult
    func runWhenIdleAndWait(_ job: @escaping @Sendable () -> Void) -> Bool
}

/// What a store uses to run work later on its bridge's executor (the
/// simulator's purchase delay and renewal timer): no thread or timer of its own.
public struct StoreScheduler: Sendable {
    public let executor: Executor
    public init(executor: Executor) { self.executor = executor }

    @discardableResult
    public func after(ms: Int64, _ job: @escaping @Sendable () -> Void) -> Bool {
        executor.schedule(afterMs: ms, job)
    }
}

extension Executor {
    /// Posts `job` and waits until it ran (inline when already on the
    /// executor). Only the calls allowed to wait use it: open, close, flush,
    /// the simulator's commands. Returns false when the executor had stopped.
    @discardableResult
    public func runAndWait(_ job: @escaping @Sendable () -> Void) -> Bool {
        if isCurrent {
            job()
            return true
        }
        let done = OneShot()
        guard post({ job(); done.signal() }) else { return false }
        done.wait()
        return true
    }

    /// Like `runAndWait`, but behind everything queued and everything that
    /// produces (`whenIdle`).
    @discardableResult
    public func runWhenIdleAndWait(_ job: @escaping @Sendable () -> Void) -> Bool {
        let done = OneShot()
        guard whenIdle({ job(); done.signal() }) else { return false }
        done.wait()
        return true
    }
}
