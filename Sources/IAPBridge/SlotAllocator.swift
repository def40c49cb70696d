/// Which slots of the handle table are free, being opened, live, or being
/// closed. Registry keeps one under its lock; the lock-free table `iap_poll`
/// reads mirrors it. Every operation is O(1) except `reserve`, whose search
/// is bounded by `capacity` and runs only when a free slot exists: before,
/// the count of live bridges alone guarded it, and once every free slot was
/// reserved (opens and closes in progress) the search spun under the lock
/// for ever (issue 21, item 11).
struct SlotAllocator {
    enum State: Equatable { case free, reserved, live }

    let capacity: Int
    private(set) var states: [State]
    private(set) var live = 0
    private(set) var reserved = 0
    private var next = 0

    init(capacity: Int) {
        precondition(capacity > 0)
        self.capacity = capacity
        states = Array(repeating: .free, count: capacity)
    }

    var free: Int { capacity - live - reserved }

    /// A free slot, now reserved (an open in progress); nil when none is
    /// free. Slots are handed out round-robin, so a closed handle's slot is
    /// reused as late as possible.
    mutating func reserve() -> Int? {
        guard free > 0 else { return nil }
        var slot = next
        for _ in 0..<capacity {
            if states[slot] == .free {
                states[slot] = .reserved
                reserved += 1
                next = (slot + 1) % capacity
                return slot
            }
            slot = (slot + 1) % capacity
        }
        preconditionFailure("SlotAllocator: \(free) free slots counted, none found")
    }

    /// The open succeeded: the reserved slot holds a live bridge.
    mutating func commit(_ slot: Int) {
        precondition(states[slot] == .reserved, "commit of a slot that is \(states[slot])")
        states[slot] = .live
        reserved -= 1
        live += 1
    }

    /// A live bridge is being closed: its slot stays taken until `release`.
    mutating func retire(_ slot: Int) {
        precondition(states[slot] == .live, "retire of a slot that is \(states[slot])")
        states[slot] = .reserved
        live -= 1
        reserved += 1
    }

    /// A reserved slot (an open that failed, a close that finished) is free again.
    mutating func release(_ slot: Int) {
        guard states[slot] == .reserved else { return }
        states[slot] = .free
        reserved -= 1
    }
}
