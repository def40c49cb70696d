#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import IAPCore
import Testing

/// The callback thread (MessageQueue's listener). Regression: it used to be a
/// libdispatch worker, which blocks every signal; Mono on Linux (the Unity
/// editor's runtime) stops threads with signals, so a game using the callback
/// froze at its first garbage collection and could not exit
/// (Tests/mono/run.sh shows it end to end).
@Suite("Delivery thread")
struct DeliveryThreadTests {
    /// The signals blocked on the calling thread, among 1...31.
    static func blockedSignals() -> [Int32] {
        var set = sigset_t()
        sigemptyset(&set)
        pthread_sigmask(SIG_BLOCK, nil, &set)
        return (1...31).filter { sigismember(&set, $0) == 1 }
    }

    /// True when signal `n` is blocked on the calling thread (any number,
    /// the real-time ones included).
    static func isBlocked(_ n: Int32) -> Bool {
        var set = sigset_t()
        sigemptyset(&set)
        pthread_sigmask(SIG_BLOCK, nil, &set)
        return sigismember(&set, n) == 1
    }

    /// Real-time signal 41 gets a handler (as newer Mono installs for the
    /// ones it takes); 40 has none (one a game would read with sigwait).
    static let handledRealTime: Int32 = 41
    static let unhandledRealTime: Int32 = 40
    static let installRealTimeHandler: Void = { signal(handledRealTime) { _ in } }()

    /// Whether the handled and the unhandled real-time signal are blocked on
    /// the calling thread.
    static func realTimeBlocked() -> (handled: Bool, unhandled: Bool) {
        (isBlocked(handledRealTime), isBlocked(unhandledRealTime))
    }

