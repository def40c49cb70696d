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
    /// Keys of results queued and not handed out yet.
    private var queuedResults: IntSet<Int64> = []
    /// Keys of results handed to the game this session and not confirmed.
    private var shown: IntSet<Int64> = []
    /// Answers to requests queued and not handed out yet.
    private var answers = 0

    /// Sizes the key sets for `n` results at once (an open re-queuing
    /// them), instead of growing them by doubling and rehashing.
    mutating func reserve(results n: Int) {
        queuedResults.reserveCapacity(n)
        shown.reserveCapacity(n)
    }

    /// A message is about to enter the queue.
    mutating func queued(resultKey: Int64?, isAnswer: Bool) {
        if let k = resultKey {
            // C9 by construction: every key has at most one result.
            assert(!queuedResults.contains(k) && !shown.contains(k), "C9: two results under key \(k)")
            queuedResults.insert(k)
        }
        if isAnswer { answers += 1 }
    }

    /// A message left the queue for the game.
    mutating func handedOut(resultKey: Int64?, isAnswer: Bool) {
        if let k = resultKey {
            let was = queuedResults.remove(k)
            assert(was != nil, "C9: result \(k) handed out without being queued")
            shown.insert(k)
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
        if shown.remove(key) != nil { return .taken }
        return queuedResults.contains(key) ? .notShown : .unknown
    }

    /// Gives a taken result back (its confirm could not be accepted).
    mutating func untake(_ key: Int64) { shown.insert(key) }

    /// Answers to requests waiting unpolled.
    var answersQueued: Int { answers }

    /// The queue was emptied (close): nothing is queued or shown.
    mutating func clear() {
        queuedResults.removeAll()
        shown.removeAll()
        answers = 0
    }
}
