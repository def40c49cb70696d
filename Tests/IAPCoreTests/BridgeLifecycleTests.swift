import Foundation
import IAPCore
import IAPSimulator
import Testing

/// The one lifecycle state (Lifecycle.swift): its transitions, a bridge's
/// calls after close, and a close made from the bridge's own callback.
@Suite("Bridge lifecycle")
struct BridgeLifecycleTests {
    /// The code of the error `body` throws; nil when it throws none.
    private static func code(_ body: () throws -> Void) -> IAPCode? {
        do { try body(); return nil } catch let e as IAPError { return e.code } catch { return nil }
    }

    @Test("a lifecycle only moves forward; asking for a state reached or passed changes nothing")
    func transitions() {
        var l = Lifecycle.open
        var steps: [Bool] = []
        steps.append(l.advance(to: .closing))
        #expect(l == .closing)
        steps.append(l.advance(to: .closing))  // a second close: no step
        steps.append(l.advance(to: .closed))
        steps.append(l.advance(to: .closing))  // closed never goes back to closing
        #expect(l == .closed)
        steps.append(l.advance(to: .open))
        #expect(l == .closed)
        #expect(steps == [true, false, true, false, false])
        var skip = Lifecycle.open
        let skipped = skip.advance(to: .closed)  // a queue closed on its own skips closing
        #expect(skipped && skip == .closed)
    }

    @Test("of many threads closing a bridge lifecycle at once, exactly one makes each step")
    func oneStepPerTransition() {
        let shared = BridgeLifecycle()
        let closers = Locked(0)
        let finishers = Locked(0)
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            if shared.advance(to: .closing) { closers.withLock { $0 += 1 } }
            if shared.advance(to: .closed) { finishers.withLock { $0 += 1 } }
        }
        #expect(closers.withLock { $0 } == 1)
        #expect(finishers.withLock { $0 } == 1)
        #expect(shared.current == .closed && shared.isClosed && !shared.isOpen)
    }

    @Test("the bridge and its queue read one state: open, then closed after close; every call after close answers closed")
    func callsAfterClose() throws {
        let env = TestEnv()
        let b = try env.open()
        #expect(b.c.queue.lifecycle.current == .open && !b.c.isClosed)
        let k = try b.buy("coins_100", 1)
        #expect(b.drainResults().map(\.keyValue) == [k])
        #expect(b.c.close() == nil)
        #expect(b.c.queue.lifecycle.current == .closed, "close ends with the bridge closed, not closing")
        #expect(b.c.isClosed)
        #expect(Self.code { _ = try b.c.buy(productID: "coins_100", clickMs: 2) } == .closed)
        #expect(Self.code { try b.c.confirm(key: k) } == .closed)
        #expect(Self.code { try b.c.restore() } == .closed)
        #expect(Self.code { try b.c.appTransaction() } == .closed)
        #expect(Self.code { _ = try b.c.simulate(.object([:])) } == .closed)
        #expect(b.c.flush()?.code == .closed)
        #expect(b.c.close() == nil, "a second close does nothing")
        b.c.queue.push(Array("{}".utf8))
        #expect(b.c.queue.count == 0 && b.c.queue.pop() == nil, "a closed queue takes nothing")
    }

    @Test("a callback may close its own bridge: close returns there, the bridge is closed, later calls answer closed")
    func closeFromCallback() throws {
        let env = TestEnv()
        let b = try env.open()
        _ = b.drain()
        let closedThere = DispatchSemaphore(value: 0)
        let onDelivery = Locked(false)
        let calls = Locked(0)
        b.c.queue.setListener { [c = b.c] _ in
            // Only the first message closes; a closed queue calls no one again.
            guard calls.withLock({ $0 += 1; return $0 }) == 1 else { return }
            onDelivery.withLock { $0 = c.queue.isOnDeliveryThread }
            _ = c.close()
            closedThere.signal()
        }
        _ = try b.buy("coins_100", 5)
        #expect(closedThere.wait(timeout: .now() + 10) == .success, "a callback closing its own bridge deadlocked")
        #expect(onDelivery.withLock { $0 })
        #expect(b.c.isClosed && b.c.queue.lifecycle.current == .closed)
        #expect(Self.code { _ = try b.c.buy(productID: "coins_100", clickMs: 6) } == .closed)
        // A message pushed after the close (as a late store event would be)
        // reaches no callback.
        b.c.queue.push(Array("{\"type\":\"late\"}".utf8))
        usleep(50_000)
        #expect(calls.withLock { $0 } == 1, "a message pushed after close reached the callback")
        // The dataDir is free again: the close really ended the bridge.
        let again = try env.open()
        #expect(again.c.queue.lifecycle.isOpen)
        again.close()
    }
}
