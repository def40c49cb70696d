/// Purchases started and confirms committed, on the SDK thread: the intent
/// written before the store is asked (C5), confirms grouped into one sync
/// and only then finished at the store (C3), compaction after.
extension Coordinator {
    func startPurchase(key: Int64, productID: String, quantity: Int, winBackOfferID: String?) {
        assertOwner()
        guard !closed else { return }
        do throws(IAPError) {
            // The first purchase of an open: dataDir's entry durable before
            // the store sees a token naming install-id's identity (read from
            // there, perhaps never synced), not only before the result.
            if !dataDirAnchored {
                try POSIX.anchorDirectory(config.dataDir)
                dataDirAnchored = true
            }
            // C5, C7: the key is written before anything can answer it, and
            // is durable with (at the latest) the answer's own record.
            try outbox.addIntent(key: key, productID: productID, atMs: POSIX.nowMs())
        } catch {
            keys.abandoned(key)
            queue.push(BridgeMessage.error(op: "buy", code: error.code,
                                      message: "the purchase was not started (nothing was charged): \(error.message)",
                                      key: key, productID: productID))
            return
        }
        do throws(IAPError) {
            let token = PurchaseToken(key: key, install: install)
            if let winBackOfferID {
                try store.purchase(productID: productID, key: key, token: token, winBackOfferID: winBackOfferID)
            } else {
                try store.purchase(productID: productID, key: key, token: token, quantity: quantity)
            }
        } catch {
            let failure: PurchaseFailure = switch error.code {
            case .unknownProduct: .productUnavailable
            case .notSupported: .notAllowed
            default: .unknown
            }
            handleFailure(key: key, productID: productID, failure: failure, detail: error.message)
        }
    }

    func confirmJob(key: Int64) {
        assertOwner()
        guard !closed, let ids = outbox.recordIDs(withKey: key), var id = ids.first else { return }
        if ids.count > 1 {
            // Two live records under one key: only an edited outbox (C9
            // holds for what the SDK writes). The game was shown one; a
            // record still held for the store's word was not, and taking it
            // would finish a paid purchase the game never saw. The held one
            // is resolved as usual (under a key another record held, it is
            // delivered under a key of its own).
            let unshown = held?.heldRecordIDs() ?? []
            id = ids.first { !unshown.contains($0) } ?? id
        }
        outbox.confirm([id])
        scheduleCommit()
        // A charge that waited for this failure's confirm takes its key now;
        // its record's write carries the confirm before it. Handled as the
        // store's event, so a failed write is retried like any (C12).
        if let t = chargesAwaitingFailureConfirm.removeValue(forKey: key), !outbox.hasLive(key: key) {
            handle(.transaction(t, .update))
        }
    }

    /// How long a commit waits after the confirm that asked for it, so that
    /// the confirms of one frame (a restore can bring hundreds) share one
    /// sync. Only durability waits (and the finish after it); iap_flush
    /// commits at once.
    static let commitWindowMs: Int64 = 4

    func scheduleCommit() {
        assertOwner()
        guard !commitScheduled else { return }
        commitScheduled = true
        executor.schedule(afterMs: Coordinator.commitWindowMs) { [weak self] in
            guard let self, !self.closed else { return }
            _ = self.commitNow()
        }
    }

    /// One group commit: confirms written and synced, then their
    /// transactions finished (C3). Returns the failure, also reported as an
    /// `"error"` message; the confirms stay pending and are retried.
    @discardableResult
    func commitNow() -> IAPError? {
        assertOwner()
        commitScheduled = false
        let toFinish: [String]
        do throws(IAPError) { toFinish = try outbox.flushConfirms() } catch {
            queue.push(BridgeMessage.error(op: "confirm", code: error.code,
                                      message: "a confirm could not be made durable; its result stays unconfirmed and its transaction unfinished: \(error.message)"))
            return error
        }
        // An unverified result is confirmed but never finished (C6): StoreKit
        // keeps it and re-checks it, and a transient verification failure
        // must not lose a paid purchase.
        let finishable = toFinish.filter { !Outbox.isUnverifiedTag($0) }
        if !finishable.isEmpty {
            FaultPoint.beforeFinish.reach()
            store.finish(transactionIDs: finishable)
            FaultPoint.afterFinish.reach()
        }
        if outbox.isCompactionWorthwhile {
            executor.post { [weak self] in
                guard let self, !self.closed else { return }
                self.compact()
            }
        }
        return nil
    }

    func compact() {
        assertOwner()
        do throws(IAPError) { try outbox.compactIfWorthwhile() } catch {
            queue.push(BridgeMessage.error(op: "outbox", code: error.code,
                                      message: "compacting the outbox failed; nothing was lost, it is retried later: \(error.message)"))
        }
    }
}
