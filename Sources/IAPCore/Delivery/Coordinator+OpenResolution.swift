/// C11, at open: purchase records found in the outbox wait until the store
/// vouches for them (an unfinished transaction, or something owned), are
/// delivered rebuilt from the store's facts under the key those facts give,
/// and the others are dropped and reported (`"unvouched"`).
extension Coordinator {
    /// C11: the key the store's facts give a held purchase record, as
    /// `handleTransaction` gives it to the transaction now: the click its
    /// purchase token names (C5; whatever install made the token: the key is
    /// the click's either way, and a token this device made before its
    /// install identity was set aside names another install), or
    /// the late key of that click (`keyForCharge`; or the late key an earlier
    /// version stored it under), or, with no click,
    /// the store key derived from the transaction ID. The key itself is
    /// not evidence: a player can rewrite it (the record's checksum is
    /// public) and have a granted purchase granted again under another key.
    /// Nil when the facts cannot say: an "already owned" answer of
    /// something owned carries the token of the click that bought it (and
    /// granting an owned item again grants nothing new). `sharedKeys`: the
    /// keys of more than one live record when the resolution began: under
    /// any other, `r` is the only record (Outbox.sharedKeys). Nil: no key
    /// is known to be alone.
    func vouchedKey(_ t: StoreTransaction, record r: OutboxRecord, stored: StoredPurchase,
                    sharedKeys: IntSet<Int64>?) -> (key: Int64, clickKey: Int64?)? {
        assertOwner()
        if stored.alreadyOwned && t.kind != .consumable { return nil }
        guard !t.isRenewal, let k = t.token?.key, k > 0 else { return (storeKey(t, flavor: .transaction), nil) }
        if t.inheritsToken && r.key != k {
            // A transaction that inherits its token is the store's
            // (`handleTransaction`), unless its record is stored under a
            // key versions before that rule gave it, and the game may have
            // granted it under: the key the token names (then it goes on
            // below), or the click's late key, given while another result
            // held the click's key. That late key is kept only while such a
            // result still does. Otherwise it is refused (the record is
            // dropped as edited and the transaction comes again under its
            // store key): moved there by hand (the hash is public) from the
            // store key the game granted, it would be a second grant.
            if r.key == lateKey(click: k, transaction: r.transactionID), clickHasResult(k, besides: r.transactionID) {
                return (r.key, k)
            }
            return (storeKey(t, flavor: .transaction), nil)
        }
        let alone = k == r.key && sharedKeys.map { !$0.contains(k) } ?? false
        if keys.isAwaiting(k) || !clickHasResult(k, besides: r.transactionID, alone: alone) { return (k, nil) }
        // The click had a failure, or another live record holds its key.
        let late = lateKey(click: k, transaction: r.transactionID)
        // Stored under its late key: the key the game was shown (a charge
        // after its click's failure, as earlier versions keyed it; a second
        // transaction of the click).
        if r.key == late { return (late, k) }
        // After a confirmed failure: the click's own key (keyForCharge).
        if alone || !outbox.hasLive(key: k, otherThan: r.transactionID) { return (k, nil) }
        return (late, k)
    }

