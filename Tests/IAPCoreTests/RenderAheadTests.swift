import Foundation
@_spi(Testing) @testable import IAPCore
import IAPSimulator
import IAPTestSupport
import Testing

/// `iap_open`'s thread renders the messages the SDK thread queues while the
/// open waits (RenderAhead.swift). Whichever thread renders a message, and
/// whether it is taken before or after, the game gets the same bytes in the
/// same order, each once.
@Suite struct RenderAheadTests {
    /// A mix of the messages an open queues: results under keys, failures,
    /// a pending, an error.
    static func messages(_ n: Int) -> [(BridgeMessage, Int64?)] {
        (0..<n).map { i in
            let key = Int64(1_000 + i)
            switch i % 4 {
            case 0, 1:
                guard case let .purchase(t, origin, owned, click) = ResultFacts.sample(i) else { preconditionFailure() }
                return (.purchase(key: key, transaction: t, origin: origin, alreadyOwned: owned, clickKey: click), key)
            case 2:
                return (.purchaseFailed(key: key, productID: "coins_100", failure: .cancelled, detail: "cancelled \(i)"), key)
            default:
                return (.error(op: "outbox", code: .io, message: "message \(i) with \"quotes\" and \u{e9}"), nil)
            }
        }
    }

    /// Pushes `all` from another thread while this one renders ahead (and,
    /// when `popper`, a third takes messages as they come); returns what
    /// was taken, in order, and how many the helper rendered.
    static func run(_ all: [(BridgeMessage, Int64?)], popper: Bool) -> (taken: [[UInt8]], renderedAhead: Int, leftUnrendered: Int) {
        let q = MessageQueue()
        let helper = RenderAhead()
        q.beginRenderingAhead(helper)
        let taken = Locked<[[UInt8]]>([])
        let stopPopping = Locked(false)
        let popThread = popper ? Thread {
            // Takes messages while they are rendered ahead, some before the helper reaches them.
            while !stopPopping.withLock({ $0 }) {
                if let m = q.pop() { taken.withLock { $0.append(m) } } else { usleep(50) }
            }
        } : nil
        popThread?.start()
        let pusher = Thread {
            for (m, key) in all { q.push(m, resultKey: key) }
            q.endRenderingAhead()
            helper.finish()
        }
        pusher.start()
        let rendered = helper.help(q)
        let left = q.unrenderedCount
        stopPopping.withLock { $0 = true }
        while popThread?.isFinished == false { usleep(1_000) }
        while let m = q.pop() { taken.withLock { $0.append(m) } }
        q.close(fromDeliveryThread: false)
        return (taken.withLock { $0 }, rendered, left)
    }

