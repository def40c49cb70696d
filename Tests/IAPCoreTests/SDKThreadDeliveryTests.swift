#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import IAPCore
import Testing

/// SDKThread used the way MessageQueue uses it for the callback: a wake
/// posts the one work job unless one is already scheduled, and the work
/// clears the flag before it looks for more (MessageQueue's drain).
private final class CoalescedWork: @unchecked Sendable {
    let thread = SDKThread(role: "test's delivery thread", unblocksSignals: true)
    private let lock = Lock()
    private var scheduled = false
    private var pending = 0
    private var inside = 0
    private(set) var maxInside = 0
    private(set) var runs = 0
    private(set) var handled = 0
    var onWork: (@Sendable () -> Void)?

    /// One more unit of work, and a wake.
    func wake() {
        lock.withLock {
            pending += 1
            guard !scheduled else { return }
            scheduled = thread.post { [self] in work() }
        }
    }

    private func work() {
        lock.withLock { runs += 1; inside += 1; maxInside = max(maxInside, inside) }
        onWork?()
        while true {
            let more: Bool = lock.withLock {
                guard pending > 0 else { scheduled = false; return false }
                handled += pending
                pending = 0
                return true
            }
            if !more { break }
            usleep(50)
        }
        lock.withLock { inside -= 1 }
    }

    func snapshot() -> (runs: Int, handled: Int, maxInside: Int, scheduled: Bool) {
        lock.withLock { (runs, handled, maxInside, scheduled) }
    }
}

@Suite("SDKThread as a delivery thread")
struct SDKThreadDeliveryTests {
    @Test("coalesced wakes from many threads run the work once or more, never two at once, and lose no wake")
    func coalescedWakes() throws {
        let w = CoalescedWork()
        try w.thread.start()
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            for _ in 0..<500 { w.wake() }
        }
        let deadline = Date().addingTimeInterval(10)
        // Done: every wake handled, and the work found nothing more and
        // stopped (it clears `scheduled` one pass after its last unit).
        while (w.snapshot().handled < 2000 || w.snapshot().scheduled) && Date() < deadline { usleep(1000) }
        let s = w.snapshot()
        #expect(s.handled == 2000, "every wake's work was done")
        #expect(s.runs >= 1 && s.runs <= 2000)
        #expect(s.maxInside == 1, "the work ran on two threads at once")
        #expect(!s.scheduled)
        w.thread.stop()
        #expect(w.thread.lifecycle == .closed)
    }

    @Test("stop from inside the work returns there, and the thread then ends")
    func stopFromInside() throws {
        let w = CoalescedWork()
        try w.thread.start()
        let returned = DispatchSemaphore(value: 0)
        let wasCurrent = Locked(false)
        w.onWork = { [thread = w.thread] in
            wasCurrent.withLock { $0 = thread.isCurrent }
            thread.stop()
            returned.signal()
        }
        w.wake()
        #expect(returned.wait(timeout: .now() + 10) == .success, "stop on the thread itself deadlocked")
        #expect(wasCurrent.withLock { $0 })
        let deadline = Date().addingTimeInterval(10)
        while w.thread.lifecycle != .closed && Date() < deadline { usleep(1000) }
        #expect(w.thread.lifecycle == .closed, "the thread did not end")
        #expect(!w.thread.post {}, "a stopped thread takes no job")
        w.thread.stop()  // again, from outside: nothing to join, returns
    }

    @Test("stop from outside waits for the job under way")
    func stopWaits() throws {
        let t = SDKThread()
        try t.start()
        let inside = DispatchSemaphore(value: 0)
        let finished = Locked(false)
        #expect(t.post { inside.signal(); usleep(100_000); finished.withLock { $0 = true } })
        #expect(inside.wait(timeout: .now() + 10) == .success)
        #expect(t.lifecycle == .open)
        t.stop()
        #expect(finished.withLock { $0 }, "stop returned before the job under way finished")
        #expect(t.lifecycle == .closed)
    }

    /// The signals blocked on a thread `t` started from a thread that blocks
    /// all, and whether real-time signal 40 is.
    static func blockedOnThread(startedBlockingAll t: SDKThread) throws -> ([Int32], (handled: Bool, unhandled: Bool))? {
        _ = DeliveryThreadTests.installRealTimeHandler
        let started = DispatchSemaphore(value: 0)
        let failure = Locked<IAPError?>(nil)
        let starter = Thread {
            var all = sigset_t()
            sigfillset(&all)
            pthread_sigmask(SIG_SETMASK, &all, nil)
            do throws(IAPError) { try t.start() } catch { failure.withLock { $0 = error } }
            started.signal()
        }
        starter.start()
        #expect(started.wait(timeout: .now() + 10) == .success)
        #expect(failure.withLock { $0 } == nil)
        let seen = Locked<([Int32], (handled: Bool, unhandled: Bool))?>(nil)
        t.runAndWait { seen.withLock { $0 = (DeliveryThreadTests.blockedSignals(), DeliveryThreadTests.realTimeBlocked()) } }
        t.stop()
        return seen.withLock { $0 }
    }

    @Test("the callback thread keeps its creator's mask but unblocks the runtimes' signals; the SDK thread keeps its creator's mask")
    func signalMasks() throws {
        let callback = try Self.blockedOnThread(startedBlockingAll: SDKThread(role: "callback", unblocksSignals: true))
        DeliveryThreadTests.checkRuntimeSignalsOnly(callback?.0, realTime: callback?.1, "the callback thread")
        let inherited = try Self.blockedOnThread(startedBlockingAll: SDKThread(role: "SDK"))
        #expect(inherited?.0.contains(SIGUSR1) == true && inherited?.0.contains(SIGPWR) == true && inherited?.1.handled == true,
                "a thread the game starts keeps the game's mask: \(inherited.map { "\($0.0)" } ?? "nil")")
    }
}