    /// C11: delivers the held records the store vouches for: a transaction
    /// it lists as unfinished (`.unfinished`), or, for something owned (an
    /// "already owned" answer, a non-consumable, a subscription), one among
    /// the player's entitlements at open. One per
    /// transaction for consumables (a record copied under another key is not
    /// a second purchase); rebuilt from the store's facts. The others are
    /// dropped, and the game is told.
    func resolveHeld(unfinished: [String]?, owned: [StoreTransaction]?) {
        assertOwner()
        guard let held else { return }
        // Each record's fields were read once (HeldRecords.Entry) and travel
        // with it, uncopied. Every record the store does not vouch for is
        // dropped before any is resolved: a dropped record must not count
        // as another result of its key when the others' keys are checked
        // (a forged record under a genuine one's key would otherwise have
        // the genuine one reported as edited and stored again).
        var vouched: [(entry: HeldRecords.Entry, ownedFacts: StoreTransaction?)] = []
        if let unfinished, held.isWaitingForUnfinished {
            let listed = held.listedSlots(unfinished)
            for e in held.takeWaiting() {
                if listed[e.slot] { vouched.append((e, nil)); continue }
                // Something owned (a non-consumable, a subscription) can be
                // finished while a record of it is live: two clicks on it,
                // the second's confirm finishing the shared transaction.
                // The player's entitlements decide for those.
                if e.stored.alreadyOwned || e.stored.kind != .consumable {
                    held.park(e)  // its entitlements decide
                } else {
                    reject(e.record, stored: e.stored, "the store does not list transaction \(e.record.transactionID) as unfinished (finished already, or never made): finished by another install or device of the player (granted there), or an old, copied or edited outbox record")
                }
            }
        }
        // The owned transaction that vouches for a record: its facts, like a
        // re-delivered transaction's, decide what the game is shown (a record
        // naming another product than the transaction it borrows is dropped).
        if let owned, held.hasParked {
            var byID: [String: StoreTransaction] = [:]
            var byOriginal: [String: StoreTransaction] = [:]
            for t in owned { byID[t.id] = t; byOriginal[t.originalID] = t }
            for e in held.takeParked() {
                let txn = e.record.transactionID, original = e.stored.originalID
                if let t = byID[txn] ?? byOriginal[txn] ?? byID[original] ?? byOriginal[original] {
                    vouched.append((e, t))
                } else {
                    reject(e.record, stored: e.stored, "the player does not own what the record says (transaction \(txn))")
                }
            }
        }
        var rekeyed: [(transaction: StoreTransaction, slot: Int)] = []
        // Records only leave the outbox during this loop (a dropped one):
        // a key held by one record at its start is held by one, or none,
        // and a held record is still live, unless a confirm came since the
        // records were held (one may have taken a record sharing its key):
        // then every key is asked about.
        let sharedKeys = vouched.isEmpty || outbox.confirmCalls != held.confirmCallsAtHold ? nil : outbox.sharedKeys()
        for (e, ownedFacts) in vouched {
            resolve(e, ownedFacts: ownedFacts, held: held, sharedKeys: sharedKeys, rekeyed: &rekeyed)
        }
        // The transactions of records dropped for their key, once no other
        // record of theirs is delivered: handled as the store delivers them,
        // after this job (a failed write is then retried like any result).
        for (t, slot) in rekeyed where !held.wasDelivered(slot: slot) {
            held.markDelivered(slot: slot)
            executor.post { [weak self] in self?.handle(.transaction(t, .update)) }
        }
        releaseAfterOpen(vouched)
        if !held.isWaitingForUnfinished && !held.hasParked {
            self.held = nil
            releaseAfterOpen(held)
        }
    }