    /// What a thread started by a creator that blocks every signal must
    /// block: the creator's signals (SIGTERM: a game reading it from
    /// sigwait or a signalfd; a real-time signal with no handler), but not
    /// those runtimes stop threads with.
    static func checkRuntimeSignalsOnly(_ blocked: [Int32]?, realTime: (handled: Bool, unhandled: Bool)?, _ what: String) {
        #expect(blocked?.contains(SIGTERM) == true && blocked?.contains(SIGINT) == true && blocked?.contains(SIGHUP) == true
                && blocked?.contains(SIGCHLD) == true && blocked?.contains(SIGUSR1) == true,
                "\(what) must keep the creator's blocked signals: \(blocked ?? [])")
        #expect(blocked?.contains(SIGPWR) == false && blocked?.contains(SIGXCPU) == false,
                "\(what) must not block the signals Mono and Boehm stop threads with: \(blocked ?? [])")
        #expect(realTime?.handled == false, "\(what) must not block a real-time signal with a handler (newer Mono's)")
        #expect(realTime?.unhandled == true, "\(what) must keep a real-time signal with no handler blocked")
    }

    @Test("the listener's thread keeps its creator's mask but never blocks the runtimes' signals, whoever pushes")
    func listenerThreadSignalMask() throws {
        _ = Self.installRealTimeHandler
        let q = MessageQueue()
        // Started from a thread that blocks every signal (a game that takes
        // SIGTERM from sigwait blocks it everywhere before iap_open).
        let startFailure = Locked<IAPError?>(nil)
        let started = DispatchSemaphore(value: 0)
        Thread {
            var all = sigset_t()
            sigfillset(&all)
            pthread_sigmask(SIG_SETMASK, &all, nil)
            do throws(IAPError) { try q.startDelivery() } catch { startFailure.withLock { $0 = error } }
            started.signal()
        }.start()
        #expect(started.wait(timeout: .now() + 10) == .success)
        let seen = Locked<([Int32], (handled: Bool, unhandled: Bool))?>(nil)
        let done = DispatchSemaphore(value: 0)
        // Pushed from a thread with no signal blocked: the delivery thread
        // must not take the pusher's mask either.
        Thread {
            var none = sigset_t()
            sigemptyset(&none)
            pthread_sigmask(SIG_SETMASK, &none, nil)
            q.setListener { _ in
                seen.withLock { $0 = (DeliveryThreadTests.blockedSignals(), DeliveryThreadTests.realTimeBlocked()) }
                done.signal()
            }
            q.push(Array("{\"type\":\"x\"}".utf8))
        }.start()
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(startFailure.withLock { $0 } == nil)
        let got = seen.withLock { $0 }
        DeliveryThreadTests.checkRuntimeSignalsOnly(got?.0, realTime: got?.1, "the callback thread")
        q.close(fromDeliveryThread: false)
    }

    @Test("setListener returns only after a call of the previous listener under way returned; from inside that call it does not wait")
    func setListenerWaitsForCallUnderWay() throws {
        let q = MessageQueue()
        try q.startDelivery()
        let inside = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let firstReturned = Locked(false)
        q.setListener { _ in
            inside.signal()
            _ = release.wait(timeout: .now() + 10)
            firstReturned.withLock { $0 = true }
        }
        q.push(Array("{}".utf8))
        #expect(inside.wait(timeout: .now() + 10) == .success)
        // Detach while the first listener runs: a game frees its context
        // right after, so the call must have returned by then.
        let sawReturned = Locked<Bool?>(nil)
        let detached = DispatchSemaphore(value: 0)
        Thread {
            q.setListener(nil)
            sawReturned.withLock { $0 = firstReturned.withLock { $0 } }
            detached.signal()
        }.start()
        #expect(detached.wait(timeout: .now() + 0.1) == .timedOut, "setListener(nil) returned while the previous listener was still running")
        release.signal()
        #expect(detached.wait(timeout: .now() + 10) == .success)
        #expect(sawReturned.withLock { $0 } == true)

        // A listener that replaces itself from inside its own call.
        let second = DispatchSemaphore(value: 0)
        let secondSeen = Locked(0)
        q.setListener { [q] _ in
            q.setListener { _ in secondSeen.withLock { $0 += 1 }; second.signal() }
            second.signal()
        }
        q.push(Array("{}".utf8))
        q.push(Array("{}".utf8))
        #expect(second.wait(timeout: .now() + 10) == .success)
        #expect(second.wait(timeout: .now() + 10) == .success)
        #expect(secondSeen.withLock { $0 } == 1)
        q.close(fromDeliveryThread: false)
    }

    @Test("a listener detached, or replaced, is never entered once setListener returned (2,000 messages, switching all along)")
    func detachedListenerNeverEntered() throws {
        let q = MessageQueue()
        try q.startDelivery()
        final class Context: @unchecked Sendable { let dead = Locked(false) }
        let lateCalls = Locked(0)
        let delivered = Locked(0)
        let total = 2_000
        let switching = Locked(true)
        let switcher = Thread {
            while switching.withLock({ $0 }) {
                let ctx = Context()
                q.setListener { _ in
                    if ctx.dead.withLock({ $0 }) { lateCalls.withLock { $0 += 1 } }
                    delivered.withLock { $0 += 1 }
                }
                q.setListener(nil)
                ctx.dead.withLock { $0 = true }  // what a game frees after detaching
            }
        }
        switcher.start()
        for _ in 0..<total { q.push(Array("{}".utf8)) }
        // Drain what is left through a listener of our own.
        let deadline = Date().addingTimeInterval(10)
        while delivered.withLock({ $0 }) < total / 10 && Date() < deadline { usleep(1_000) }
        switching.withLock { $0 = false }
        usleep(20_000)
        #expect(delivered.withLock { $0 } > 0, "no message reached a listener: the race was never run")
        #expect(lateCalls.withLock { $0 } == 0, "a listener was entered after its detach returned")
        q.close(fromDeliveryThread: false)
    }

    @Test("close waits for the callback under way; a callback may close its own queue")
    func closeWaitsAndSelfClose() throws {
        let q = MessageQueue()
        try q.startDelivery()
        let inside = DispatchSemaphore(value: 0)
        let finished = Locked(false)
        q.setListener { _ in
            inside.signal()
            usleep(100_000)
            finished.withLock { $0 = true }
        }
        q.push(Array("{}".utf8))
        #expect(inside.wait(timeout: .now() + 10) == .success)
        q.close(fromDeliveryThread: q.isOnDeliveryThread)
        #expect(finished.withLock { $0 }, "close returned before the callback under way finished")

        let q2 = MessageQueue()
        try q2.startDelivery()
        let closed = DispatchSemaphore(value: 0)
        q2.setListener { [q2] _ in
            #expect(q2.isOnDeliveryThread)
            q2.close(fromDeliveryThread: q2.isOnDeliveryThread)
            closed.signal()
        }
        q2.push(Array("{}".utf8))
        #expect(closed.wait(timeout: .now() + 10) == .success, "a callback closing its own queue deadlocked")
        #expect(!q2.isOnDeliveryThread)
    }

    @Test("many messages from many threads each reach the listener once, in push order per thread")
    func orderAndCount() throws {
        let q = MessageQueue()
        try q.startDelivery()
        let got = Locked<[String]>([])
        q.setListener { p in got.withLock { $0.append(String(cString: p)) } }
        DispatchQueue.concurrentPerform(iterations: 4) { t in
            for i in 0..<250 { q.push(Array("\(t):\(i)".utf8)) }
        }
        let deadline = Date().addingTimeInterval(10)
        while got.withLock({ $0.count }) < 1000 && Date() < deadline { usleep(1000) }
        q.close(fromDeliveryThread: false)
        let all = got.withLock { $0 }
        #expect(all.count == 1000)
        for t in 0..<4 {
            let mine = all.filter { $0.hasPrefix("\(t):") }
            #expect(mine == (0..<250).map { "\(t):\($0)" })
        }
    }
}
