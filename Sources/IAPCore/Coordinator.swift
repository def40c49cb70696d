import Dispatch

/// One bridge: owns the store, the outbox and the message queue, and keeps
/// the delivery contract between them. Safe to call from any thread.
///
/// Lock order: `lock` guards the outbox and the purchase bookkeeping. It is
/// never held while calling the store or a listener; stores never hold their
/// own locks while calling the sink (see `Store`).
public final class Coordinator: @unchecked Sendable {
    public let queue: MessageQueue
    public let store: Store
    public let config: BridgeConfig
    public let openReport: Outbox.OpenReport

    private let lock = Lock()
    private let outbox: Outbox
    private var inFlight: Set<Int64> = []
    /// Record ID -> sequence number of the message that showed it this session.
    private var emittedSeq: [UInt64: UInt64] = [:]
    private var lastAutoKey: Int64 = 0
    /// SDK keys (click <= 0) are never handed out twice, across sessions and
    /// clock changes: every key up to `reservedKey` may have been used, and
    /// that mark is on disk (`sdk-keys`) before a key past it is returned, an
    /// hour of keys at a time. Found by the hardening stress test: a reopen
    /// within the same milliseconds (or a clock set back) reissued a confirmed
    /// key, and a game ignores a key it has already granted.
    private var reservedKey: Int64 = 0
    public static let keyReservationFile = "sdk-keys"
    private static let keyReservationSpan: Int64 = 3_600_000
    /// Calls that passed the open check and have not returned; `close` waits
    /// for them, so a purchase racing with close still stores its result
    /// (found by the stress test: an owned product's answer was lost).
    private let calls = DispatchGroup()
    private var closing = false
    private var closed = false
    private let dirLockFD: Int32
    private let flusher = DispatchQueue(label: "iapbridge.flush")
    private var flushScheduled = false

    /// Opens the outbox in `config.dataDir`, re-emits every unconfirmed
    /// result, then starts the store (which re-delivers unfinished
    /// transactions and reports entitlements).
    public static func open(config: BridgeConfig, store: Store, counter: UnsafeMutablePointer<Int64>? = nil) throws(IAPError) -> Coordinator {
        try POSIX.prepareDirectory(config.dataDir, role: "dataDir")
        let fd = try POSIX.lockDirectory(config.dataDir)
        let opened: (Outbox, Outbox.OpenReport)
        do throws(IAPError) { opened = try Outbox.open(directory: config.dataDir) } catch {
            unlockAndClose(fd)
            throw error
        }
        let c = Coordinator(config: config, store: store, outbox: opened.0, report: opened.1, dirLockFD: fd,
                            queue: MessageQueue(counter: counter))
        c.reservedKey = Coordinator.readKeyReservation(config.dataDir)
        c.lastAutoKey = c.reservedKey
        c.start()
        return c
    }

    private init(config: BridgeConfig, store: Store, outbox: Outbox, report: Outbox.OpenReport, dirLockFD: Int32, queue: MessageQueue) {
        self.config = config
        self.store = store
        self.outbox = outbox
        self.openReport = report
        self.dirLockFD = dirLockFD
        self.queue = queue
    }

    private func start() {
        lock.withLock {
            if openReport.isDamaged { queue.push(Messages.outboxDamaged(openReport)) }
            for r in outbox.liveRecords { emittedSeq[r.id] = queue.push(r.message) }
        }
        store.start { [weak self] event in self?.handle(event) }
    }

    // MARK: Game-facing operations

    public func requestProducts(_ ids: [String]) throws(IAPError) {
        try enterCall()
        defer { calls.leave() }
        guard ids.count <= 1000 else { throw IAPError(.invalidArgument, "at most 1000 product IDs per request, got \(ids.count)") }
        for id in ids { try Coordinator.validateProductID(id) }
        store.requestProducts(ids)
    }

    public static func validateProductID(_ id: String) throws(IAPError) {
        guard !id.isEmpty else { throw IAPError(.invalidArgument, "product ID is empty") }
        guard id.utf8.count <= 256 else { throw IAPError(.invalidArgument, "product ID is longer than 256 bytes") }
    }

