/// What the store reports, on the SDK thread: each result stored durably
/// before the game is shown it (C2), one result per key (C9), failures and
/// revocations as well as purchases.
extension Coordinator {
    func handle(_ event: StoreEvent) {
        assertOwner()
        guard !closed else { return }
        storeFailed = false
        dispatch(event)
        if storeFailed {
            retryEvents.append(event)
            scheduleRetry()
        }
    }

    func dispatch(_ event: StoreEvent) {
        assertOwner()
        // The store answered a purchase of this session: it no longer counts
        // against the in-flight bound (a "pending" is an answer too).
        switch event {
        case .transaction(_, .purchase(let k)), .purchaseFailed(let k, _, _), .pending(let k, _, _):
            keys.answered(k)
        default: break
        }
        switch event {
        case .transaction(let t, let arrival):
            if t.revocationDateMs != nil { handleRevocation(t) } else { handleTransaction(t, arrival) }
        case .purchaseFailed(let key, let productID, let failure):
            handleFailure(key: key, productID: productID, failure: failure, detail: nil)
        case .pending(let key, let productID, let reason):
            // Not a result: the key keeps awaiting its one result (C9).
            queue.push(BridgeMessage.pending(key: key, productID: productID, reason: reason))
        case .products(let answer):
            queue.push(BridgeMessage.products(answer))
        case .unfinished(let ids):
            resolveHeld(unfinished: ids, owned: nil)
            // Tombstones of confirmed unverified results stay while the store
            // lists them (tested by name, without a second set of tags). The
            // set is made when a tombstone asks (none at a first open).
            var unfinished: Set<String>? = nil
            do throws(IAPError) {
                try outbox.forgetFinished { id in
                    if unfinished == nil { unfinished = Set(ids) }
                    return unfinished!.contains(Outbox.storeTransactionID(id))
                }
            } catch {
                queue.push(BridgeMessage.error(op: "outbox", code: error.code, message: error.message))
            }
        case .finished(let ids):
            outbox.noteFinished(ids)
        case .entitlements(let list, let reason, let storeNowMs):
            if reason == .open { resolveHeld(unfinished: nil, owned: list) }
            if reason == .open && !config.entitlementsAtOpen { return }
            // `now`: the clock the list was judged by, so `expiresDate - now`
            // is the time left as the store sees it (the simulator's clock
            // after `advance`; the device clock on StoreKit).
            queue.push(BridgeMessage.entitlements(list, reason: reason, nowMs: storeNowMs ?? POSIX.nowMs()))
        case .error(let op, let message):
            queue.push(BridgeMessage.error(op: op, code: .store, message: message))
        case .status(let canPay, let storefront, let reason):
            queue.push(BridgeMessage.storeStatus(canMakePayments: canPay, storefront: storefront, reason: reason))
        case .promoted(let productID, let offer):
            queue.push(BridgeMessage.promoted(productID: productID, offer: offer))
        case .subscriptions, .appTransaction, .sheet, .storeMessage, .storeMessageShown:
            handleRequestAnswer(event)
        }
    }

    func handleTransaction(_ t: StoreTransaction, _ arrival: Arrival) {
        assertOwner()
        // Kept only for the transactions of held records: the facts their
        // messages are rebuilt from.
        let recordTxn = t.verified ? t.id : Outbox.unverifiedTag(t.id)
        // Made once: the held records, the live index and the tombstones
        // are all asked about this transaction.
        let tag = TransactionTag(recordTxn, .transaction)
        if let held, case .update = arrival,
           held.noteReported(t, tag: t.verified ? tag : TransactionTag(t.id, .transaction), unverified: !t.verified),
           held.isWaitingForUnfinished {
            // A held record of it is live: until the unfinished list
            // resolves them, none was shown (so none confirmed) and none
            // dropped. Seen before (C4), and not a click's answer: nothing
            // to do but keep its facts, as below, without asking the index.
            assert(outbox.liveRecordIDs(tag) != nil, "a held record left the outbox before its resolution")
            return
        }
        // Whose click this answers: the purchase call's key, or the token's
        // (C5). A renewal carries its first purchase's token but is the
        // store's, and so is a change of the subscription made outside the
        // game, which inherits the token too (`inheritsToken`): under the
        // click's key it was a second success of a key the game granted
        // already, and a game granting each key once dropped a paid change
        // (found by an attack).
        var click: Int64? = nil
        if case .purchase(let k) = arrival {
            click = k
        } else if !t.isRenewal, !t.inheritsToken, let k = t.token?.key, k > 0 {
            click = k
        }
        let answersClick: Bool = { if case .purchase(let k) = arrival { return keys.isAwaiting(k) } else { return false } }()
        let owned = t.kind != .consumable
        let live = outbox.liveRecordIDs(tag)
        if live != nil || outbox.hasTombstone(tag) {
            // Seen before (C4): only a new click on something owned gets its
            // own answer (the existing transaction, no new charge).
            guard answersClick, owned, let k = click, !(live?.contains(where: { outbox.key(ofLive: $0) == k }) ?? false) else {
                // Confirmed before: make sure the store forgets it, but never
                // before the confirm is durable (C3): a pending commit
                // finishes it then.
                // (`live` answered for the purchase records already.)
                if t.verified && live == nil && outbox.liveRecordIDs(transaction: t.id, flavor: .revocation) == nil
                    && !outbox.isFinishPending(transaction: t.id) && openedBytesDurable() {
                    store.finish(transactionID: t.id)
                }
                return
            }
        }
        // A click another install or device made (StoreKit shows the token
        // to every device of the Apple ID; a reinstall is a new install) is
        // not this install's: origin "store". It keeps the click's key, so a
        // game whose save outlived the install (a cloud save) recognises a
        // key it granted already and a re-delivery is not granted twice (C4).
        let ours: Bool = {
            if case .purchase = arrival { return true }
            return t.token?.key(forInstall: install) != nil
        }()
        let key: Int64
        var clickKey: Int64? = nil
        let origin: PurchaseOrigin
        if let k = click {
            guard let answer = keyForCharge(click: k, transaction: recordTxn) else {
                // The click's failure is live: this charge waits for its
                // confirm (C9), unfinished at the store meanwhile.
                chargesAwaitingFailureConfirm[k] = t
                return
            }
            (key, clickKey) = answer
            origin = ours ? .game : .store
        } else {
            key = storeKey(t, flavor: .transaction)
            origin = .store
        }
        let alreadyOwned = owned && (t.alreadyOwned || (answersClick && t.token?.key != click))
        storeAndEmit(key: key, kind: t.verified ? .purchase : .unverified, txn: recordTxn,
                     facts: .purchase(t, origin: origin, alreadyOwned: alreadyOwned, clickKey: clickKey))
    }

