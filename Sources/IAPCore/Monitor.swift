#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A pthread mutex with its condition variable: what the SDK's own threads
/// (SDKThread, DeliveryThread) and one-time events (OneShot) wait on. Plain
/// pthreads, never libdispatch (docs/CONTRACT.md, C8). Timed waits use the
/// monotonic clock where the platform lets the condition choose its clock.
final class Monitor: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let cond = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    init() {
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

    func locked<T>(_ body: () -> T) -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return body()
    }

    /// With the mutex held: waits for a signal.
    func wait() { pthread_cond_wait(cond, mutex) }

    /// With the mutex held: waits for a signal or until `due` (monotonic ms).
    func wait(untilMs due: Int64) {
        #if canImport(Darwin)
        let rel = max(0, due - Monitor.nowMs())
        var ts = timespec(tv_sec: Int(rel / 1000), tv_nsec: Int((rel % 1000) * 1_000_000))
        pthread_cond_timedwait_relative_np(cond, mutex, &ts)
        #else
        var ts = timespec()
        ts.tv_sec = Int(due / 1000)
        ts.tv_nsec = Int((due % 1000) * 1_000_000)
        pthread_cond_timedwait(cond, mutex, &ts)
        #endif
    }

    func signal() { pthread_cond_signal(cond) }
    func broadcast() { pthread_cond_broadcast(cond) }

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
