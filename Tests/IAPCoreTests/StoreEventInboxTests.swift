@testable import IAPCore
import Testing

/// The store's events reach the SDK thread through one inbox, a job per
/// batch (StoreEventInbox): nothing lost when the drain races the stores'
/// threads, nothing handled twice, each thread's events in the order it
/// reported them.
@Suite("Store event inbox")
struct StoreEventInboxTests {
    @Test("4 threads report 20,000 events each into one inbox drained by an SDK thread: every event handled once, each thread's in order")
    func racingStores() async throws {
        let thread = SDKThread(role: "inbox test")
        try thread.start()
        defer { thread.stop() }
        let handled = Locked<[Int: [Int]]>([:])
        let inbox = StoreEventInbox()
        let sink = inbox.sink(to: thread) { event in
            guard case .error(let op, let message) = event, let from = Int(op), let seq = Int(message) else {
                Issue.record("unexpected event \(event)")
                return
            }
            handled.withLock { $0[from, default: []].append(seq) }
        }
        let perThread = 20_000
        await withTaskGroup(of: Void.self) { g in
            for from in 0..<4 {
                g.addTask {
                    for seq in 0..<perThread { sink(.error(op: String(from), message: String(seq))) }
                }
            }
        }
        // Every job posted so far has run once this one does.
        thread.runWhenIdleAndWait {}
        let seen = handled.withLock { $0 }
        for from in 0..<4 {
            let got = seen[from] ?? []
            #expect(got.count == perThread, "thread \(from): \(got.count) of \(perThread) events handled")
            #expect(got == Array(0..<perThread), "thread \(from): out of order or repeated")
        }
        var left: [StoreEvent] = []
        inbox.take(into: &left)
        #expect(left.isEmpty, "an event was left in the inbox with no job to take it")
    }

    @Test("put says when the inbox was empty; take empties it, oldest first")
    func putAndTake() {
        let inbox = StoreEventInbox()
        #expect(inbox.put(.error(op: "a", message: "1")))
        #expect(!inbox.put(.error(op: "a", message: "2")))
        var batch: [StoreEvent] = []
        inbox.take(into: &batch)
        let taken = batch.map { e -> String in
            if case .error(_, let m) = e { return m }
            return "?"
        }
        #expect(taken == ["1", "2"])
        batch.removeAll()
        inbox.take(into: &batch)
        #expect(batch.isEmpty)
        #expect(inbox.put(.error(op: "a", message: "3")), "empty again: the next event posts a job")
    }
}
