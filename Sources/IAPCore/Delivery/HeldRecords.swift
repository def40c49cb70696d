/// C11's bookkeeping at open: the purchase records found in the outbox, held
/// until the store vouches for them (Coordinator+OpenResolution.swift).
///
/// Each distinct store transaction of the held records has a slot, found by
/// one hash of its ID; what the store says of that transaction at start (the
/// facts it re-delivered, whether it lists it as unfinished, whether a record
/// of it was delivered) is kept by slot, so that each record is resolved
/// without hashing its transaction ID again. Entries are references: a
/// record and what was read from it travel through resolution uncopied (an
/// open with 1,000 held records copied each record and its facts 3-5 times).
/// Owned by the SDK thread, like the rest of the delivery state.
final class HeldRecords {
    /// One held record and what was read from it once.
    final class Entry {
        let record: OutboxRecord
        let stored: StoredPurchase
        /// The slot of the record's store transaction.
        let slot: Int
        /// The record's transaction ID is the unverified namespace's
        /// (`Outbox.unverifiedTag`): its delivery is counted apart.
        let isUnverifiedTag: Bool

        init(record: OutboxRecord, stored: StoredPurchase, slot: Int, isUnverifiedTag: Bool) {
            self.record = record
            self.stored = stored
            self.slot = slot
            self.isUnverifiedTag = isUnverifiedTag
        }
    }

    // Every field is private and no method calls out while it holds one
    // (no closures are taken): Swift's run-time exclusivity checks on them
    // (about 180 instructions each, several a record) can find nothing, and
    // are off.

    /// Held records, oldest first, until the store's unfinished list
    /// resolves them (`takeWaiting`).
    @exclusivity(unchecked) private var waiting: [Entry]
    /// Records of something owned the store does not list as unfinished:
    /// they wait for the player's entitlements at open (`takeParked`).
    @exclusivity(unchecked) private var owned: [Entry] = []
    /// By store transaction (`TransactionTag`: a numeric ID hashes as a number).
    @exclusivity(unchecked) private var slotOf: [TransactionTag: Int] = [:]
    /// Per slot: the transaction the store re-delivered at start, whose
    /// facts a held record's message is rebuilt from.
    @exclusivity(unchecked) private var reported: [StoreTransaction?] = []
    /// Per slot: bit 0, a record of the transaction was delivered; bit 1, a
    /// record of its unverified namespace was; bits 2 and 3, a record of the
    /// one, of the other, is held.
    @exclusivity(unchecked) private var flags: [UInt8] = []
    /// The slots `noteReported` found, in the order the store reported them:
    /// its unfinished list names the same transactions, mostly in the same
    /// order, so `listedSlots` checks there before it hashes an ID.
    @exclusivity(unchecked) private var reportedOrder: [Int32] = []
    /// Per slot: its place in `reportedOrder` (-1: not reported), so that a
    /// listed ID found by its hash puts the comparison back in step.
    @exclusivity(unchecked) private var reportedAt: [Int32] = []
    /// True until the store's unfinished list took the held records.
    @exclusivity(unchecked) private(set) var isWaitingForUnfinished = true

    /// The outbox's `confirmCalls` when the records were held: a confirm
    /// since may have taken one of them (a store that lists its unfinished
    /// transactions after the game's first confirm).
    let confirmCallsAtHold: Int

    /// `capacity`: about how many records will be held (the outbox's live
    /// count): every table is sized once.
    init(capacity: Int, confirmCalls: Int) {
        confirmCallsAtHold = confirmCalls
        waiting = []
        waiting.reserveCapacity(capacity)
        slotOf.reserveCapacity(capacity)
        reported.reserveCapacity(capacity)
        reportedOrder.reserveCapacity(capacity)
        reportedAt.reserveCapacity(capacity)
        flags.reserveCapacity(capacity)
    }

