/// The keys of the game's purchases (C7, C9), shared by the game thread,
/// which takes a key for each `iap_buy`, and the SDK thread, which learns
/// what became of each. A small object with its own lock, never held across
/// I/O or a store call, so the SDK thread never takes the game-facing lock
/// (`Coordinator.gate`), and the delivery state stays the SDK thread's.
///
/// Its rules, asserted in debug:
/// - the mark only rises: every key handed out is above every key handed out
///   before on this dataDir (the outbox keeps the mark across launches);
/// - a key is in flight (asked of the store, not answered) only while it
///   awaits its result, and at most `maxInFlight` are in flight.
final class KeyAllocator: @unchecked Sendable {
    private let lock = Lock()
    /// Every key handed out so far is at most this.
    private var mark: Int64
    /// Keys whose purchase has no result stored yet: started this session,
    /// or open intents found at open (C5).
    private var awaiting: IntSet<Int64>
    /// Purchases started this session that the store has not answered (no
    /// result, no "pending"): bounded so a game calling `iap_buy` in a loop
    /// cannot pile up work that holds `iap_close` for minutes (issue 21).
    private var inFlight: IntSet<Int64> = []
    let maxInFlight: Int

    init(mark: Int64, awaiting: IntSet<Int64>, maxInFlight: Int) {
        precondition(mark < Outbox.keyLimit, "C7: the key mark leaves room for every next key")
        self.mark = mark
        self.awaiting = awaiting
        self.maxInFlight = maxInFlight
    }

    /// The lowest click that is its own key: 10^12 ms after 1970 (September
    /// 2001). A key must be new to the game's save, not only to this
    /// dataDir: a save that outlives the install (a cloud save, a second
    /// device) lists the keys granted before, and a fresh or restored
    /// dataDir remembers fewer. An engine clock (milliseconds since launch,
    /// or whole seconds) clicks the same low values on every install; taken
    /// as keys, they would repeat a key the save granted already, and the
    /// game would ignore a paid purchase. Below this, no click is a wall
    /// clock's milliseconds.
    static let lowestClickKey: Int64 = 1_000_000_000_000

    /// The key for a click at `clickMs`: the click itself when it is above
    /// the mark and a wall clock's (at least `lowestClickKey`), otherwise
    /// `max(now, mark + 1)`. `start` posts the purchase
    /// (under this lock, so no later key can be started ahead of it); when it
    /// refuses, nothing is taken.
    func take(clickMs: Int64, nowMs: Int64, start: (Int64) -> Bool) throws(IAPError) -> Int64 {
        try lock.withLock { () throws(IAPError) -> Int64 in
            guard inFlight.count < maxInFlight else {
                throw IAPError(.busy, "\(inFlight.count) purchases are waiting for the store's answer (at most \(maxInFlight), the config's \"purchasesInFlight\"); nothing was stored or charged: try again once a \"7\" or \"pending\" arrives")
            }
            var k = clickMs
            if k <= mark || k < KeyAllocator.lowestClickKey {
                // No click (<= 0), a low one (two taps in a millisecond, a
                // clock set back) or one no wall clock makes (an engine
                // clock, see `lowestClickKey`): past the mark and past the
                // wall clock. The mark lives only
                // in the outbox, and a device restored from an older backup
                // brings an older one back; the keys handed out since were
                // at most the clock of their day (or a burst's last + 1), so
                // today's clock is past them, where `mark + 1` was one of
                // them (issue 21).
                k = max(nowMs, mark + 1)
            }
            // Every key handed out is one the mark can remember. Only an
            // outbox whose mark was edited to the highest one gets here: no
            // key is left, and none is handed out twice.
            guard k < Outbox.keyLimit else {
                throw IAPError(.invalidArgument, "no key is left on this dataDir: its outbox's key mark is \(mark), the highest a key may be (the outbox was edited); a key is never handed out twice, so no purchase can start")
            }
            guard start(k) else { throw IAPError(.closed, "the bridge is closed") }
            assert(k > mark, "C7: keys only increase")
            mark = k
            awaiting.insert(k)
            inFlight.insert(k)
            return k
        }
    }

    /// The store answered the purchase of key `k` (a result or a "pending"):
    /// it no longer counts against `maxInFlight`.
    func answered(_ k: Int64) {
        lock.withLock { _ = inFlight.remove(k) }
    }

    /// The purchase of key `k` could not start: nothing awaits it.
    func abandoned(_ k: Int64) {
        lock.withLock {
            awaiting.remove(k)
            inFlight.remove(k)
        }
    }

    /// Key `k`'s one result is stored (C9): it no longer awaits one.
    /// It may still be in flight: a result can come through the store's
    /// update stream before the purchase call itself answers.
    func resolved(_ k: Int64) {
        lock.withLock { _ = awaiting.remove(k) }
    }

    func isAwaiting(_ k: Int64) -> Bool { lock.withLock { awaiting.contains(k) } }

    /// A click key the store answered with (this install's or another's,
    /// from before a restore): the mark rises past it, never falls.
    func raise(to k: Int64) {
        guard k < Outbox.keyLimit else { return }
        lock.withLock { mark = max(mark, k) }
    }

    var currentMark: Int64 { lock.withLock { mark } }
    var inFlightCount: Int { lock.withLock { inFlight.count } }
}
