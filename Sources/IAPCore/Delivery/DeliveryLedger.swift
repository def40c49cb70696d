/// What the game has been handed this session, for the checks that depend
/// on it: C9 (a confirm takes a result only once the game was shown it, and
/// only once) and the request bound (answers waiting unpolled,
/// RequestBudget). The message queue reports each push and each hand-out;
/// `Coordinator.confirm` asks, through `MessageQueue.withLedger`. A value
/// kept apart from the queue's FIFO, under the queue's lock: every change
/// it records is made with a push or a pop, so one lock serves both, and a
/// push or a pop costs no second lock.
///
/// Order, per result key: `queued` (before the message enters the queue),
/// `handedOut` (after it leaves, before the game gets it), then at most one
/// `takeShown` that answers `.taken`. A confirm racing the hand-out finds
/// `.notShown`: the game cannot have the message yet.
struct DeliveryLedger {
    /// Keys of the results queued or handed to the game this session and
    /// not confirmed: false while queued, true once handed out. One table,
    /// so that a hand-out updates one entry in place: with two sets it
    /// removed from one and inserted into the other, two probes of tables
    /// that at an open of 100,000 results miss the cache at every key (the
    /// removal about half of the game's polls after such an open).
    private var results: IntTable<Int64, Bool> = [:]
    /// Answers to requests queued and not handed out yet.
    private var answers = 0

    /// Sizes the table for `n` results at once (an open re-queuing them),
    /// instead of growing it by doubling and rehashing.
    mutating func reserve(results n: Int) {
        results.reserveCapacity(n)
    }

    /// A message is about to enter the queue.
    mutating func queued(resultKey: Int64?, isAnswer: Bool) {
        if let k = resultKey {
            // C9 by construction: every key has at most one result.
            let had = results.updateValue(false, forKey: k)
            assert(had == nil, "C9: two results under key \(k)")
        }
        if isAnswer { answers += 1 }
    }

    /// A message left the queue for the game.
    mutating func handedOut(resultKey: Int64?, isAnswer: Bool) {
        if let k = resultKey {
            let was = results.updateValue(true, forKey: k)
            assert(was == false, "C9: result \(k) handed out without being queued")
        }
        if isAnswer { answers -= 1 }
    }

    /// What a confirm of `key` finds.
    enum ConfirmCheck: Sendable, Equatable {
        /// The result was handed to the game: the confirm takes it (and a
        /// second confirm of the key finds `.unknown`).
        case taken
        /// The result is queued and the game has not been shown it yet.
        case notShown
        /// No result with this key is queued or shown.
        case unknown
    }

    /// Takes the shown result with this key for a confirm (C9: never a
    /// result the game has not been shown).
    mutating func takeShown(_ key: Int64) -> ConfirmCheck {
        switch results[key] {
        case true?:
            results.removeValue(forKey: key)
            return .taken
        case false?: return .notShown
        case nil: return .unknown
        }
    }

    /// Gives a taken result back (its confirm could not be accepted).
    mutating func untake(_ key: Int64) { results[key] = true }

    /// Answers to requests waiting unpolled.
    var answersQueued: Int { answers }

    /// The queue was emptied (close): nothing is queued or shown.
    mutating func clear() {
        results.removeAll()
        answers = 0
    }
}