    func handleRevocation(_ t: StoreTransaction) {
        assertOwner()
        // A revocation whose signature does not verify could be forged to
        // take a paid item away: it takes nothing (and, like every
        // unverified transaction, is never finished: C6).
        guard t.verified else { return }
        guard outbox.liveRecordIDs(transaction: t.id, flavor: .revocation) == nil else { return }
        if outbox.hasTombstone(transaction: t.id, flavor: .revocation) {
            // Not while its purchase's result is still live: the store
            // would stop vouching for a "7" the game has not handled (C3).
            // (No live revocation record: the guard above.)
            if !outbox.isFinishPending(transaction: t.id) && outbox.liveRecordIDs(transaction: t.id, flavor: .transaction) == nil
                && openedBytesDurable() {
                store.finish(transactionID: t.id)
            }
            return
        }
        let key = storeKey(t, flavor: .revocation)
        let origin: PurchaseOrigin = t.token?.key(forInstall: install) != nil ? .game : .store
        storeAndEmit(key: key, kind: .revocation, txn: t.id, facts: .revocation(t, origin: origin))
    }

    /// C3: a tombstone read at open finishes a transaction only once the
    /// bytes it was read from are durable (`Outbox.makeOpenedBytesDurable`).
    /// False when they cannot be made so: the transaction stays unfinished
    /// (the store delivers it again), and the failure is reported.
    func openedBytesDurable() -> Bool {
        do throws(IAPError) { try outbox.makeOpenedBytesDurable() } catch {
            queue.push(BridgeMessage.error(op: "outbox", code: error.code,
                                      message: "the outbox read at open could not be made durable, so a transaction it confirmed stays unfinished at the store: \(error.message)"))
            return false
        }
        return true
    }

    func handleFailure(key k: Int64, productID: String, failure: PurchaseFailure, detail: String?) {
        assertOwner()
        if failure == .interrupted {
            // Not final (C9): the payment may still complete; the game is told
            // it waits, and the key keeps awaiting its one result.
            queue.push(BridgeMessage.pending(key: k, productID: productID, reason: .interrupted))
            return
        }
        let key = keyForFailure(k, seed: "\(productID):\(POSIX.nowMs())")
        let text = detail.map { "\(failure.text) (\($0))" } ?? failure.text
        // The click is remembered as failed with its record: a charge the
        // store makes for it after all comes under its key once this
        // failure is confirmed (keyForCharge); a record an earlier version
        // stored under a key of its own keeps it (vouchedKey).
        storeAndEmit(key: key, kind: .failure, txn: "", facts: .failure(productID: productID, failure: failure, detail: text),
                     failedClick: k)
    }

    /// Writes the record durably, then makes its message visible (C2), then
    /// the key stops awaiting. On a write failure nothing is shown; the
    /// store still lists the transaction as unfinished, so it comes back.
    /// The message is rendered from the facts when it is queued.
    func storeAndEmit(key: Int64, kind: RecordKind, txn: String, facts: ResultFacts, failedClick: Int64? = nil) {
        assertOwner()
        assert(!outbox.hasLive(key: key), "C9: a second result under key \(key)")
        do throws(IAPError) {
            let r = try outbox.put(key: key, kind: kind, transactionID: txn, facts: facts, failedClick: failedClick)
            assert(outbox.isDurable(r.id), "C2")
            if let message = facts.message(key: key) { queue.push(message, resultKey: key) }
            keys.resolved(key)
        } catch {
            storeFailed = true
            // Said once; the retries are silent until one succeeds.
            if !retrying {
                queue.push(BridgeMessage.error(op: "outbox", code: error.code,
                                          message: "a result could not be stored, so it is not delivered yet; the SDK tries again on a fresh file and delivers it once the disk works (or at the next launch): \(error.message)",
                                          key: key, productID: facts.productID))
            }
        }
    }
}
