import CIAPSupport

/// The messages waiting for the game. Each is handed out exactly once:
/// to `pop` (polling, JSON), `popMessage` (the Swift API, a value) or the
/// listener (callback), never twice.
public final class MessageQueue: @unchecked Sendable {
    public typealias Listener = @Sendable (UnsafePointer<CChar>) -> Void

    private struct Item {
        var seq: UInt64
        /// The value, for the Swift API's queue. Nil in the C ABI's queue,
        /// which keeps only the JSON (a value holds a dozen strings, each
        /// retained and released whenever the item is copied), and for JSON
        /// pushed as bytes (tests of the queue itself). Boxed: a
        /// `BridgeMessage` inline would make every item hundreds of bytes,
        /// copied whole at each push and pop.
        var message: Box?
        /// The JSON, when rendered already (at push, for the C ABI's queue).
        var bytes: [UInt8]?
        var resultKey: Int64?
        /// An answer to a game's request (RequestBudget counts them): the
        /// message's `answersRequest`, noted at push.
        var isAnswer: Bool
    }

    private final class Box {
        let message: BridgeMessage
        init(_ message: BridgeMessage) { self.message = message }
    }

    private let lock = Lock()
    // `items`, `head`, `nextSeq`, `deliveryScheduled` and `ledger` are read
    // and written only under `lock`, and nothing called while it is held
    // can reach them (they are private; `withLedger`'s body and
    // `delivery.post` cannot, and the lock is not recursive): Swift's
    // run-time exclusivity checks on them (4 a poll, as many a push) can
    // find nothing, and are off.
    @exclusivity(unchecked) private var items: [Item] = []
    /// True for the C ABI's queues: JSON is rendered at push, on the SDK
    /// thread (during an open, by the thread waiting in `iap_open`:
    /// RenderAhead.swift), so the game's poll only copies it. The Swift
    /// API's queue keeps values and renders nothing.
    let rendersJSON: Bool
    /// Called (outside the lock) after each push: the Swift API's wake-up.
    private var wakeup: (@Sendable () -> Void)?
    @exclusivity(unchecked) private var head = 0
    @exclusivity(unchecked) private var nextSeq: UInt64 = 1
    /// Number of queued messages, readable without the lock (the per-frame
    /// empty poll reads only this). Owned by the caller when passed in.
    public let pendingCount: UnsafeMutablePointer<Int64>
    private let ownsCount: Bool

    private var listener: Listener?
    /// The listener's calls so far, and whether one is under way (under
    /// `lock`); `listenerDone` wakes a `setListener` waiting for one to end.
    /// Lock order: `listenerDone`, then `lock`.
    @exclusivity(unchecked) private var listenerCalls: UInt64 = 0
    @exclusivity(unchecked) private var listenerCallUnderWay = false
    private let listenerDone = Monitor()
    /// Runs the listener: a thread of the SDK's own (see SDKThread for why
    /// not libdispatch), to which a push posts `drainJob`.
    private let delivery = SDKThread(role: "SDK's callback thread", name: "IAPBridge calls", unblocksSignals: true)
    /// The one job the delivery thread runs, made once: a push allocates no
    /// closure. Set at the end of init.
    private var drainJob: (@Sendable () -> Void)?
    /// A drain job is posted and has not yet found the queue empty: the
    /// pushes in between post nothing more.
    @exclusivity(unchecked) private var deliveryScheduled = false
    /// The bridge's one lifecycle state, held here (one queue per bridge)
    /// and read by its Coordinator too. Once closed the queue takes and hands
    /// out nothing: `close` makes it closed, or the bridge's close job before it.
    public let lifecycle = BridgeLifecycle()
    private var closed: Bool { lifecycle.isClosed }
    /// What was handed out (C9's shown results, unpolled answers): told of
    /// every push and hand-out under this queue's lock, asked by the
    /// Coordinator through `withLedger`.
    @exclusivity(unchecked) private var ledger = DeliveryLedger()
    /// Non-zero while `iap_open` renders ahead (RenderAhead.swift): pushes
    /// keep the value and leave the JSON to the opening thread. Read
    /// without the lock by every push (an atomic load).
    private let aheadFlag: UnsafeMutablePointer<Int64>
    /// The opening thread's helper, and what it has looked at: every item
    /// up to `aheadSeq` (under `lock`).
    @exclusivity(unchecked) private var ahead: RenderAhead?
    @exclusivity(unchecked) private var aheadSeq: UInt64 = 0
    /// Called once, under `lock`, when the queue next runs empty
    /// (`whenDrained`).
    @exclusivity(unchecked) private var onDrained: (@Sendable () -> Void)?
    @exclusivity(unchecked) private var unrenderedSincePoke = 0

    public init(counter: UnsafeMutablePointer<Int64>? = nil, rendersJSON: Bool = true) {
        self.rendersJSON = rendersJSON
        if let counter {
            pendingCount = counter
            ownsCount = false
        } else {
            pendingCount = .allocate(capacity: 1)
            ownsCount = true
        }
        iapc_atomic_store_i64(pendingCount, 0)
        aheadFlag = .allocate(capacity: 1)
        iapc_atomic_store_i64(aheadFlag, 0)
        drainJob = { [weak self] in self?.drain() }
    }

