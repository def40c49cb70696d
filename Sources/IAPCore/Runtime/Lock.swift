#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The SDK's one mutex type: every lock in the core is one (Monitor adds a
/// condition to one). `Synchronization.Mutex` needs iOS 18; the SDK
/// supports iOS 15. Every pthread return code is checked: a failure is a
/// bug (a lock taken twice on one thread, an unlock by another thread) and
/// stops the process at once instead of corrupting the delivery state.
/// Debug builds use an error-checking mutex, so such a bug is reported
/// where it happens (EDEADLK, EPERM) instead of hanging.
public final class Lock: @unchecked Sendable {
    let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)

    public init() {
        var attr = pthread_mutexattr_t()
        Lock.check(pthread_mutexattr_init(&attr), "pthread_mutexattr_init")
        #if DEBUG
        Lock.check(pthread_mutexattr_settype(&attr, Int32(PTHREAD_MUTEX_ERRORCHECK)), "pthread_mutexattr_settype")
        #endif
        Lock.check(pthread_mutex_init(mutex, &attr), "pthread_mutex_init")
        pthread_mutexattr_destroy(&attr)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    @inline(__always)
    public func withLock<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        lock()
        defer { unlock() }
        return try body()
    }

    @inline(__always)
    func lock() { Lock.check(pthread_mutex_lock(mutex), "pthread_mutex_lock") }

    @inline(__always)
    func unlock() { Lock.check(pthread_mutex_unlock(mutex), "pthread_mutex_unlock") }

    @inline(__always)
    static func check(_ rc: Int32, _ call: StaticString) {
        precondition(rc == 0, "\(call) failed: \(rc)")
    }
}

/// A value guarded by a `Lock`.
public final class Locked<Value>: @unchecked Sendable {
    private let lock = Lock()
    private var value: Value
    public init(_ value: Value) { self.value = value }
    public func withLock<T, E: Error>(_ body: (inout Value) throws(E) -> T) throws(E) -> T {
        try lock.withLock { () throws(E) -> T in try body(&value) }
    }
}