    /// One held record the store vouches for (listed unfinished, or owned
    /// as `ownedFacts` says): delivered rebuilt from the store's facts, or
    /// dropped and reported when they contradict it.
    private func resolve(_ e: HeldRecords.Entry, ownedFacts: StoreTransaction?, held: HeldRecords, sharedKeys: IntSet<Int64>?,
                         rekeyed: inout [(transaction: StoreTransaction, slot: Int)]) {
        let r = e.record, stored = e.stored
        let reported = held.reportedTransaction(e)
        let facts = reported ?? ownedFacts
        // The key, like the rest, comes from the store's facts where they
        // say it (the transaction itself, re-delivered at start).
        let vouched = r.kind == .purchase ? reported.flatMap { vouchedKey($0, record: r, stored: stored, sharedKeys: sharedKeys) } : nil
        if r.kind == .unverified, facts?.verified == true {
            // It verifies now: its success was stored on its own (once);
            // this result 6 has nothing left to say.
            outbox.reject(r.id)
            scheduleCommit()
        } else if let t = facts, t.productID != stored.productID {
            reject(r, stored: stored, "the record names \(stored.productID), the store's transaction \(t.productID)")
        } else if held.wasDelivered(e) && (facts?.kind ?? stored.kind) == .consumable {
            reject(r, stored: stored, "a second record of transaction \(r.transactionID): one purchase, one result")
        } else if let t = reported, let v = vouched, v.key != r.key {
            // A rewritten key would have the game grant a purchase it
            // granted already (issue 21): dropped, and the transaction
            // is delivered again under the key its token names (the
            // game ignores a key it granted).
            let from = v.clickKey.map { "derived from click \($0), which its purchase token names and which had a result before" }
                ?? (v.key > 0 ? "the click its purchase token names" : "derived from its transaction ID: no click of the game")
            reject(r, stored: stored, "the record's key \(r.key) is not the key of the store's transaction \(t.id), \(v.key) (\(from)): an edited outbox record; the transaction is delivered under key \(v.key)")
            rekeyed.append((t, e.slot))
        } else if vouched == nil, sharedKeys.map({ $0.contains(r.key) }) ?? true,
                  outbox.hasLive(key: r.key, otherThan: r.transactionID) {
            // No facts gave the key, and another live record holds it: only
            // an edited outbox (a failure edited in under it, shown at open).
            // Delivered, it would be the key's second result (C9), and a
            // confirm of the key could take the one the game was not shown.
            // Dropped; with the store's facts here, the transaction is
            // delivered again as the store delivers it, under a key of its
            // own.
            reject(r, stored: stored, "the record's key \(r.key) is another live record's: an edited outbox record"
                   + (facts != nil ? "; the transaction is delivered under a key of its own" : ""))
            if let t = facts { rekeyed.append((t, e.slot)) }
        } else {
            held.markDelivered(e)
            // Owned through another transaction of its chain (a renewal
            // since): that one says the player still owns it, but the
            // message stays the record's own (an "already owned" answer shown
            // for transaction 1 at 0 came back naming the renewal at 2.99,
            // under the same key: found by an attack on updates).
            let shown = reported == nil && ownedFacts.map({ $0.id != r.transactionID }) == true ? nil : facts
            queue.push(rebuilt(r, stored: stored, facts: shown, clickKey: vouched.map(\.clickKey) ?? stored.clickKey),
                       resultKey: r.key)
        }
    }

    func reject(_ r: OutboxRecord, stored: StoredPurchase, _ reason: String) {
        reject(r, productID: stored.productID, reason)
    }

    func reject(_ r: OutboxRecord, productID: String, _ reason: String) {
        outbox.reject(r.id)
        queue.push(BridgeMessage.unvouched(key: r.key, productID: productID, transactionID: r.transactionID, reason: reason))
        scheduleCommit()
    }

    /// A held record's message, from the store's facts when it reported the
    /// transaction (price, dates, verification), with what only the SDK
    /// knows (key, origin, alreadyOwned) from the record; `clickKey` as the
    /// facts give it, where they do.
    /// With no facts, the game is shown the record as the SDK stored it
    /// (whether it verified as its record's kind says, as format 1 did).
    func rebuilt(_ r: OutboxRecord, stored: StoredPurchase, facts: StoreTransaction?, clickKey: Int64?) -> BridgeMessage {
        var t = facts ?? stored.transaction
        if facts == nil { t.verified = r.kind == .purchase }
        return .purchase(key: r.key, transaction: t, origin: stored.origin, alreadyOwned: stored.alreadyOwned,
                         clickKey: facts == nil ? stored.clickKey : clickKey)
    }

    /// A failure or revocation record's message, delivered at open without
    /// asking the store (C11: they grant nothing); nil when its facts are
    /// not what its kind says (an edited record): a failure the SDK could
    /// store, or a revocation of the record's own transaction.
    static func storedFailureOrRevocation(_ r: OutboxRecord) -> BridgeMessage? {
        switch (r.kind, r.facts) {
        case (.failure, .failure(_, let failure, _)) where failure != .interrupted:  // interrupted is "pending", never stored
            return r.facts.message(key: r.key)
        case (.revocation, .revocation(let t, _)) where t.id == r.transactionID:
            return r.facts.message(key: r.key)
        default:
            return nil
        }
    }
}
