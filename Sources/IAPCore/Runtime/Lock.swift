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
///
/// `withLock` is inlinable, like what it calls: a caller in another module
/// (the simulator, the C ABI's registry) gets it specialized and inlined,
/// not a generic call through type metadata (about 400 instructions a call
/// for the registry's lookup, which every game-facing call makes).
public final class Lock: @unchecked Sendable {
    @usableFromInline let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)

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

    @inlinable @inline(__always)
    public func withLock<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        lock()
        defer { unlock() }
        return try body()
    }

    @inlinable @inline(__always)
    func lock() { Lock.check(pthread_mutex_lock(mutex), "pthread_mutex_lock") }

    @inlinable @inline(__always)
    func unlock() { Lock.check(pthread_mutex_unlock(mutex), "pthread_mutex_unlock") }

    @inlinable @inline(__always)
    static func check(_ rc: Int32, _ call: StaticString) {
        precondition(rc == 0, "\(call) failed: \(rc)")
    }
}

/// A value guarded by a `Lock`.
public final class Locked<Value>: @unchecked Sendable {
    @usableFromInline let lock = Lock()
    // Read and written only inside `withLock`, under `lock`, which is not
    // recursive (a nested `withLock` on one Locked stops at the lock, in
    // debug builds, before it could reach `value`): Swift's run-time
    // exclusivity check on it could find nothing, and is off.
    @usableFromInline @exclusivity(unchecked) var value: Value
    public init(_ value: Value) { self.value = value }
    @inlinable
    public func withLock<T, E: Error>(_ body: (inout Value) throws(E) -> T) throws(E) -> T {
        try lock.withLock { () throws(E) -> T in try body(&value) }
    }
}