    @Test("every message is the bytes an eager render gives, in push order, once", arguments: [false, true])
    func sameBytesSameOrder(popper: Bool) {
        let all = RenderAheadTests.messages(3_000)
        let expected = all.map { $0.0.json }
        let (taken, rendered, left) = RenderAheadTests.run(all, popper: popper)
        #expect(taken.count == expected.count)
        #expect(taken == expected)
        // Nothing is left for the game's poll to render, and with no one
        // taking messages meanwhile the helper rendered every one.
        #expect(left == 0)
        if !popper { #expect(rendered == all.count) }
    }

    @Test("after endRenderingAhead a push renders at once; a closed queue renders nothing")
    func endAndClose() {
        let q = MessageQueue()
        let helper = RenderAhead()
        q.beginRenderingAhead(helper)
        q.push(.error(op: "a", code: .io, message: "unrendered"))
        q.endRenderingAhead()
        q.push(.error(op: "b", code: .io, message: "rendered at push"))
        // Only the first was left for the helper.
        #expect(q.renderAhead(limit: 10) == 1)
        #expect(q.renderAhead(limit: 10) == 0)
        #expect(q.pop() == BridgeMessage.error(op: "a", code: .io, message: "unrendered").json)
        #expect(q.pop() == BridgeMessage.error(op: "b", code: .io, message: "rendered at push").json)

        let closed = MessageQueue()
        closed.beginRenderingAhead(helper)
        closed.push(.error(op: "c", code: .io, message: "dropped"))
        closed.close(fromDeliveryThread: false)
        #expect(closed.renderAhead(limit: 10) == 0)
        #expect(closed.pop() == nil)
        q.close(fromDeliveryThread: false)
    }

    @Test("help returns at finish, whether pokes came before it waited or none came")
    func helpReturns() {
        let q = MessageQueue()
        let helper = RenderAhead()
        q.beginRenderingAhead(helper)
        // Pokes and the finish all before help runs: nothing is lost, help
        // renders what is queued and returns.
        for i in 0..<(RenderAhead.batch * 3) { q.push(.error(op: "x", code: .io, message: "\(i)")) }
        q.endRenderingAhead()
        helper.finish()
        #expect(helper.help(q) == RenderAhead.batch * 3)
        // No pokes at all: help waits only for the finish.
        let idle = RenderAhead()
        let finisher = Thread { usleep(20_000); idle.finish() }
        finisher.start()
        #expect(idle.help(q) == 0)
        q.close(fromDeliveryThread: false)
    }

    /// Buys `n` and leaves every result unconfirmed.
    static func leavePending(_ env: TestEnv, _ n: Int, firstClick: Int64) throws {
        let b = try env.open()
        defer { b.close() }
        var bought = 0
        for i in 0..<n {
            _ = try b.buy("coins_100", firstClick + Int64(i))
            // Under the in-flight bound: the answers are taken every 20 buys.
            if i % 20 == 19 { bought += b.drainResults().count }
        }
        bought += b.drainResults().count
        #expect(bought == n)
    }

    /// How many leftovers of the open the SDK thread still keeps (read there).
    static func leftovers(_ c: Coordinator) -> Int {
        let n = Locked(-1)
        c.executor.runAndWait { n.withLock { $0 = c.releasedAfterOpen.count } }
        return n.withLock { $0 }
    }

    /// Waits up to `seconds` for the SDK thread to drop the open's leftovers.
    static func leftoversDropped(_ c: Coordinator, within seconds: Double) -> Bool {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            if leftovers(c) == 0 { return true }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return leftovers(c) == 0
    }

    @Test("the open's leftovers are kept until the game has taken every message the open queued, then dropped")
    func leftoversAfterOpen() throws {
        let env = TestEnv()
        try RenderAheadTests.leavePending(env, 300, firstClick: 70_000)
        let b = try env.open()
        defer { b.close() }
        #expect(Self.leftovers(b.c) > 0, "the held records are kept past the open")
        b.c.settle()
        let queued = b.c.queue.count
        #expect(queued >= 300)
        for _ in 0..<(queued - 1) { _ = b.c.queue.pop() }
        Thread.sleep(forTimeInterval: 0.05)
        #expect(Self.leftovers(b.c) > 0, "kept while one message is left")
        _ = b.c.queue.pop()
        #expect(Self.leftoversDropped(b.c, within: 2), "dropped once the last is taken")
    }

    @Test("an open on the forked child's path renders nothing ahead and keeps nothing: every message rendered at push, every result there")
    func serialOpenRendersAtPush() throws {
        let env = TestEnv()
        try RenderAheadTests.leavePending(env, 200, firstClick: 90_000)
        let b = try Coordinator.openingSerially { try env.open() }
        defer { b.close() }
        #expect(b.c.renderedAheadAtOpen == 0)
        #expect(b.c.queue.unrenderedCount == 0)
        #expect(Self.leftovers(b.c) == 0, "nothing kept past the open")
        #expect(b.drainResults().count == 200)
    }

    @Test("an open with fewer results than a batch renders them all before it returns", arguments: [1, 5, RenderAhead.batch - 1])
    func smallOpen(n: Int) throws {
        let env = TestEnv()
        try RenderAheadTests.leavePending(env, n, firstClick: 50_000)
        let b = try env.open()
        defer { b.close() }
        #expect(b.c.queue.unrenderedCount == 0)
        #expect(b.c.renderedAheadAtOpen >= n)
        #expect(b.drainResults().count == n)
    }

    @Test("an open that renders ahead gives the game the bytes an open on a manual executor gives")
    func openMatchesEagerOpen() throws {
        let env = TestEnv()
        let n = 600
        try RenderAheadTests.leavePending(env, n, firstClick: 10_000)

        // The SDK thread's open: this thread renders ahead.
        let b = try env.open()
        let ahead = b.c.renderedAheadAtOpen
        #expect(b.c.queue.unrenderedCount == 0, "every message rendered before iap_open returned")
        let viaHelper = b.drainRaw().filter { $0.starts(with: Array("{\"type\":\"7\"".utf8)) }
        b.close()
        #expect(viaHelper.count == n)
        // Nothing takes messages during an open: the helper rendered every
        // message the resolution queued, the n results among them.
        #expect(ahead >= n, "rendered ahead at open: \(ahead)")

        // The same open on a manual executor renders every message at push.
        let config = try BridgeConfig.parse(Array(env.configJSON.utf8))
        let exec = ManualExecutor()
        let c = try Coordinator.open(config: config, store: try SimulatedStore.open(config: config), executor: exec)
        exec.runUntilIdle()
        #expect(c.renderedAheadAtOpen == 0)
        var eager: [[UInt8]] = []
        while let m = c.queue.pop() { if m.starts(with: Array("{\"type\":\"7\"".utf8)) { eager.append(m) } }
        _ = c.close()
        #expect(eager.count == n)
        #expect(viaHelper == eager)
    }
}
