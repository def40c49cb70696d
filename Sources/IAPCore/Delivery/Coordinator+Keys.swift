/// The keys results are stored under when the store, not a click of this
/// session, decides them: a click's own key, a late key after the click had
/// a result, a store key derived from the transaction. All derived keys are
/// negative, so never one `iap_buy` hands out (C7).
extension Coordinator {
    /// The key a game purchase's result is stored under: its click's key,
    /// unless that click already had a result of its own (C9: one result per
    /// key): a live one, or a failure the game confirmed (a store that
    /// charged after it reported an error). Then a key of its own, with the
    /// click named in `clickKey`. So the same transaction seen again after
    /// its tombstone went (a late update-stream twin) comes back under the
    /// key the game already granted and ignores, and a charge that follows a
    /// failure comes under a key the game never granted, never as a second
    /// result of the failed click's key.
    ///
    /// That key is derived from the click and the transaction (`lateKey`),
    /// not the next fresh one: the same transaction always gets the same
    /// key (a twin after a restart is ignored again), and at open the
    /// key of a stored record can be checked against the store's facts
    /// (C11). Negative, like a store key: never a key `iap_buy` hands out
    /// (C7).
    func keyForGameResult(_ k: Int64, transaction txn: String?, seed: String) -> (key: Int64, clickKey: Int64?) {
        assertOwner()
        if keys.isAwaiting(k) || !clickHasResult(k, besides: txn) {
            keys.raise(to: k)
            return (k, nil)
        }
        if let txn { return (lateKey(click: k, transaction: txn), k) }
        return (derivedKey("c:\(k):" + seed), k)
    }

    /// True when the click with key `k` already has a result other than
    /// transaction `txn`'s: a live record under its key (of another
    /// transaction, or any for `txn` nil), or a failure, even confirmed.
    /// `alone`: the caller knows the only live record under `k` is one of
    /// `txn` (Outbox.sharedKeys), so no index is asked.
    func clickHasResult(_ k: Int64, besides txn: String?, alone: Bool = false) -> Bool {
        if outbox.clickFailed(k) { return true }
        assert(!alone || !outbox.hasLive(key: k, otherThan: txn), "a key said to be alone has another transaction's record")
        return !alone && outbox.hasLive(key: k, otherThan: txn)
    }

    /// The key of transaction `txn` (an outbox transaction ID) answering
    /// click `k` after that click had a result of its own: derived from both,
    /// past a live record of another transaction with the same key.
    func lateKey(click k: Int64, transaction txn: String) -> Int64 {
        var key = Coordinator.hashKey("c:\(k):" + txn)
        while outbox.hasLive(key: key, otherThan: txn) { key -= 1 }
        return key
    }

    /// A store-initiated transaction's key: derived from its ID, so the same
    /// transaction always gets the same key (negative: never a game's).
    func storeKey(_ t: StoreTransaction, flavor: TombstoneFlavor) -> Int64 {
        // Seeded "t:<id>" or "r:<id>": keys derived by earlier versions stay the same.
        var k = Coordinator.hashKey(TransactionTag(t.id, flavor).encoded)
        // Probe past a live record of another transaction with the same key.
        while outbox.hasLive(key: k, otherThan: t.id) { k -= 1 }
        return k
    }

    /// A negative key derived from `seed`, past any live record's.
    func derivedKey(_ seed: String) -> Int64 {
        var k = Coordinator.hashKey(seed)
        while outbox.hasLive(key: k) { k -= 1 }
        return k
    }

    static func hashKey(_ seed: String) -> Int64 {
        var h: UInt64 = 0xcbf29ce484222325
        for b in seed.utf8 { h = (h ^ UInt64(b)) &* 0x100000001b3 }
        return -Int64(h & 0x3FFF_FFFF_FFFF_FFFF) - 1
    }
}
