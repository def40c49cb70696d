/// The SDK thread's timers: a binary min-heap ordered by due time, then by
/// the order they were scheduled (equal times run first-scheduled first).
/// Insert and remove are O(log n): a game that floods the bridge with
/// delayed purchases must not turn every schedule into a scan of the others
/// (issue 21: 47,000 queued buys made each insert an O(n) search of a sorted
/// array and held `iap_close` for minutes).
struct TimerHeap<Job> {
    private(set) var items: [(due: Int64, seq: UInt64, job: Job)] = []
    private var nextSeq: UInt64 = 0

    var isEmpty: Bool { items.isEmpty }
    var count: Int { items.count }
    /// The earliest due time, if any.
    var nextDue: Int64? { items.first?.due }

    mutating func insert(due: Int64, _ job: Job) {
        nextSeq += 1
        items.append((due, nextSeq, job))
        var i = items.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard Self.before(items[i], items[parent]) else { break }
            items.swapAt(i, parent)
            i = parent
        }
    }

    /// Removes and returns the earliest job if it is due at `now`.
    mutating func popDue(now: Int64) -> Job? {
        guard let first = items.first, first.due <= now else { return nil }
        let last = items.removeLast()
        if !items.isEmpty {
            items[0] = last
            var i = 0
            while true {
                let l = 2 * i + 1, r = l + 1
                var m = i
                if l < items.count, Self.before(items[l], items[m]) { m = l }
                if r < items.count, Self.before(items[r], items[m]) { m = r }
                if m == i { break }
                items.swapAt(i, m)
                i = m
            }
        }
        return first.job
    }

    mutating func removeAll() { items.removeAll() }

    private static func before(_ a: (due: Int64, seq: UInt64, job: Job), _ b: (due: Int64, seq: UInt64, job: Job)) -> Bool {
        a.due != b.due ? a.due < b.due : a.seq < b.seq
    }
}
