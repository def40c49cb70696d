#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A one-time event: `wait` returns once `signal` was called (before or after).
/// A pthread condition, not a libdispatch semaphore: nothing of libdispatch may
/// be running when the host unloads the library.
public final class OneShot: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let cond = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var fired = false

    public init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(cond, nil)
    }

    deinit {
        pthread_cond_destroy(cond)
        pthread_mutex_destroy(mutex)
        cond.deallocate()
        mutex.deallocate()
    }

    public func signal() {
        pthread_mutex_lock(mutex)
        fired = true
        pthread_cond_broadcast(cond)
        pthread_mutex_unlock(mutex)
    }

    public func wait() {
        pthread_mutex_lock(mutex)
        while !fired { pthread_cond_wait(cond, mutex) }
        pthread_mutex_unlock(mutex)
    }

    /// Waits at most `ms` milliseconds (polling in 1 ms steps: used only at
    /// close, where a timed condition wait's clock choice is not worth it).
    /// True when signalled.
    public func wait(timeoutMs ms: Int64) -> Bool {
        var left = ms
        while true {
            pthread_mutex_lock(mutex)
            let done = fired
            pthread_mutex_unlock(mutex)
            if done { return true }
            if left <= 0 { return false }
            var ts = timespec(tv_sec: 0, tv_nsec: 1_000_000)
            nanosleep(&ts, nil)
            left -= 1
        }
    }
}