    /// Starts a purchase keyed by `clickMs` (or an SDK-chosen key when
    /// `clickMs <= 0`); returns the key. The result arrives as a `"7"`.
    public func buy(productID: String, clickMs: Int64) throws(IAPError) -> Int64 {
        try Coordinator.validateProductID(productID)
        let key: Int64 = try lock.withLock { () throws(IAPError) -> Int64 in
            guard !closed && !closing else { throw IAPError(.closed, "the bridge is closed") }
            var k = clickMs
            if k <= 0 {
                k = max(POSIX.nowMs(), lastAutoKey + 1)
                while outbox.hasLive(key: k) || inFlight.contains(k) { k += 1 }
                if k > reservedKey { try reserveKeys(through: k + Coordinator.keyReservationSpan) }
                lastAutoKey = k
            } else if outbox.hasLive(key: k) || inFlight.contains(k) {
                // C7: keys are unique among live records.
                throw IAPError(.duplicateKey, "key \(k) is already used by a purchase that is not confirmed yet")
            }
            inFlight.insert(k)
            calls.enter()
            return k
        }
        defer { calls.leave() }
        do throws(IAPError) {
            try store.purchase(productID: productID, key: key, token: PurchaseToken(key: key))
        } catch {
            _ = lock.withLock { inFlight.remove(key) }
            throw error
        }
        return key
    }

    /// The game granted (or handled) the result with this key. Drops the
    /// record and, once the confirm is durable, finishes the store
    /// transaction (C3). Delivered records with this key are confirmed; if none
    /// was delivered this session yet, every record with the key is.
    public func confirm(key: Int64) throws(IAPError) {
        try lock.withLock { () throws(IAPError) in
            guard !closed else { throw IAPError(.closed, "the bridge is closed") }
            let ids = outbox.recordIDs(withKey: key)
            guard !ids.isEmpty else {
                throw IAPError(.unknownKey, "no unconfirmed result has key \(key) (already confirmed, or never issued)")
            }
            // With one record the choice below is always that record: skip
            // the queue's lock (the per-confirm cost of a burst).
            var chosen = ids
            if ids.count > 1 {
                let delivered = ids.filter { id in emittedSeq[id].map { queue.wasDelivered($0) } ?? false }
                if !delivered.isEmpty { chosen = delivered }
            }
            outbox.confirm(chosen)
            for id in chosen { emittedSeq[id] = nil }
            scheduleFlushLocked()
        }
    }

    public func restore() throws(IAPError) {
        try enterCall()
        defer { calls.leave() }
        store.restore()
    }

    public func simulate(_ command: JSONValue) throws(IAPError) -> JSONValue {
        try enterCall()
        defer { calls.leave() }
        return try store.simulate(command)
    }

    /// Blocks until every confirm so far is durable and its transaction finished.
    public func flush() {
        flusher.sync { flushNow() }
    }

    public func close() {
        let wasOpen: Bool = lock.withLock {
            let was = !closing
            closing = true
            return was
        }
        guard wasOpen else { return }
        // Calls already under way (a purchase on another thread) finish and
        // store their results first; new ones are refused.
        calls.wait()
        lock.withLock { closed = true }
        // Confirms become durable and their transactions finished while the
        // store is still running; then the store stops.
        flush()
        flusher.sync { compactNow(atClose: true) }
        store.stop()
        queue.close(fromDeliveryThread: queue.isOnDeliveryThread)
        lock.withLock { outbox.close() }
        Coordinator.unlockAndClose(dirLockFD)
    }

    public var isClosed: Bool { lock.withLock { closed } }

    /// Test and benchmark introspection.
    public var liveRecordCount: Int { lock.withLock { outbox.liveCount } }
    public var tombstoneCount: Int { lock.withLock { outbox.tombstoneCount } }

    /// Refuses a call on a closing bridge; otherwise counts it until `calls.leave()`.
    private func enterCall() throws(IAPError) {
        try lock.withLock { () throws(IAPError) in
            guard !closed && !closing else { throw IAPError(.closed, "the bridge is closed") }
            calls.enter()
        }
    }

    private static func readKeyReservation(_ dir: String) -> Int64 {
        guard let bytes = try? POSIX.readFile(dir + "/" + keyReservationFile, limit: 64),
              let n = Int64(String(decoding: bytes, as: UTF8.self)), n > 0, n < Int64.max / 2 else { return 0 }
        return n
    }

    /// Durably records that keys up to `mark` may be in use. Called with `lock` held.
    private func reserveKeys(through mark: Int64) throws(IAPError) {
        do throws(IAPError) {
            try POSIX.replaceFile(config.dataDir + "/" + Coordinator.keyReservationFile, with: Array(String(mark).utf8))
        } catch {
            throw IAPError(.io, "cannot record the SDK's key reservation: \(error.message)")
        }
        reservedKey = mark
    }

    private static func unlockAndClose(_ fd: Int32) { POSIX.unlockDirectory(fd) }

    // MARK: Group commit

    /// How long a flush waits after the confirm that asked for it, so that
    /// the confirms of one frame (a restore can bring hundreds) share one
    /// sync instead of the first few syncing alone while the rest queue up.
    /// Only durability waits (and the finish after it); the game's thread
    /// never does, and iap_flush flushes at once.
    static let commitWindow: DispatchTimeInterval = .milliseconds(4)

