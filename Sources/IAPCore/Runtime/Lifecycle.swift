import CIAPSupport

/// Where a bridge, or one of the SDK's threads, is in its life. It only
/// moves forward: open → closing → closed. A step may be skipped (a queue
/// closed on its own goes from open to closed); asking for a state reached
/// or passed already changes nothing (a second close), so nothing goes back.
///
/// A bridge (`BridgeLifecycle`, one per bridge, held by its MessageQueue
/// and read by its Coordinator):
/// - open → closing: `Coordinator.close` (or `crashForTesting`), under the
///   Coordinator's `gate`. From then on every game-facing call answers
///   `.closed`; jobs already posted still run, so close waits for them.
/// - closing → closed: the close job on the SDK thread (`shutDown`) once the
///   last commit is done, or `MessageQueue.close` (a queue of its own, or an
///   open that failed). From then on jobs do nothing, the queue takes and
///   hands out nothing and the callback is not called again.
///
/// A thread (`SDKThread.state`, under its monitor):
/// - open → closing: `stop`. Posts are refused; what was accepted runs.
/// - closing → closed: the thread, after its last job, just before it ends.
///
/// Not lifecycle, and kept apart: `MessageQueue.deliveryScheduled` (a drain
/// job is posted), and a store's own `stopped` (`Store.stop` ran: its tasks
/// and sink are gone). A store is stopped once, by the close job after the
/// bridge is closed, and is used without a bridge too (the store contract
/// tests), so its flag guards its own state under its own lock.
public enum Lifecycle: Int64, Sendable, Comparable {
    case open = 0
    case closing = 1
    case closed = 2

    public static func < (a: Lifecycle, b: Lifecycle) -> Bool { a.rawValue < b.rawValue }

    /// Moves to `next`. True when that was a step forward; false (and no
    /// change) when `next` was reached or passed already.
    @discardableResult
    public mutating func advance(to next: Lifecycle) -> Bool {
        guard next > self else { return false }
        let before = self
        self = next
        assert(self > before, "lifecycle goes only forward: \(before) → \(self)")
        return true
    }
}

/// A bridge's one lifecycle state, read without a lock from any thread (the
/// game's calls, the SDK thread's jobs, the delivery thread, the queue's
/// pushes and pops). See `Lifecycle` for the transitions and who makes them.
public final class BridgeLifecycle: @unchecked Sendable {
    private let raw = UnsafeMutablePointer<Int64>.allocate(capacity: 1)

    public init() { iapc_atomic_store_i64(raw, Lifecycle.open.rawValue) }
    deinit { raw.deallocate() }

    public var current: Lifecycle { Lifecycle(rawValue: iapc_atomic_load_i64(raw))! }
    public var isOpen: Bool { current == .open }
    public var isClosed: Bool { current == .closed }

    /// Moves to `next` (atomically: of two threads advancing at once, one
    /// makes the step). True for the one that made it.
    @discardableResult
    public func advance(to next: Lifecycle) -> Bool {
        var seen = iapc_atomic_load_i64(raw)
        while true {
            var state = Lifecycle(rawValue: seen)!
            guard state.advance(to: next) else { return false }
            if iapc_atomic_cas_i64(raw, &seen, state.rawValue) != 0 { return true }
        }
    }
}
