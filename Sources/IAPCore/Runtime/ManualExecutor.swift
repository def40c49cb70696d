/// An executor that runs nothing by itself: a test decides when each posted
/// job runs and when time passes. The model checker drives a bridge with it,
/// one step at a time, to explore every interleaving of store events, game
/// calls and crashes. Single-threaded use only.
@_spi(Testing) public final class ManualExecutor: Executor, @unchecked Sendable {
    private var jobs: [@Sendable () -> Void] = []
    private var idle: [@Sendable () -> Void] = []
    private var timers: [(due: Int64, seq: Int, job: @Sendable () -> Void)] = []
    private var seq = 0
    private var running = false
    public private(set) var nowMs: Int64 = 0
    public private(set) var stopped = false

    public init() {}

    public var pendingJobs: Int { jobs.count }
    public var pendingTimers: Int { timers.count }
    public var isCurrent: Bool { running }

    @discardableResult
    public func post(_ job: @escaping @Sendable () -> Void) -> Bool {
        guard !stopped else { return false }
        jobs.append(job)
        return true
    }

    @discardableResult
    public func schedule(afterMs ms: Int64, _ job: @escaping @Sendable () -> Void) -> Bool {
        guard !stopped else { return false }
        seq += 1
        timers.append((nowMs + max(0, ms), seq, job))
        timers.sort { ($0.due, $0.seq) < ($1.due, $1.seq) }
        return true
    }

    @discardableResult
    public func whenIdle(_ job: @escaping @Sendable () -> Void) -> Bool {
        guard !stopped else { return false }
        idle.append(job)
        return true
    }

    /// Runs the oldest posted job (or, with none, an idle job); false when
    /// there was nothing to run.
    @discardableResult
    public func step() -> Bool {
        let job: (@Sendable () -> Void)
        if !jobs.isEmpty { job = jobs.removeFirst() } else if !idle.isEmpty { job = idle.removeFirst() } else { return false }
        run(job)
        return true
    }

    /// Runs posted and idle jobs until none is left.
    public func runUntilIdle() { while step() {} }

    /// Moves the clock to the next timer and runs it; false when none is set.
    @discardableResult
    public func fireNextTimer() -> Bool {
        guard !timers.isEmpty else { return false }
        let t = timers.removeFirst()
        nowMs = max(nowMs, t.due)
        run(t.job)
        return true
    }

    /// Runs everything, timers included, until nothing is left.
    public func drainAll() {
        repeat { runUntilIdle() } while fireNextTimer()
    }

    /// Drops everything not run yet (the process died).
    public func kill() {
        stopped = true
        jobs = []; idle = []; timers = []
    }

    @discardableResult
    public func runAndWait(_ job: @escaping @Sendable () -> Void) -> Bool {
        guard !stopped else { return false }
        runUntilIdle()
        run(job)
        return true
    }

    @discardableResult
    public func runWhenIdleAndWait(_ job: @escaping @Sendable () -> Void) -> Bool {
        guard !stopped else { return false }
        runUntilIdle()
        run(job)
        runUntilIdle()
        return true
    }

    private func run(_ job: @Sendable () -> Void) {
        let was = running
        running = true
        job()
        running = was
    }
}