    /// Starts the callback thread; `iap_open` calls it, so no later call
    /// needs a thread the system may refuse (C8).
    public func startDelivery() throws(IAPError) {
        try delivery.start()
    }

    deinit {
        delivery.stop()
        if ownsCount { pendingCount.deallocate() }
        aheadFlag.deallocate()
    }

    /// Queues a message; returns its sequence number. `resultKey`: the key
    /// of a result the game must confirm (one per key per session). A
    /// stored result is rendered here like any message, from its facts.
    @discardableResult
    public func push(_ message: BridgeMessage, resultKey: Int64? = nil) -> UInt64 {
        if rendersJSON && iapc_atomic_load_i64(aheadFlag) == 0 {
            return push(Item(seq: 0, message: nil, bytes: message.json, resultKey: resultKey, isAnswer: message.answersRequest))
        }
        return push(Item(seq: 0, message: Box(message), bytes: nil, resultKey: resultKey, isAnswer: message.answersRequest))
    }

    /// Queues JSON with no value behind it (tests of the queue's delivery).
    @discardableResult
    public func push(_ bytes: [UInt8], resultKey: Int64? = nil) -> UInt64 {
        push(Item(seq: 0, message: nil, bytes: bytes, resultKey: resultKey, isAnswer: false))
    }

    private func push(_ item: Item) -> UInt64 {
        var item = item
        let resultKey = item.resultKey
        let (seq, wake, poke) = lock.withLock { () -> (UInt64, (@Sendable () -> Void)?, RenderAhead?) in
            let seq = nextSeq
            nextSeq += 1
            // After close the counter may belong to the next bridge of this slot.
            guard !closed else { return (seq, nil, nil) }
            ledger.queued(resultKey: resultKey, isAnswer: item.isAnswer)
            item.seq = seq
            items.append(item)
            iapc_atomic_add_i64(pendingCount, 1)
            scheduleDeliveryLocked()
            return (seq, wakeup, item.bytes == nil ? unrenderedPushedLocked() : nil)
        }
        wake?()
        poke?.poke()
        return seq
    }

    /// The helper to wake when a batch of unrendered messages is queued.
    private func unrenderedPushedLocked() -> RenderAhead? {
        guard let ahead else { return nil }
        unrenderedSincePoke += 1
        guard unrenderedSincePoke >= RenderAhead.batch else { return nil }
        unrenderedSincePoke = 0
        return ahead
    }

    // MARK: Rendering ahead (iap_open: RenderAhead.swift)

    /// From now on pushes leave their JSON to `helper`'s thread, until
    /// `endRenderingAhead`. The C ABI's queue only (the Swift API's renders
    /// nothing).
    func beginRenderingAhead(_ helper: RenderAhead) {
        precondition(rendersJSON, "only a queue that renders JSON renders ahead")
        lock.withLock {
            ahead = helper
            unrenderedSincePoke = 0
        }
        iapc_atomic_store_i64(aheadFlag, 1)
    }

    /// Pushes render their JSON again; what was queued unrendered is
    /// rendered by the helper or, if still not, when taken.
    func endRenderingAhead() {
        iapc_atomic_store_i64(aheadFlag, 0)
        lock.withLock { ahead = nil }
    }

    /// Renders up to `limit` of the messages queued unrendered, oldest
    /// first, on the calling thread, outside the lock; returns how many
    /// it rendered. A message taken meanwhile was rendered by its taker
    /// (this render of it is then dropped, and still counted).
    func renderAhead(limit: Int) -> Int {
        var todo: [(seq: UInt64, box: Box)] = []
        todo.reserveCapacity(limit)
        lock.withLock {
            guard !closed, let first = items.first?.seq else { return }
            var i = max(head, aheadSeq >= first ? Int(aheadSeq - first) + 1 : 0)
            while i < items.count && todo.count < limit {
                assert(items[i].seq == first + UInt64(i), "queued items have consecutive sequence numbers")
                if items[i].bytes == nil, let box = items[i].message { todo.append((items[i].seq, box)) }
                i += 1
            }
            if i > head { aheadSeq = max(aheadSeq, items[i - 1].seq) }
        }
        guard !todo.isEmpty else { return 0 }
        let rendered = todo.map { $0.box.message.json }
        lock.withLock {
            guard !closed, let first = items.first?.seq else { return }
            for (n, t) in todo.enumerated() where t.seq >= first {
                let i = Int(t.seq - first)
                guard i >= head, i < items.count, items[i].message === t.box else { continue }
                items[i].bytes = rendered[n]
                items[i].message = nil
            }
        }
        return todo.count
    }

    /// Messages queued and not rendered yet (tests of rendering ahead).
    var unrenderedCount: Int {
        lock.withLock { items[head...].reduce(0) { $0 + ($1.bytes == nil && $1.message != nil ? 1 : 0) } }
    }

    @inline(__always)
    public var isEmpty: Bool { iapc_atomic_load_i64(pendingCount) == 0 }

