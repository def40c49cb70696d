/// A one-time event: `wait` returns once `signal` was called (before or after).
/// A pthread condition, not a libdispatch semaphore: nothing of libdispatch may
/// be running when the host unloads the library.
public final class OneShot: @unchecked Sendable {
    private let monitor = Monitor()
    private var fired = false

    public init() {}

    public func signal() {
        monitor.locked {
            fired = true
            monitor.broadcast()
        }
    }

    public func wait() {
        monitor.locked { while !fired { monitor.wait() } }
    }

    /// Waits at most `ms` milliseconds. True when signalled.
    public func wait(timeoutMs ms: Int64) -> Bool {
        let due = Monitor.nowMs() + ms
        return monitor.locked {
            while !fired && Monitor.nowMs() < due { monitor.wait(untilMs: due) }
            return fired
        }
    }
}
