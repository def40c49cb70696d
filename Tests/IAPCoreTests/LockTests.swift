#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@testable import IAPCore
import Testing

/// Issue 21, item 11: one mutex type, pthread return codes checked, an
/// error-checking mutex in debug builds (the tests' build).
@Suite("The SDK's mutex")
struct LockTests {
    @Test("debug builds use an error-checking mutex: an unlock of a mutex nobody holds is refused (EPERM), a second lock on the same thread is refused (EDEADLK) instead of hanging")
    func errorChecking() {
        let l = Lock()
        #expect(pthread_mutex_unlock(l.mutex) == EPERM)
        #expect(pthread_mutex_lock(l.mutex) == 0)
        #expect(pthread_mutex_lock(l.mutex) == EDEADLK)
        #expect(pthread_mutex_unlock(l.mutex) == 0)
    }

    @Test("Monitor, OneShot and Locked are built on it: a timed wait ends, a signal is seen, a guarded value is updated under contention")
    func builtOnIt() async {
        let shot = OneShot()
        #expect(shot.wait(timeoutMs: 20) == false)
        shot.signal()
        #expect(shot.wait(timeoutMs: 20) == true)
        let counter = Locked(0)
        await withTaskGroup(of: Void.self) { g in
            for _ in 0..<8 { g.addTask { for _ in 0..<10_000 { counter.withLock { $0 += 1 } } } }
        }
        #expect(counter.withLock { $0 } == 80_000)
    }
}
