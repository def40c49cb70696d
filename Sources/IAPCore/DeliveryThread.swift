#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The thread that runs a bridge's callback: a pthread of the SDK's own, with
/// no signal blocked.
///
/// Why not a DispatchQueue: libdispatch worker threads block every signal.
/// A managed runtime that suspends threads with signals (Mono on Linux: its
/// garbage collector and its shutdown use SIGPWR/SIGXCPU) attaches the thread
/// on the first callback and then waits forever for it to acknowledge a
/// suspend: the game freezes at its first GC. A thread with an ordinary signal
/// mask behaves like any other thread of the game.
final class DeliveryThread: @unchecked Sendable {
    private let monitor = Monitor()
    private var work: (@Sendable () -> Void)?
    private var wakeups = false
    private var stopping = false
    private var started = false
    private var thread: pthread_t?

    init() {}

    /// What the thread runs after each wake-up. Set once, before the first wake.
    func setWork(_ w: @escaping @Sendable () -> Void) {
        locked { work = w }
    }

    /// Starts the thread (at `iap_open`, where a failure can be reported:
    /// never later, C8). Returns false when the system refused a thread.
    func start() -> Bool {
        locked {
            if !started && !stopping { started = startLocked() }
            return started
        }
    }

    /// Runs the work on the thread (soon, once even for several wake-ups).
    /// Returns false before `start` or after `stop`: nothing will run.
    @discardableResult
    func wake() -> Bool {
        locked {
            guard !stopping, started else { return false }
            wakeups = true
            monitor.signal()
            return true
        }
    }

    /// Ends the thread after the work under way, and waits for that unless
    /// called from the thread itself (a callback closing its own bridge).
    func stop() {
        let toJoin: pthread_t? = locked {
            let first = !stopping
            stopping = true
            monitor.signal()
            return first ? thread : nil
        }
        if let t = toJoin { Monitor.joinOrDetach(t) }
    }

    /// True on the delivery thread.
    var isCurrent: Bool {
        locked { thread.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
    }

    private func startLocked() -> Bool {
        var failure: Int32 = 0
        guard let t = Monitor.spawn({ [self] in run() }, failure: &failure) else { return false }
        thread = t
        return true
    }

    private func run() {
        // Inherited from whichever thread started us (possibly a libdispatch
        // worker): clear it.
        var none = sigset_t()
        sigemptyset(&none)
        pthread_sigmask(SIG_SETMASK, &none, nil)
        while true {
            let (stop, next): (Bool, (@Sendable () -> Void)?) = locked {
                while !wakeups && !stopping { monitor.wait() }
                wakeups = false
                return (stopping, work)
            }
            if stop { return }
            next?()
        }
    }

    private func locked<T>(_ body: () -> T) -> T { monitor.locked(body) }
}