    private func scheduleFlushLocked() {
        guard !flushScheduled else { return }
        flushScheduled = true
        // Weak: a closed bridge (close flushed already) is not kept alive by a
        // pending window; it held the coordinator up to 4 ms after iap_close,
        // which valgrind and LeakSanitizer reported as lost at a quick exit.
        flusher.asyncAfter(deadline: .now() + Coordinator.commitWindow) { [weak self] in self?.flushNow() }
    }

    /// One group commit. The sync runs without `lock`: the game's confirms
    /// (and everything else) go on meanwhile and join the next one.
    private func flushNow() {
        let batch: Outbox.ConfirmFlush? = lock.withLock {
            flushScheduled = false
            do throws(IAPError) { return try outbox.beginConfirmFlush() } catch {
                reportFlushFailure(error)
                return nil
            }
        }
        guard let batch else { return }
        var failure: IAPError? = nil
        do throws(IAPError) { try batch.sync() } catch { failure = error }
        let toFinish: [String] = lock.withLock {
            let t = outbox.endConfirmFlush(batch, failed: failure != nil)
            if let failure { reportFlushFailure(failure) }
            return t
        }
        if !toFinish.isEmpty {
            FaultPoint.beforeFinish.reach()
            store.finish(transactionIDs: toFinish)
            FaultPoint.afterFinish.reach()
        }
        // Compaction is housekeeping: queued behind this flush, so neither
        // finishing nor iap_flush waits for it.
        if lock.withLock({ outbox.isCompactionWorthwhile }) {
            flusher.async { [weak self] in self?.compactNow(atClose: false) }
        }
    }

    /// Rewrites the outbox when it holds mostly history. It holds the lock
    /// throughout, so while confirms are waiting for a flush it waits too
    /// (the next flush queues it again); `close` runs it regardless.
    private func compactNow(atClose: Bool) {
        lock.withLock {
            guard atClose || (!closed && !outbox.hasPendingConfirms) else { return }
            do throws(IAPError) { try outbox.compactIfWorthwhile() } catch {
                queue.push(Messages.error(op: "outbox", code: error.code,
                                          message: "compacting the outbox failed; nothing was lost, it is retried later: \(error.message)"))
            }
        }
    }

    /// Not durable: the transactions stay unfinished (they will be
    /// re-delivered, and the game ignores keys it already granted).
    private func reportFlushFailure(_ error: IAPError) {
        queue.push(Messages.error(op: "confirm", code: error.code, message: error.message))
    }

    // MARK: Store events

    func handle(_ event: StoreEvent) {
        switch event {
        case .transaction(let t, let arrival):
            if t.revocationDateMs != nil { handleRevocation(t) } else { handleTransaction(t, arrival) }
        case .purchaseFailed(let key, let productID, let failure):
            handleFailure(key: key, productID: productID, failure: failure)
        case .pending(let key, let productID, let reason):
            lock.withLock {
                guard !closed else { return }
                // The key stays in flight: a purchase waiting for approval
                // still owns its key (C7) until its result arrives.
                queue.push(Messages.pending(key: key, productID: productID, reason: reason))
            }
        case .products(let answer):
            pushIfOpen(Messages.products(answer))
        case .unfinished(let ids):
            lock.withLock {
                guard !closed else { return }
                do throws(IAPError) { try outbox.forgetFinished(stillUnfinished: Set(ids)) } catch {
                    queue.push(Messages.error(op: "outbox", code: error.code, message: error.message))
                }
            }
        case .finished(let ids):
            lock.withLock { if !closed { outbox.noteFinished(ids) } }
        case .entitlements(let list, let reason):
            if reason == "open" && !config.entitlementsAtOpen { return }
            pushIfOpen(Messages.entitlements(list, reason: reason, nowMs: POSIX.nowMs()))
        case .error(let op, let message):
            pushIfOpen(Messages.error(op: op, code: .io, message: message))
        }
    }

    private func pushIfOpen(_ m: [UInt8]) {
        lock.withLock { if !closed { queue.push(m) } }
    }

    /// The key of a transaction: the game's, carried by the purchase call or
    /// the token (C5); otherwise one derived from the transaction ID, so the
    /// same store-initiated transaction always gets the same key (C7).
    private func resolveKey(_ t: StoreTransaction, _ arrival: Arrival, flavor: String) -> (Int64, String) {
        if case .purchase(let k) = arrival { return (k, "game") }
        if flavor == "t", !t.isRenewal, let k = t.token?.key { return (k, "game") }
        var h: UInt64 = 0xcbf29ce484222325
        for b in (flavor + ":" + t.id).utf8 { h = (h ^ UInt64(b)) &* 0x100000001b3 }
        var k = -Int64(h & 0x3FFF_FFFF_FFFF_FFFF) - 1
        // Probe past a live record of another transaction with the same key.
        while outbox.records(withKey: k).contains(where: { $0.transactionID != t.id }) { k -= 1 }
        return (k, "store")
    }

