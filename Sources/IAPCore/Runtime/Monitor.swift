#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The SDK's mutex (`Lock`) with a condition variable: what the SDK's own threads
/// (SDKThread) and one-time events (OneShot) wait on. Plain
/// pthreads, never libdispatch (docs/CONTRACT.md, C8). Timed waits use the
/// monotonic clock where the platform lets the condition choose its clock.
final class Monitor: @unchecked Sendable {
    private let lock = Lock()
    private let cond = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    init() {
        #if canImport(Darwin)
        Lock.check(pthread_cond_init(cond, nil), "pthread_cond_init")
        #else
        var attr = pthread_condattr_t()
        Lock.check(pthread_condattr_init(&attr), "pthread_condattr_init")
        Lock.check(pthread_condattr_setclock(&attr, CLOCK_MONOTONIC), "pthread_condattr_setclock")
        Lock.check(pthread_cond_init(cond, &attr), "pthread_cond_init")
        pthread_condattr_destroy(&attr)
        #endif
    }

    deinit {
        pthread_cond_destroy(cond)
        cond.deallocate()
    }

    func locked<T>(_ body: () -> T) -> T { lock.withLock(body) }

    /// With the mutex held: waits for a signal.
    func wait() { Lock.check(pthread_cond_wait(cond, lock.mutex), "pthread_cond_wait") }

    /// With the mutex held: waits for a signal or until `due` (monotonic ms).
    func wait(untilMs due: Int64) {
        #if canImport(Darwin)
        let rel = max(0, due - Monitor.nowMs())
        var ts = timespec(tv_sec: Int(rel / 1000), tv_nsec: Int((rel % 1000) * 1_000_000))
        let rc = pthread_cond_timedwait_relative_np(cond, lock.mutex, &ts)
        precondition(rc == 0 || rc == ETIMEDOUT, "pthread_cond_timedwait_relative_np failed: \(rc)")
        #else
        var ts = timespec()
        ts.tv_sec = Int(due / 1000)
        ts.tv_nsec = Int((due % 1000) * 1_000_000)
        let rc = pthread_cond_timedwait(cond, lock.mutex, &ts)
        precondition(rc == 0 || rc == ETIMEDOUT, "pthread_cond_timedwait failed: \(rc)")
        #endif
    }

    func signal() { Lock.check(pthread_cond_signal(cond), "pthread_cond_signal") }
    func broadcast() { Lock.check(pthread_cond_broadcast(cond), "pthread_cond_broadcast") }

    /// Monotonic milliseconds.
    static func nowMs() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }

    /// Starts a pthread running `body`; nil when the system refused one (the
    /// error number in `failure`).
    static func spawn(_ body: @escaping () -> Void, failure: inout Int32) -> pthread_t? {
        final class Box { let run: () -> Void; init(_ r: @escaping () -> Void) { run = r } }
        let box = Unmanaged.passRetained(Box(body)).toOpaque()
        #if canImport(Darwin)
        var t: pthread_t? = nil
        #else
        var t = pthread_t()
        #endif
        let rc = pthread_create(&t, nil, { raw in
            let ctx: UnsafeMutableRawPointer? = raw
            Unmanaged<Box>.fromOpaque(ctx!).takeRetainedValue().run()
            return nil
        }, box)
        guard rc == 0 else {
            Unmanaged<Box>.fromOpaque(box).release()
            failure = rc
            return nil
        }
        return t
    }

    /// Waits for a thread `spawn` started to end; on that thread itself (a
    /// callback closing its own bridge) detaches it instead, since a thread
    /// cannot join itself.
    static func joinOrDetach(_ t: pthread_t) {
        if pthread_equal(t, pthread_self()) != 0 {
            pthread_detach(t)
        } else {
            pthread_join(t, nil)
        }
    }
}