    /// Holds `record` (a purchase the SDK wrote, read as `stored`).
    func hold(_ record: OutboxRecord, _ stored: StoredPurchase) {
        let (id, unverified) = Outbox.splitTag(record.transactionID)
        let storeID = TransactionTag(id, .transaction)
        let slot: Int
        if let s = slotOf[storeID] {
            slot = s
        } else {
            slot = reported.count
            slotOf[storeID] = slot
            reported.append(nil)
            flags.append(0)
            reportedAt.append(-1)
        }
        flags[slot] |= unverified ? 8 : 4
        waiting.append(Entry(record: record, stored: stored, slot: slot, isUnverifiedTag: unverified))
    }

    /// The held records, once: the store's unfinished list resolves them.
    func takeWaiting() -> [Entry] {
        isWaitingForUnfinished = false
        defer { waiting = [] }
        return waiting
    }

    /// Parks a record of something owned until the entitlements at open.
    func park(_ e: Entry) { owned.append(e) }
    var hasParked: Bool { !owned.isEmpty }

    /// The parked records, once: the entitlements at open resolve them.
    func takeParked() -> [Entry] {
        defer { owned = [] }
        return owned
    }

    /// Per slot: whether the store lists its transaction in `ids` (its
    /// unfinished transactions). A listed ID the store re-delivered in the
    /// same place is found by a comparison of IDs, any other by one hash
    /// (at 100,000 held records, a hash lookup that misses the cache costs
    /// ten times as much).
    func listedSlots(_ ids: [String]) -> [Bool] {
        var listed = [Bool](repeating: false, count: reported.count)
        var next = 0
        for id in ids {
            if next < reportedOrder.count {
                let s = Int(reportedOrder[next])
                if reported[s]?.id == id {
                    listed[s] = true
                    next += 1
                    continue
                }
            }
            if let s = slotOf[TransactionTag(id, .transaction)] {
                listed[s] = true
                // A transaction reported and not listed (finished since)
                // no longer throws every later ID onto the hash.
                if reportedAt[s] >= 0 { next = Int(reportedAt[s]) + 1 }
            }
        }
        reportedOrder = []
        return listed
    }

    /// Keeps what the store re-delivered at start of a held transaction.
    /// `tag`: the transaction's ID as a `.transaction` tag. Returns whether
    /// a record of it in the transaction's own namespace (`unverified`: the
    /// unverified one) is held.
    func noteReported(_ t: StoreTransaction, tag: TransactionTag, unverified: Bool) -> Bool {
        guard let s = slotOf[tag] else { return false }
        reported[s] = t
        if isWaitingForUnfinished && reportedAt[s] < 0 {
            reportedAt[s] = Int32(truncatingIfNeeded: reportedOrder.count)
            reportedOrder.append(Int32(truncatingIfNeeded: s))
        }
        return flags[s] & (unverified ? 8 : 4) != 0
    }

    /// The IDs of the records still held (waiting or parked): none was
    /// shown to the game. One pass; only a confirm under a key that two
    /// live records share (an edited outbox) asks.
    func heldRecordIDs() -> Set<UInt64> {
        var ids = Set<UInt64>(minimumCapacity: waiting.count + owned.count)
        for e in waiting { ids.insert(e.record.id) }
        for e in owned { ids.insert(e.record.id) }
        return ids
    }

    /// The slot of a held store transaction (tests).
    func slot(ofTransaction id: String) -> Int? { slotOf[TransactionTag(id, .transaction)] }

    func reportedTransaction(_ e: Entry) -> StoreTransaction? { reported[e.slot] }

    func wasDelivered(_ e: Entry) -> Bool { flags[e.slot] & (e.isUnverifiedTag ? 2 : 1) != 0 }
    func markDelivered(_ e: Entry) { flags[e.slot] |= e.isUnverifiedTag ? 2 : 1 }
    /// The store's transaction of slot `s` (its verified namespace).
    func wasDelivered(slot s: Int) -> Bool { flags[s] & 1 != 0 }
    func markDelivered(slot s: Int) { flags[s] |= 1 }
}