    private func handleTransaction(_ t: StoreTransaction, _ arrival: Arrival) {
        var finishAgain = false
        lock.withLock {
            guard !closed else { return }
            let (key, origin) = resolveKey(t, arrival, flavor: "t")
            // The purchase call's own answer for a key nothing has answered
            // yet. Anything else about a transaction already shown (its
            // update-stream twin, launch re-delivery, a restore) is the same
            // transaction again (C4). Found by the 8-thread stress: two buys of
            // one non-consumable racing, and a purchase result arriving after
            // its update-stream twin was confirmed.
            var answersClick = false
            if case .purchase = arrival { answersClick = inFlight.contains(key) }
            if origin == "game" { inFlight.remove(key) }
            let owned = t.kind != .consumable
            // Owned already: the store says so, or this click got another
            // click's transaction (its token carries the other key).
            let alreadyOwned = owned && (t.alreadyOwned || (answersClick && t.token?.key != key))
            let live = outbox.liveRecords(transaction: t.id, flavor: .transaction)
            if !live.isEmpty || outbox.hasTombstone(transaction: t.id, flavor: .transaction) {
                // Seen before: only a new click on something owned gets its
                // own answer, and never twice for one key.
                guard answersClick, owned, !live.contains(where: { $0.key == key }) else {
                    // Confirmed before: make sure the store forgets it, but
                    // never before the confirm is durable (C3): a pending
                    // flush finishes it then.
                    if live.isEmpty { finishAgain = !outbox.isFinishPending(transaction: t.id) }
                    return
                }
            }
            let message = Messages.purchase(key: key, transaction: t, origin: origin, alreadyOwned: alreadyOwned)
            storeAndEmit(key: key, kind: t.verified ? .purchase : .unverified, txn: t.id, message: message)
        }
        if finishAgain { store.finish(transactionID: t.id) }
    }

    private func handleRevocation(_ t: StoreTransaction) {
        var finishAgain = false
        lock.withLock {
            guard !closed else { return }
            guard outbox.liveRecords(transaction: t.id, flavor: .revocation).isEmpty else { return }
            if outbox.hasTombstone(transaction: t.id, flavor: .revocation) {
                finishAgain = !outbox.isFinishPending(transaction: t.id)
                return
            }
            let (key, _) = resolveKey(t, .update, flavor: "r")
            let origin = t.token?.key != nil ? "game" : "store"
            storeAndEmit(key: key, kind: .revocation, txn: t.id, message: Messages.revoked(key: key, transaction: t, origin: origin))
        }
        if finishAgain { store.finish(transactionID: t.id) }
    }

    private func handleFailure(key: Int64, productID: String, failure: PurchaseFailure) {
        lock.withLock {
            guard !closed else { return }
            inFlight.remove(key)
            let detail = Coordinator.failureText(failure)
            storeAndEmit(key: key, kind: .failure, txn: "", message: Messages.purchaseFailed(key: key, productID: productID, failure: failure, detail: detail))
        }
    }

    static func failureText(_ f: PurchaseFailure) -> String {
        switch f {
        case .cancelled: return "the player cancelled the purchase"
        case .declined: return "a parent declined the purchase (Ask to Buy)"
        case .networkError: return "the store could not be reached; nothing was charged"
        case .notAllowed: return "purchases are not allowed on this device or account"
        case .productUnavailable: return "the product is not available in this storefront"
        case .interrupted: return "the payment was interrupted; if the player completes it, a success with the same key follows"
        case .unknown: return "the store reported an unknown error; nothing was charged"
        }
    }

    /// Writes the record durably, then makes its message visible (C2).
    /// Called with `lock` held. On a write failure nothing is shown; the
    /// store still lists the transaction as unfinished, so it comes back.
    private func storeAndEmit(key: Int64, kind: RecordKind, txn: String, message: [UInt8]) {
        do throws(IAPError) {
            let r = try outbox.put(key: key, kind: kind, transactionID: txn, message: message)
            assert(outbox.isDurable(r.id), "C2")
            emittedSeq[r.id] = queue.push(r.message)
        } catch {
            queue.push(Messages.error(op: "outbox", code: error.code, message: "a result could not be stored and was not delivered; it will be retried at the next launch: \(error.message)"))
        }
    }
}
