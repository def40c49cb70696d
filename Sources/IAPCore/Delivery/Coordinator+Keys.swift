/// The keys results are stored under when the store, not a click of this
/// session, decides them: a click's own key, a late key when another
/// transaction's result holds it, a store key derived from the transaction.
/// All derived keys are negative, so never one `iap_buy` hands out (C7).
extension Coordinator {
    /// The key of a transaction answering click `k` (its token names the
    /// click), nil while it must wait:
    /// - the click's key while the click awaits its one result, and after a
    ///   failure of it the game confirmed (a store that charged after it
    ///   reported an error): the charge is then that click's one success.
    ///   Every install gives it that key, since the token names the click; a
    ///   key of its own, given only where this outbox remembered the
    ///   failure, came back under the click's key after a reinstall or on a
    ///   second device, and a game whose save outlived the install granted
    ///   it twice (found by an attack);
    /// - nil while the click's failure is live (C9: one live result per
    ///   key): the charge waits, unfinished at the store, until the game
    ///   confirms that failure (`chargesAwaitingFailureConfirm`);
    /// - a key of its own, derived from the click and the transaction
    ///   (`lateKey`), naming the click in `clickKey`, when another
    ///   transaction's result holds the click's key live.
    /// The same transaction seen again after its tombstone went (a late
    /// update-stream twin) comes back under the key the game granted.
    func keyForCharge(click k: Int64, transaction txn: String) -> (key: Int64, clickKey: Int64?)? {
        assertOwner()
        if !keys.isAwaiting(k) {
            if outbox.hasLiveFailure(key: k) { return nil }
            if outbox.hasLive(key: k, otherThan: txn) { return (lateKey(click: k, transaction: txn), k) }
        }
        keys.raise(to: k)
        return (k, nil)
    }

    /// The key a click's failure is stored under: the click's, unless the
    /// click already had a result (C9); then one derived from `seed`.
    func keyForFailure(_ k: Int64, seed: String) -> Int64 {
        assertOwner()
        if keys.isAwaiting(k) || !clickHasResult(k, besides: nil) {
            keys.raise(to: k)
            return k
        }
        return derivedKey("c:\(k):" + seed)
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

    @_spi(Testing) public static func hashKey(_ seed: String) -> Int64 {
        var h: UInt64 = 0xcbf29ce484222325
        for b in seed.utf8 { h = (h ^ UInt64(b)) &* 0x100000001b3 }
        return -Int64(h & 0x3FFF_FFFF_FFFF_FFFF) - 1
    }
}
