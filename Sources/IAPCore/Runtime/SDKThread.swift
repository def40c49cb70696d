import CIAPSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The SDK's one thread class. A bridge has two: its SDK thread, the one
/// owner of its delivery state (C10), and its delivery thread, which runs the
/// game's callback (MessageQueue posts its drain job here). Jobs run one at a
/// time in the order posted; timers run when due; `whenIdle` jobs run when no
/// posted job waits.
///
/// A pthread created in `start` (called by `iap_open`, where failure can be
/// reported) and joined in `stop` (called by `iap_close`), so nothing of the
/// SDK runs after `iap_close` returns and the host may unload the library
/// (C8). Not libdispatch: its worker threads outlive every bridge and crash
/// the host after `dlclose`, and it traps when it cannot get a descriptor or
/// a thread.
///
/// The callback thread (`unblocksSignals`) keeps its creator's mask but
/// unblocks the signals managed runtimes stop threads with (Mono and Boehm
/// on Linux: SIGPWR, SIGXCPU, real-time signals). A runtime attaches the
/// thread on the first callback; a thread blocking those (a libdispatch
/// worker blocks every signal) never acknowledges a suspend, and the game
/// froze at its first GC. Every other signal the creator blocked stays
/// blocked: a thread with none blocked took the SIGTERM a game blocks
/// everywhere and reads from sigwait or a signalfd, and its default action
/// killed the game before its clean shutdown (found by an attack).
public final class SDKThread: Executor, @unchecked Sendable {
    private let monitor = Monitor()
    // Every field below is read and written only under `monitor`, never
    // across a call out: Swift's run-time exclusivity checks on them (19 a
    // purchase, in the loop of `run`) can find nothing, and are off.
    @exclusivity(unchecked) private var jobs: [@Sendable () -> Void] = []
    @exclusivity(unchecked) private var jobsHead = 0
    @exclusivity(unchecked) private var idleJobs: [@Sendable () -> Void] = []
    @exclusivity(unchecked) private var idleHead = 0
    @exclusivity(unchecked) private var timers = TimerHeap<@Sendable () -> Void>()
    /// open → closing (`stop`: posts refused) → closed (the thread ended).
    @exclusivity(unchecked) private var state = Lifecycle.open
    @exclusivity(unchecked) private var thread: pthread_t?
    /// What the thread is for, in the error `start` throws.
    private let role: String

    /// Unblock the runtimes' signals in the mask the thread inherits (see
    /// the type's comment): the callback thread, which a managed runtime
    /// attaches.
    /// The SDK thread keeps its creator's mask, as any thread a game
    /// starts does (a host that blocks signals everywhere and `sigwait`s
    /// for them keeps getting them where it expects).
    private let unblocksSignals: Bool

    /// The thread's name, as a profiler, a debugger or a crash report shows
    /// it (15 bytes at most): a game developer looking at their threads sees
    /// which are the SDK's.
    private let name: String

    public init(role: String = "SDK's thread", name: String = "IAPBridge SDK", unblocksSignals: Bool = false) {
        assert(name.utf8.count <= 15, "thread names are 15 bytes at most on Linux")
        self.role = role
        self.name = name
        self.unblocksSignals = unblocksSignals
    }

    /// Starts the thread. Throws `.resource` when the system has none to give.
    /// Once only: after the first start, or after `stop`, it does nothing.
    public func start() throws(IAPError) {
        // Spawned and recorded under the monitor: the thread's first look
        // at its jobs waits for that, so `isCurrent` is right in its first
        // job, and a `stop` racing this start joins it.
        var failure: Int32 = 0
        let started: Bool? = locked {
            guard state == .open && thread == nil else { return nil }
            guard let t = Monitor.spawn({ [self] in
                name.withCString { iapc_name_this_thread($0) }
                run()
            }, failure: &failure) else { return false }
            thread = t
            return true
        }
        if started == false {
            throw IAPError(.resource, "cannot start the \(role) (\(String(cString: strerror(failure)))); close other bridges or free threads and try again")
        }
    }

    /// Monotonic milliseconds.
    public static func nowMs() -> Int64 { Monitor.nowMs() }

    @discardableResult
    public func post(_ job: @escaping @Sendable () -> Void) -> Bool {
        let accepted: Bool = locked {
            guard state == .open else { return false }
            jobs.append(job)
            return true
        }
        // Signalled after the unlock: the thread wakes to a free mutex
        // instead of waking and blocking on it at once (a second futex round
        // trip on the purchase path).
        if accepted { monitor.signal() }
        return accepted
    }

    @discardableResult
    public func schedule(afterMs ms: Int64, _ job: @escaping @Sendable () -> Void) -> Bool {
        let due = SDKThread.nowMs() + max(0, ms)
        return locked {
            guard state == .open else { return false }
            timers.insert(due: due, job)
            monitor.signal()
            return true
        }
    }

    @discardableResult
    public func whenIdle(_ job: @escaping @Sendable () -> Void) -> Bool {
        locked {
            guard state == .open else { return false }
            idleJobs.append(job)
            monitor.signal()
            return true
        }
    }

    /// Where the thread is: open until `stop`, closed once it has ended.
    public var lifecycle: Lifecycle { locked { state } }

    public var isCurrent: Bool {
        locked { thread.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
    }

    /// Ends the thread after the job under way and the jobs already posted
    /// (timers not due are dropped); later posts are refused. Waits for the
    /// thread unless called on it (a job stopping its own thread, such as a
    /// callback closing its own bridge: the thread is detached and ends after
    /// that job).
    public func stop() {
        let toJoin: pthread_t? = locked {
            let first = state.advance(to: .closing)
            monitor.signal()
            return first ? thread : nil
        }
        if let t = toJoin { Monitor.joinOrDetach(t) }
    }

    private func run() {
        // Inherited from whichever thread started us: the callback thread
        // unblocks the runtimes' signals, see the type's comment.
        if unblocksSignals { iapc_unblock_runtime_signals() }
        while true {
            let next: (@Sendable () -> Void)? = locked {
                while true {
                    if state != .open { return nil }
                    if jobsHead < jobs.count {
                        let j = jobs[jobsHead]
                        jobsHead += 1
                        if jobsHead == jobs.count {
                            jobs.removeAll(keepingCapacity: jobs.count < 1024)
                            jobsHead = 0
                        }
                        return j
                    }
                    if let due = timers.popDue(now: SDKThread.nowMs()) { return due }
                    if idleHead < idleJobs.count {
                        let j = idleJobs[idleHead]
                        idleHead += 1
                        if idleHead == idleJobs.count { idleJobs.removeAll(keepingCapacity: true); idleHead = 0 }
                        return j
                    }
                    if let due = timers.nextDue {
                        monitor.wait(untilMs: due)
                    } else {
                        monitor.wait()
                    }
                }
            }
            guard let next else {
                // Jobs already accepted still run (each sees its bridge
                // closed and does nothing): a caller waiting for one
                // (flush, a simulator command) is released, never left hanging.
                // Timers not due are dropped.
                let left: [@Sendable () -> Void] = locked {
                    let d = Array(jobs[jobsHead...]) + Array(idleJobs[idleHead...])
                    jobs = []; jobsHead = 0; idleJobs = []; idleHead = 0; timers.removeAll()
                    return d
                }
                for j in left { j() }
                locked {
                    assert(state == .closing, "only stop ends the thread")
                    state.advance(to: .closed)
                }
                return
            }
            next()
        }
    }

    private func locked<T>(_ body: () -> T) -> T { monitor.locked(body) }
}