    /// The next message as JSON (the C ABI).
    public func pop() -> [UInt8]? {
        if isEmpty { return nil }
        guard let item = lock.withLock({ popLocked() }) else { return nil }
        return item.bytes ?? item.message?.message.json ?? []
    }

    /// The next message as a value (the Swift API). Skips JSON pushed as
    /// bytes, which only tests of the queue itself push.
    public func popMessage() -> BridgeMessage? {
        while !isEmpty {
            guard let item = lock.withLock({ popLocked() }) else { return nil }
            if let m = item.message { return m.message }
        }
        return nil
    }

    /// Sets (or with nil clears) what runs after each push, outside the
    /// queue's lock: the Swift API wakes its event stream with it.
    public func setWakeup(_ w: (@Sendable () -> Void)?) {
        lock.withLock { wakeup = w }
    }

    private func popLocked() -> Item? {
        guard !closed, head < items.count else { return nil }
        let item = items[head]
        items[head].bytes = nil
        items[head].message = nil
        head += 1
        ledger.handedOut(resultKey: item.resultKey, isAnswer: item.isAnswer)
        if head == items.count, let drained = onDrained {
            onDrained = nil
            drained()
        }
        if head > 1024 && head * 2 > items.count {
            items.removeFirst(head)
            head = 0
        }
        iapc_atomic_add_i64(pendingCount, -1)
        return item
    }

    /// Calls `body` once the game has taken everything queued (at once if
    /// nothing is), under the queue's lock: `body` must not touch the queue
    /// (it posts a job). Not called if the queue closes first.
    func whenDrained(_ body: @escaping @Sendable () -> Void) {
        lock.withLock {
            guard !closed else { return }
            if head == items.count { body() } else { onDrained = body }
        }
    }

    /// Makes room in the ledger for `n` results (an open's).
    func reserveResults(_ n: Int) { lock.withLock { ledger.reserve(results: n) } }

    /// Reads or changes the ledger under the queue's lock, so it agrees
    /// with what the queue holds. `closed`: the queue is closed (a result
    /// given back then stays forgotten).
    func withLedger<T>(_ body: (inout DeliveryLedger, _ closed: Bool) -> T) -> T {
        lock.withLock { body(&ledger, closed) }
    }

    public var count: Int { Int(iapc_atomic_load_i64(pendingCount)) }

    /// Sets (or with nil clears) the listener. While one is set, messages go
    /// to it on the SDK's delivery thread; otherwise they wait for `pop`.
    /// Returns once a call of the previous listener under way has returned
    /// (unless called from that call, on the delivery thread): after it, the
    /// previous listener is never entered again, so a game may free what it
    /// gave it. It read the listener, then called it outside the lock, and
    /// a listener replaced in between was entered after this returned (a
    /// game that detached, then freed its context, found an attack).
    public func setListener(_ l: Listener?) {
        let call: UInt64? = lock.withLock {
            listener = l
            scheduleDeliveryLocked()
            return listenerCallUnderWay ? listenerCalls : nil
        }
        guard let call, !delivery.isCurrent else { return }
        listenerDone.locked {
            while lock.withLock({ listenerCallUnderWay && listenerCalls == call }) { listenerDone.wait() }
        }
    }

    private func scheduleDeliveryLocked() {
        guard listener != nil, !deliveryScheduled, !closed, head < items.count, let job = drainJob else { return }
        // Refused only once the thread has stopped (the queue is closed then).
        deliveryScheduled = delivery.post(job)
    }

    private func drain() {
        while true {
            let next: (Item, Listener)? = lock.withLock {
                guard let l = listener, !closed, let m = popLocked() else {
                    deliveryScheduled = false
                    return nil
                }
                listenerCalls &+= 1
                listenerCallUnderWay = true
                return (m, l)
            }
            guard let (item, l) = next else { return }
            var cstr = item.bytes ?? item.message?.message.json ?? []
            cstr.append(0)
            // The listener runs with no SDK lock held: it may call back into the SDK.
            cstr.withUnsafeBufferPointer { buf in
                buf.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buf.count) { l($0) }
            }
            listenerDone.locked {
                lock.withLock { listenerCallUnderWay = false }
                listenerDone.broadcast()
            }
        }
    }

    /// Stops deliveries and empties the queue. Waits for a callback in
    /// progress, unless called from the delivery thread itself (a callback
    /// closing its bridge).
    public func close(fromDeliveryThread: Bool) {
        lifecycle.advance(to: .closed)
        lock.withLock {
            listener = nil
            wakeup = nil
            onDrained = nil
            // Undelivered messages are dropped from memory (results stay in the
            // outbox) and the counter is left at zero: the registry hands this
            // slot, counter included, to the next bridge.
            items.removeAll()
            head = 0
            ledger.clear()
            iapc_atomic_store_i64(pendingCount, 0)
        }
        // Ends the delivery thread after the callback under way (if any) and
        // waits for it, unless this is that thread.
        delivery.stop()
    }

    /// True when the caller is running on this queue's delivery thread.
    public var isOnDeliveryThread: Bool { delivery.isCurrent }
}
