#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A bridge's own thread: the one owner of its delivery state (C10). Jobs run
/// one at a time in the order posted; timers run when due; `whenIdle` jobs run
/// when no posted job waits.
///
/// A pthread created in `start` (called by `iap_open`, where failure can be
/// reported) and joined in `stop` (called by `iap_close`), so nothing of the
/// SDK runs after `iap_close` returns and the host may unload the library
/// (C8). Not libdispatch: its worker threads outlive every bridge and crash
/// the host after `dlclose`, and it traps when it cannot get a descriptor or
/// a thread.
public final class SDKThread: Executor, @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let cond = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var jobs: [@Sendable () -> Void] = []
    private var jobsHead = 0
    private var idleJobs: [@Sendable () -> Void] = []
    private var timers: [(due: Int64, seq: UInt64, job: @Sendable () -> Void)] = []
    private var timerSeq: UInt64 = 0
    private var stopping = false
    private var thread: pthread_t?
    public init() {
        pthread_mutex_init(mutex, nil)
        #if canImport(Darwin)
        pthread_cond_init(cond, nil)
        #else
        var attr = pthread_condattr_t()
        pthread_condattr_init(&attr)
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC)
        pthread_cond_init(cond, &attr)
        pthread_condattr_destroy(&attr)
        #endif
    }

    deinit {
        pthread_cond_destroy(cond)
        pthread_mutex_destroy(mutex)
        cond.deallocate()
        mutex.deallocate()
    }

    /// Starts the thread. Throws `.resource` when the system has none to give.
    public func start() throws(IAPError) {
        let box = Unmanaged.passRetained(self).toOpaque()
        #if canImport(Darwin)
        var t: pthread_t? = nil
        #else
        var t = pthread_t()
        #endif
        let rc = pthread_create(&t, nil, { raw in
            let ctx: UnsafeMutableRawPointer? = raw
            Unmanaged<SDKThread>.fromOpaque(ctx!).takeRetainedValue().run()
            return nil
        }, box)
        guard rc == 0 else {
            Unmanaged<SDKThread>.fromOpaque(box).release()
            throw IAPError(.resource, "cannot start the SDK's thread (\(String(cString: strerror(rc)))); close other bridges or free threads and try again")
        }
        locked { thread = t }
    }

    /// Monotonic milliseconds.
    public static func nowMs() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }

    @discardableResult
    public func post(_ job: @escaping @Sendable () -> Void) -> Bool {
        let accepted: Bool = locked {
            guard !stopping else { return false }
            jobs.append(job)
            return true
        }
        // Signalled after the unlock: the thread wakes to a free mutex
        // instead of waking and blocking on it at once (a second futex round
        // trip on the purchase path).
        if accepted { pthread_cond_signal(cond) }
        return accepted
    }

    @discardableResult
    public func schedule(afterMs ms: Int64, _ job: @escaping @Sendable () -> Void) -> Bool {
        let due = SDKThread.nowMs() + max(0, ms)
        return locked {
            guard !stopping else { return false }
            timerSeq += 1
            let entry = (due: due, seq: timerSeq, job: job)
            // Few timers at a time (a commit window, a renewal tick, delayed
            // purchases): a sorted array beats a heap here.
            let at = timers.firstIndex { $0.due > due } ?? timers.count
            timers.insert(entry, at: at)
            pthread_cond_signal(cond)
            return true
        }
    }

    @discardableResult
    public func whenIdle(_ job: @escaping @Sendable () -> Void) -> Bool {
        locked {
            guard !stopping else { return false }
            idleJobs.append(job)
            pthread_cond_signal(cond)
            return true
        }
    }

    public var isCurrent: Bool {
        locked { thread.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
    }

    /// Ends the thread after the job under way and the jobs already posted
    /// (timers not due are dropped); later posts are refused. Waits for the
    /// thread unless called on it.
    public func stop() {
        let toJoin: pthread_t? = locked {
            let first = !stopping
            stopping = true
            pthread_cond_signal(cond)
            return first ? thread : nil
        }
        guard let t = toJoin else { return }
        if pthread_equal(t, pthread_self()) != 0 {
            pthread_detach(t)
        } else {
            pthread_join(t, nil)
        }
    }

    private func run() {
        while true {
            let next: (@Sendable () -> Void)? = locked {
                while true {
                    if stopping { return nil }
                    if jobsHead < jobs.count {
                        let j = jobs[jobsHead]
                        jobsHead += 1
                        if jobsHead == jobs.count {
                            jobs.removeAll(keepingCapacity: jobs.count < 1024)
                            jobsHead = 0
                        }
                        return j
                    }
                    let now = SDKThread.nowMs()
                    if let first = timers.first, first.due <= now {
                        timers.removeFirst()
                        return first.job
                    }
                    if !idleJobs.isEmpty { return idleJobs.removeFirst() }
                    if let first = timers.first {
                        waitLocked(untilMs: first.due)
                    } else {
                        pthread_cond_wait(cond, mutex)
                    }
                }
            }
            guard let next else {
                // Jobs already accepted still run (each sees its bridge
                // closed and does nothing): a caller waiting for one
                // (flush, a simulator command) is released, never left hanging.
                // Timers not due are dropped.
                let left: [@Sendable () -> Void] = locked {
                    let d = Array(jobs[jobsHead...]) + idleJobs
                    jobs = []; jobsHead = 0; idleJobs = []; timers = []
                    return d
                }
                for j in left { j() }
                return
            }
            next()
        }
    }

    private func waitLocked(untilMs due: Int64) {
        #if canImport(Darwin)
        let rel = max(0, due - SDKThread.nowMs())
        var ts = timespec(tv_sec: Int(rel / 1000), tv_nsec: Int((rel % 1000) * 1_000_000))
        pthread_cond_timedwait_relative_np(cond, mutex, &ts)
        #else
        var ts = timespec()
        ts.tv_sec = Int(due / 1000)
        ts.tv_nsec = Int((due % 1000) * 1_000_000)
        pthread_cond_timedwait(cond, mutex, &ts)
        #endif
    }

    private func locked<T>(_ body: () -> T) -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return body()
    }
}
