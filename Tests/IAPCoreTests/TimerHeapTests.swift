@testable import IAPCore
import Testing

/// The SDK thread's timer heap against a sorted list: same order (due time,
/// then scheduling order), and only what is due comes out.
@Suite("Timer heap")
struct TimerHeapTests {
    @Test("random due times, ties included: popped in (due, scheduled) order, nothing early, nothing lost")
    func order() {
        var rng = SystemRandomNumberGenerator()
        for round in 0..<50 {
            var heap = TimerHeap<Int>()
            var reference: [(due: Int64, n: Int)] = []
            let count = Int.random(in: 0...400, using: &rng)
            for n in 0..<count {
                let due = Int64.random(in: 0...(round % 2 == 0 ? 20 : 100_000), using: &rng)  // many ties on even rounds
                heap.insert(due: due, n)
                reference.append((due, n))
            }
            reference.sort { $0.due != $1.due ? $0.due < $1.due : $0.n < $1.n }
            var popped: [Int] = []
            var now: Int64 = -1
            while !heap.isEmpty {
                #expect(heap.popDue(now: (heap.nextDue ?? 0) - 1) == nil, "nothing comes out before it is due")
                now = heap.nextDue ?? now
                while let n = heap.popDue(now: now) { popped.append(n) }
            }
            #expect(popped == reference.map(\.n), "round \(round)")
        }
    }

    @Test("100,000 timers: inserted and drained (O(log n) each; a sorted-array insert was O(n))")
    func many() {
        var heap = TimerHeap<Int>()
        for n in 0..<100_000 { heap.insert(due: Int64((n * 7919) % 100_000), n) }
        #expect(heap.count == 100_000)
        var last: Int64 = -1, drained = 0, outOfOrder = 0
        while let due = heap.nextDue {
            if due < last { outOfOrder += 1 }
            last = due
            if heap.popDue(now: due) != nil { drained += 1 }
        }
        #expect(drained == 100_000 && outOfOrder == 0)
    }
}
