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

    @Test("the listener runs on a thread that blocks no signal, even when the message comes from one that blocks all")
    func listenerThreadSignalMask() throws {
        let q = MessageQueue()
        try q.startDelivery()
        let seen = Locked<[Int32]?>(nil)
        let done = DispatchSemaphore(value: 0)
        q.setListener { _ in
            seen.withLock { $0 = DeliveryThreadTests.blockedSignals() }
            done.signal()
        }
        // Push from a thread with every signal blocked, as the stores' own
        // libdispatch threads are: the delivery thread must not inherit it.
        let pusher = Thread {
            var all = sigset_t()
            sigfillset(&all)
            pthread_sigmask(SIG_SETMASK, &all, nil)
            q.push(Array("{\"type\":\"x\"}".utf8))
        }
        pusher.start()
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(seen.withLock { $0 } == [])
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
