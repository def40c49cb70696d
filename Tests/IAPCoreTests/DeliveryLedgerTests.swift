@testable import IAPCore
import Testing

/// Issue 21, item 8: C9's "shown to the game" check lives in a ledger of
/// its own; the message queue only reports what it queues and hands out.
@Suite("Delivery ledger (C9)")
struct DeliveryLedgerTests {
    @Test("a result is confirmable only once handed out, and only once; a confirm given back can be taken again; clear forgets all")
    func resultLife() {
        var l = DeliveryLedger()
        #expect(l.takeShown(5) == .unknown)
        l.queued(resultKey: 5, isAnswer: false)
        #expect(l.takeShown(5) == .notShown, "queued, not handed out: not confirmable")
        l.handedOut(resultKey: 5, isAnswer: false)
        #expect(l.takeShown(5) == .taken)
        #expect(l.takeShown(5) == .unknown, "a second confirm of the key finds nothing")
        l.untake(5)
        #expect(l.takeShown(5) == .taken, "given back, then taken")
        l.untake(5)
        l.clear()
        #expect(l.takeShown(5) == .unknown, "cleared: nothing is shown")
    }

    @Test("answers to requests are counted while queued, not once handed out; results and plain messages do not count")
    func answers() {
        var l = DeliveryLedger()
        for _ in 0..<3 { l.queued(resultKey: nil, isAnswer: true) }
        l.queued(resultKey: 9, isAnswer: false)
        l.queued(resultKey: nil, isAnswer: false)
        #expect(l.answersQueued == 3)
        l.handedOut(resultKey: nil, isAnswer: true)
        #expect(l.answersQueued == 2)
        l.clear()
        #expect(l.answersQueued == 0 && l.takeShown(9) == .unknown)
    }

    @Test("through the queue: pop hands a result out (confirmable), close forgets it; a request answer counts until polled")
    func throughTheQueue() throws {
        let q = MessageQueue()
        q.push(BridgeMessage.error(op: "x", code: .io, message: "m"), resultKey: 1)
        q.push(BridgeMessage.products(ProductsAnswer(products: [], invalid: [])))
        #expect(q.withLedger { l, _ in l.takeShown(1) } == .notShown && q.withLedger { l, _ in l.answersQueued } == 1)
        _ = try #require(q.pop())
        #expect(q.withLedger { l, _ in l.takeShown(1) } == .taken)
        _ = try #require(q.pop())
        #expect(q.withLedger { l, _ in l.answersQueued } == 0)
        q.push(BridgeMessage.error(op: "x", code: .io, message: "m"), resultKey: 2)
        _ = try #require(q.pop())
        q.close(fromDeliveryThread: false)
        #expect(q.withLedger { l, closed in closed && l.takeShown(2) == .unknown }, "closed, the ledger forgot what was shown")
    }
}
