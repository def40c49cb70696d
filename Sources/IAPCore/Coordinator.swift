/// One bridge: owns the store, the outbox and the message queue, and keeps
/// the delivery contract (docs/CONTRACT.md) between them.
///
/// Threads (C10). The delivery state (the outbox, what was stored, what
/// awaits a commit) belongs to one executor, the bridge's SDK thread: store
/// events, disk writes and syncs, store calls and emits all run there, one at
/// a time. The game-facing calls (`buy`, `confirm`, `requestProducts`,
/// `restore`) check their arguments against `gate`, post a job and return;
/// `gate` is never held across I/O or a store call, so the game's frame never
/// waits for the disk. Only `open`, `close`, `flush` and `simulate` wait.
///
/// The rules it keeps (docs/CONTRACT.md says why):
/// - C9 one result per key: every key gets at most one `"7"` (an interrupted
///   payment or Ask to Buy is a `"pending"`, not a result), and a confirm takes
///   that result only once the game has been shown it in this session.
/// - C7 keys only increase: a key handed out is above every key handed out
///   before on this dataDir; a click key at or below that mark is replaced by
///   the next one (reported through `out_key`). Each purchase's key is
///   written (an intent) before the store is asked, and compaction keeps the
///   mark, so confirmed keys are never handed out again.
public final class Coordinator: @unchecked Sendable {
    public let queue: MessageQueue
    public let store: Store
    public let config: BridgeConfig
    /// This install's identifier, carried in every purchase token (InstallID).
    public let install: UInt32
    /// What was wrong with the install-id file, when it had to be replaced.
    private let installProblem: String?
    public let openReport: Outbox.OpenReport
    public let executor: Executor
    private let thread: SDKThread?
    /// The sheet that is up (Coordinator+Requests.swift).
    let desk = RequestDesk()

    // MARK: Game-facing state, under `gate` (short, never across I/O)

    private let gate = Lock()
    private var closing = false
    /// Every key handed out so far is at most this (C7).
    private var lastKey: Int64
    /// Keys whose purchase has no result stored yet: started this session,
    /// or open intents found at open (C5).
    private var awaiting: Set<Int64>
    /// Purchases started this session that the store has not answered yet
    /// (no "7", no "pending"): at most `maxPurchasesInFlight`.
    private var inFlight: Set<Int64> = []
    /// Requests the game made (products, restore, status, app transaction):
    /// bounded by rate and by unpolled answers (RequestBudget).
    private var requests = RequestBudget()

    /// A real store shows one payment sheet at a time; nothing a player does
    /// needs more than a few purchases waiting for an answer. Past
    /// `config.purchasesInFlight` (default 32), `iap_buy` answers IAP_E_BUSY
    /// at once, with nothing stored or charged, so that a game calling it in
    /// a loop cannot pile up work that holds `iap_close` for minutes (issue 21).
    private var maxPurchasesInFlight: Int { config.purchasesInFlight }

    // MARK: Executor-owned state (touched only by jobs on `executor`)

    private let outbox: Outbox
    private var closed = false
    private var commitScheduled = false
    private let dirLockFD: Int32
    /// Store events whose result could not be stored (a failed write or
    /// sync): handled again, on a fresh file, once the disk recovers (C12),
    /// with a back-off; `storeFailed` says the event under way failed.
    private var retryEvents: [StoreEvent] = []
    private var retryDelayMs: Int64 = 0
    private var storeFailed = false
    private var retrying = false
    /// C11: purchase records found at open, held until the store says which
    /// transactions it still lists as unfinished (`.unfinished`); only those
    /// are delivered, rebuilt from the store's own facts where it reported
    /// the transaction. Nil once resolved.
    private var heldAtOpen: [OutboxRecord]? = nil
    /// Transactions the store reported at start, for rebuilding held records.
    private var reportedAtStart: [String: StoreTransaction] = [:]
    private var heldTransactions = Set<String>()
    /// "Already owned" answers whose transaction is finished: they wait for
    /// the store's entitlements at open to vouch for them.
    private var heldOwned: [(record: OutboxRecord, stored: StoredPurchase)] = []
    private var deliveredAtStart = Set<String>()

    /// The file of version 1.0 that held its SDK key reservation; read as a floor.
    public static let keyReservationFile = "sdk-keys"

    /// Opens the outbox in `config.dataDir`, queues every unconfirmed result
    /// again, then starts the store (which re-delivers unfinished
    /// transactions and reports entitlements) and waits until the SDK thread
    /// has handled what the store reported at once. `executor`: tests pass a
    /// `ManualExecutor`; otherwise the bridge starts its own `SDKThread`.
    /// `rendersJSON`: false for the Swift API, which reads the queue's
    /// values (`MessageQueue.popMessage`) and needs no JSON. `storage`: where
    /// the outbox's log lives; tests pass a simulated disk.
    public static func open(config: BridgeConfig, store: Store, counter: UnsafeMutablePointer<Int64>? = nil,
                            executor: Executor? = nil, rendersJSON: Bool = true,
                            storage: any LogStorage = POSIXStorage()) throws(IAPError) -> Coordinator {
        try POSIX.prepareDirectory(config.dataDir, role: "dataDir")
        let fd = try POSIX.lockDirectory(config.dataDir)
        let opened: (Outbox, Outbox.OpenReport)
        let install: InstallID.Loaded
        do throws(IAPError) {
            install = try InstallID.load(dataDir: config.dataDir)
            opened = try Outbox.open(directory: config.dataDir, storage: storage)
        } catch {
            POSIX.unlockDirectory(fd)
            throw error
        }
        let queue = MessageQueue(counter: counter, rendersJSON: rendersJSON)
        var thread: SDKThread? = nil
        do throws(IAPError) {
            // Every thread the bridge needs, now, where failure is an error
            // code (C8): no later call may find the system out of threads.
            try queue.startDelivery()
            if executor == nil {
                let t = SDKThread()
                try t.start()
                thread = t
            }
        } catch {
            queue.close(fromDeliveryThread: false)
            opened.0.close()
            POSIX.unlockDirectory(fd)
            throw error
        }
        let c = Coordinator(config: config, store: store, outbox: opened.0, report: opened.1, dirLockFD: fd,
                            queue: queue, executor: executor ?? thread!, thread: thread, install: install.id,
                            installProblem: install.problem)
        c.start()
        return c
    }

    private init(config: BridgeConfig, store: Store, outbox: Outbox, report: Outbox.OpenReport, dirLockFD: Int32,
                 queue: MessageQueue, executor: Executor, thread: SDKThread?, install: UInt32, installProblem: String?) {
        self.install = install
        self.installProblem = installProblem
        self.config = config
        self.store = store
        self.outbox = outbox
        self.openReport = report
        self.dirLockFD = dirLockFD
        self.queue = queue
        self.executor = executor
        self.thread = thread
        self.lastKey = max(outbox.keyMark, Coordinator.readLegacyKeyMark(config.dataDir))
        assert(lastKey < Outbox.keyLimit, "C7: the key mark leaves room for every next key")
        self.awaiting = Set(outbox.openIntents.map(\.key))
    }

    private func start() {
        // Queued before open returns: no I/O, the records were read by open.
        if openReport.isDamaged { queue.push(BridgeMessage.outboxDamaged(openReport)) }
        if let installProblem { queue.push(BridgeMessage.error(op: "install", code: .io, message: installProblem)) }
        // Failures and revocations grant nothing: delivered at once. Purchases
        // wait for the store to vouch for them (C11): the file is on the
        // player's device and may have been edited, replayed or restored.
        var held: [OutboxRecord] = []
        var editedFound: [OutboxRecord] = []
        for r in outbox.liveRecords {
            switch r.kind {
            case .failure, .revocation:
                if let shown = Coordinator.storedFailureOrRevocation(r) { queue.push(shown, resultKey: r.key) } else { editedFound.append(r) }
            case .purchase, .unverified:
                if StoredPurchase(r) != nil { held.append(r) } else { editedFound.append(r) }
            }
        }
        heldAtOpen = held
        heldTransactions = Set(held.map { Coordinator.storeTransactionID($0.transactionID) })
        reportedAtStart.reserveCapacity(heldTransactions.count)
        let exec = executor
        store.attach(scheduler: StoreScheduler(executor: exec))
        // Events are handled on the SDK thread, whichever thread reports them.
        let sink: @Sendable (StoreEvent) -> Void = { [weak self] event in
            exec.post { [weak self] in self?.handle(event) }
        }
        let edited = editedFound
        exec.runAndWait { [self] in
            for r in edited {
                let what = r.kind == .failure ? "failure" : r.kind == .revocation ? "revocation" : "purchase"
                reject(r, productID: r.facts.productID, "record \(r.id) under key \(r.key) is not a \(what) the SDK wrote: an edited outbox record")
            }
            store.start(sink: sink)
        }
        exec.runWhenIdleAndWait {}
    }

    // MARK: Game-facing operations (no I/O, C10)

    public static func validateProductID(_ id: String) throws(IAPError) {
        guard !id.isEmpty else { throw IAPError(.invalidArgument, "product ID is empty") }
        guard id.utf8.count <= 256 else { throw IAPError(.invalidArgument, "product ID is longer than 256 bytes") }
    }

    /// An identifier the store gave the game (a win-back offer's, a
    /// subscription group's): 1 to 255 bytes, no control characters.
    /// `what` opens the message ("offer_id must be ...").
    static func checkStoreID(_ id: String, _ what: String) throws(IAPError) {
        guard !id.isEmpty, id.utf8.count <= 255, !id.utf8.contains(where: { $0 < 0x20 }) else {
            throw IAPError(.invalidArgument, "\(what) (1 to 255 bytes, no control characters), got \"\(id.prefix(40))\"")
        }
    }

    /// A request's product IDs: at most 1000, each valid.
    static func validateProductIDs(_ ids: [String]) throws(IAPError) {
        guard ids.count <= 1000 else { throw IAPError(.invalidArgument, "at most 1000 product IDs per request, got \(ids.count)") }
        for id in ids { try validateProductID(id) }
    }

    public func requestProducts(_ ids: [String]) throws(IAPError) {
        try Coordinator.validateProductIDs(ids)
        try postRequestJob { [self] in store.requestProducts(ids) }
    }

    public func restore() throws(IAPError) {
        try postRequestJob { [self] in store.restore() }
    }

    /// Starts a purchase keyed by `clickMs` (or by an SDK key, `max(now,
    /// last key + 1)`, when `clickMs <= 0` or is at or below a key handed
    /// out before: C7); returns the key. The purchase itself starts on the SDK thread; its
    /// result arrives as a `"7"`.
    /// `winBackOfferID`: buy with this win-back offer (one from the `"999"`'s
    /// `winBackOffers`); one unit only.
    public func buy(productID: String, clickMs: Int64, quantity: Int = 1, winBackOfferID: String? = nil) throws(IAPError) -> Int64 {
        try Coordinator.validateProductID(productID)
        guard (1...10).contains(quantity) else {
            throw IAPError(.invalidArgument, "quantity must be 1 to 10 (the App Store's limit), got \(quantity)")
        }
        if let offer = winBackOfferID {
            try Coordinator.checkStoreID(offer, "offer_id must be a win-back offer ID from the \"999\"'s winBackOffers")
            guard quantity == 1 else { throw IAPError(.invalidArgument, "a win-back offer buys one unit, got quantity \(quantity)") }
        }
        guard clickMs < Outbox.clickLimit else {
            throw IAPError(.invalidArgument, "click_ms \(clickMs) is not a time in milliseconds: a click must be below 2^61 (\(Outbox.clickLimit)); pass 0 to let the SDK pick the key")
        }
        try store.validatePurchase(productID: productID, quantity: quantity)
        return try gate.withLock { () throws(IAPError) -> Int64 in
            guard !closing else { throw IAPError(.closed, "the bridge is closed") }
            guard inFlight.count < maxPurchasesInFlight else {
                throw IAPError(.busy, "\(inFlight.count) purchases are waiting for the store's answer (at most \(maxPurchasesInFlight), the config's \"purchasesInFlight\"); nothing was stored or charged: try again once a \"7\" or \"pending\" arrives")
            }
            var k = clickMs
            if k <= lastKey {
                // No click (<= 0) or a low one (two taps in a millisecond, an
                // engine clock that restarts at launch, a clock set back):
                // past the mark and past the wall clock. The mark lives only
                // in the outbox, and a device restored from an older backup
                // brings an older one back; the keys handed out since were
                // at most the clock of their day (or a burst's last + 1), so
                // today's clock is past them, where `lastKey + 1` was one of
                // them (issue 21).
                k = max(POSIX.nowMs(), lastKey + 1)
            }
            // Every key handed out is one the mark can remember. Only an
            // outbox whose mark was edited to the highest one gets here: no
            // key is left, and none is handed out twice.
            guard k < Outbox.keyLimit else {
                throw IAPError(.invalidArgument, "no key is left on this dataDir: its outbox's key mark is \(lastKey), the highest a key may be (the outbox was edited); a key is never handed out twice, so no purchase can start")
            }
            // Posted under `gate`: a close that follows sees this purchase
            // ahead of it. Posting takes the executor's queue lock only.
            let key = k
            guard executor.post({ [self] in
                startPurchase(key: key, productID: productID, quantity: quantity, winBackOfferID: winBackOfferID)
            }) else {
                throw IAPError(.closed, "the bridge is closed")
            }
            lastKey = key
            awaiting.insert(key)
            inFlight.insert(key)
            return key
        }
    }

    /// The game granted (or handled) the result with this key and saved. The
    /// record is dropped and, once the confirm is durable, the store
    /// transaction finished (C3). Takes the key's one result, and only after
    /// the game was shown it in this session (C9).
    public func confirm(key: Int64) throws(IAPError) {
        try gate.withLock { () throws(IAPError) in
            guard !closing else { throw IAPError(.closed, "the bridge is closed") }
            switch queue.takeShown(key) {
            case .taken:
                guard executor.post({ [self] in confirmJob(key: key) }) else {
                    queue.untake(key)
                    throw IAPError(.closed, "the bridge is closed")
                }
            case .notShown:
                throw IAPError(.notDelivered, "the result with key \(key) has not been delivered to the game yet; confirm it after handling its message")
            case .unknown:
                if awaiting.contains(key) {
                    throw IAPError(.notDelivered, "the purchase with key \(key) has no result yet; confirm it after handling its \"7\" message")
                }
                throw IAPError(.unknownKey, "no unconfirmed result has key \(key) (already confirmed, or never issued)")
            }
        }
    }

    /// Runs a simulator command on the SDK thread and waits until what it
    /// made the store report has been handled.
    public func simulate(_ command: JSONValue) throws(IAPError) -> JSONValue {
        let box = Locked<Result<JSONValue, IAPError>>(.failure(IAPError(.closed, "the bridge is closed")))
        try gate.withLock { () throws(IAPError) in
            guard !closing else { throw IAPError(.closed, "the bridge is closed") }
        }
        executor.runAndWait { [self] in
            guard !closed else { return }
            let r: Result<JSONValue, IAPError>
            do throws(IAPError) { r = .success(try store.simulate(command)) } catch { r = .failure(error) }
            box.withLock { $0 = r }
        }
        executor.runWhenIdleAndWait {}
        return try box.withLock { $0 }.get()
    }

    /// Waits until everything posted before has been handled and every
    /// confirm so far is durable and its transaction finished. Returns the
    /// failure when a confirm could not be made durable, or the bridge is closed.
    @discardableResult
    public func flush() -> IAPError? {
        let closedError = IAPError(.closed, "the bridge is closed")
        if gate.withLock({ closing }) { return closedError }
        let box = Locked<IAPError?>(closedError)
        executor.runWhenIdleAndWait { [self] in
            guard !closed else { return }
            // Results waiting for the disk to recover are tried now too.
            if !retryEvents.isEmpty { retryStores() }
            let e = commitNow()
            box.withLock { $0 = e }
        }
        return box.withLock { $0 }
    }

    /// Closes the bridge: confirms become durable and their transactions
    /// finished, the store stops, the SDK thread and the callback thread end
    /// (C8: nothing of the bridge runs after this returns, unless it was
    /// called from the callback itself, which then returns into the SDK).
    /// Throws when a confirm could not be made durable (it stays on disk
    /// unconfirmed: its result is delivered again at the next open).
    @discardableResult
    public func close() -> IAPError? {
        let first: Bool = gate.withLock {
            let was = !closing
            closing = true
            return was
        }
        guard first else { return nil }
        let box = Locked<IAPError?>(nil)
        executor.runWhenIdleAndWait { [self] in
            if let e = shutDown() { box.withLock { $0 = e } }
        }
        thread?.stop()
        queue.close(fromDeliveryThread: queue.isOnDeliveryThread)
        return box.withLock { $0 }
    }

    public var isClosed: Bool { gate.withLock { closing } }

    /// Test and benchmark introspection (waits for the SDK thread).
    public var liveRecordCount: Int { onExecutor { $0.outbox.liveCount } }
    public var tombstoneCount: Int { onExecutor { $0.outbox.tombstoneCount } }
    public var keyMark: Int64 { onExecutor { $0.outbox.keyMark } }

    /// Waits until the SDK thread has handled everything posted so far and
    /// what that produced (tests: "the store's answers are in the queue").
    public func settle() { executor.runWhenIdleAndWait {} }

    private func onExecutor<T: Sendable>(_ body: @escaping @Sendable (Coordinator) -> T) -> T {
        let box = Locked<T?>(nil)
        executor.runAndWait { [self] in box.withLock { $0 = body(self) } }
        return box.withLock { $0 }!
    }

    /// `postGameJob` for a request: refused with `.busy` past RequestBudget.
    func postRequestJob(_ job: @escaping @Sendable () -> Void) throws(IAPError) {
        try gate.withLock { () throws(IAPError) in
            guard !closing else { throw IAPError(.closed, "the bridge is closed") }
            try requests.take(nowMs: Int64(POSIX.monotonicNs() / 1_000_000), queuedAnswers: queue.answersQueued)
            guard executor.post({ [self] in if !closed { job() } }) else { throw IAPError(.closed, "the bridge is closed") }
        }
    }

    func postGameJob(_ job: @escaping @Sendable () -> Void) throws(IAPError) {
        try gate.withLock { () throws(IAPError) in
            guard !closing else { throw IAPError(.closed, "the bridge is closed") }
            guard executor.post({ [self] in if !closed { job() } }) else { throw IAPError(.closed, "the bridge is closed") }
        }
    }

    private static func readLegacyKeyMark(_ dir: String) -> Int64 {
        guard let bytes = try? POSIX.readFile(dir + "/" + keyReservationFile, limit: 64),
              let n = Int64(String(decoding: bytes, as: UTF8.self)), n > 0, n < 1 << 62 else { return 0 }
        return n
    }

    // MARK: Jobs on the SDK thread

    private func startPurchase(key: Int64, productID: String, quantity: Int, winBackOfferID: String?) {
        guard !closed else { return }
        do throws(IAPError) {
            // C5, C7: the key is written before anything can answer it, and
            // is durable with (at the latest) the answer's own record.
            try outbox.addIntent(key: key, productID: productID, atMs: POSIX.nowMs())
        } catch {
            gate.withLock { _ = awaiting.remove(key); _ = inFlight.remove(key) }
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

    private func confirmJob(key: Int64) {
        guard !closed else { return }
        let ids = outbox.recordIDs(withKey: key)
        assert(ids.count == 1, "C9: key \(key) has \(ids.count) live results")
        guard let id = ids.first else { return }
        outbox.confirm([id])
        scheduleCommit()
    }

    /// How long a commit waits after the confirm that asked for it, so that
    /// the confirms of one frame (a restore can bring hundreds) share one
    /// sync. Only durability waits (and the finish after it); iap_flush
    /// commits at once.
    static let commitWindowMs: Int64 = 4

    private func scheduleCommit() {
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
    private func commitNow() -> IAPError? {
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
        let finishable = toFinish.filter { !Coordinator.isUnverifiedTag($0) }
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

    private func compact() {
        do throws(IAPError) { try outbox.compactIfWorthwhile() } catch {
            queue.push(BridgeMessage.error(op: "outbox", code: error.code,
                                      message: "compacting the outbox failed; nothing was lost, it is retried later: \(error.message)"))
        }
    }

    private func shutDown() -> IAPError? {
        guard !closed else { return nil }
        let failure = commitNow()
        if failure == nil { compact() }
        closed = true
        store.stop()
        outbox.close()
        POSIX.unlockDirectory(dirLockFD)
        return failure
    }

    /// Test hook: the process died. Nothing more is written, committed or
    /// finished; the files stay as they are and the locks are released (as
    /// the kernel does for a dead process), so the test can open again.
    /// With a `ManualExecutor`, kill it first (jobs not run die with the
    /// process); with the SDK thread, the job under way ends first.
    @_spi(Testing) public func crashForTesting() {
        gate.withLock { closing = true }
        let die: @Sendable () -> Void = { [self] in
            guard !closed else { return }
            closed = true
            store.stop()
            outbox.close()
            POSIX.unlockDirectory(dirLockFD)
        }
        if let thread {
            thread.stop()
            die()  // the thread has ended: nothing else touches the state
        } else {
            die()
        }
        queue.close(fromDeliveryThread: queue.isOnDeliveryThread)
    }

    // MARK: Store events (on the SDK thread)

    func handle(_ event: StoreEvent) {
        guard !closed else { return }
        storeFailed = false
        dispatch(event)
        if storeFailed {
            retryEvents.append(event)
            scheduleRetry()
        }
    }

    private func scheduleRetry() {
        guard retryDelayMs == 0 else { return }
        retryDelayMs = 100
        executor.schedule(afterMs: retryDelayMs) { [weak self] in self?.retryStores() }
    }

    /// Handles again the events whose result could not be stored; backs off
    /// (100 ms doubling to 5 s) while the disk keeps failing.
    private func retryStores() {
        guard !closed, !retryEvents.isEmpty else { retryDelayMs = 0; return }
        let events = retryEvents
        retryEvents = []
        retrying = true
        for e in events {
            storeFailed = false
            dispatch(e)
            if storeFailed { retryEvents.append(e) }
        }
        retrying = false
        if retryEvents.isEmpty {
            retryDelayMs = 0
        } else {
            retryDelayMs = min(retryDelayMs * 2, 5_000)
            executor.schedule(afterMs: retryDelayMs) { [weak self] in self?.retryStores() }
        }
    }

    private func dispatch(_ event: StoreEvent) {
        // The store answered a purchase of this session: it no longer counts
        // against maxPurchasesInFlight (a "pending" is an answer too).
        switch event {
        case .transaction(_, .purchase(let k)), .purchaseFailed(let k, _, _), .pending(let k, _, _):
            _ = gate.withLock { inFlight.remove(k) }
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
            let unfinished = Set(ids)
            resolveHeld(unfinished: unfinished, owned: nil)
            // Tombstones of confirmed unverified results stay while the store
            // lists them (tested by name, without a second set of tags).
            do throws(IAPError) {
                try outbox.forgetFinished { unfinished.contains(Coordinator.storeTransactionID($0)) }
            } catch {
                queue.push(BridgeMessage.error(op: "outbox", code: error.code, message: error.message))
            }
        case .finished(let ids):
            outbox.noteFinished(ids)
        case .entitlements(let list, let reason, let storeNowMs):
            if reason == "open" { resolveHeld(unfinished: nil, owned: list) }
            if reason == "open" && !config.entitlementsAtOpen { return }
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
    private func keyForGameResult(_ k: Int64, transaction txn: String?, seed: String) -> (key: Int64, clickKey: Int64?) {
        if gate.withLock({ awaiting.contains(k) }) || !clickHasResult(k, besides: txn) {
            gate.withLock { if k < Outbox.keyLimit { lastKey = max(lastKey, k) } }
            return (k, nil)
        }
        if let txn { return (lateKey(click: k, transaction: txn), k) }
        return (derivedKey("c:\(k):" + seed), k)
    }

    /// True when the click with key `k` already has a result other than
    /// transaction `txn`'s: a live record under its key (of another
    /// transaction, or any for `txn` nil), or a failure, even confirmed.
    private func clickHasResult(_ k: Int64, besides txn: String?) -> Bool {
        if outbox.clickFailed(k) { return true }
        guard let txn else { return outbox.hasLive(key: k) }
        return outbox.records(withKey: k).contains { $0.transactionID != txn }
    }

    /// The key of transaction `txn` (an outbox transaction ID) answering
    /// click `k` after that click had a result of its own: derived from both,
    /// past a live record of another transaction with the same key.
    private func lateKey(click k: Int64, transaction txn: String) -> Int64 {
        var key = Coordinator.hashKey("c:\(k):" + txn)
        while outbox.records(withKey: key).contains(where: { $0.transactionID != txn }) { key -= 1 }
        return key
    }

    /// C11: the key the store's facts give a held purchase record, as
    /// `handleTransaction` gives it to the transaction now: the click its
    /// purchase token names (C5; whatever install made the token: the key is
    /// the click's either way, and a token this device made before its
    /// install identity was set aside names another install), or
    /// the late key of that click (`keyForGameResult`), or, with no click,
    /// the store key derived from the transaction ID. The key itself is
    /// not evidence: a player can rewrite it (the record's checksum is
    /// public) and have a granted purchase granted again under another key.
    /// Nil when the facts cannot say: an "already owned" answer of
    /// something owned carries the token of the click that bought it (and
    /// granting an owned item again grants nothing new).
    private func vouchedKey(_ t: StoreTransaction, record r: OutboxRecord, stored: StoredPurchase) -> (key: Int64, clickKey: Int64?)? {
        if stored.alreadyOwned && t.kind != .consumable { return nil }
        guard !t.isRenewal, let k = t.token?.key, k > 0 else { return (storeKey(t, flavor: "t"), nil) }
        if gate.withLock({ awaiting.contains(k) }) || !clickHasResult(k, besides: r.transactionID) { return (k, nil) }
        return (lateKey(click: k, transaction: r.transactionID), k)
    }

    /// The outbox's transaction ID for an unverified result: its own
    /// namespace, so that its tombstone neither hides the same transaction
    /// once it verifies (delivered then as a success, once) nor lets it be
    /// finished (C6: an unverified transaction is left unfinished).
    static func unverifiedTag(_ id: String) -> String { "u:" + id }
    static func isUnverifiedTag(_ id: String) -> Bool { id.hasPrefix("u:") }
    /// The store's transaction ID of an outbox record.
    static func storeTransactionID(_ recordTxn: String) -> String {
        isUnverifiedTag(recordTxn) ? String(recordTxn.dropFirst(2)) : recordTxn
    }

    /// A store-initiated transaction's key: derived from its ID, so the same
    /// transaction always gets the same key (negative: never a game's).
    private func storeKey(_ t: StoreTransaction, flavor: String) -> Int64 {
        var k = Coordinator.hashKey(flavor + ":" + t.id)
        // Probe past a live record of another transaction with the same key.
        while outbox.records(withKey: k).contains(where: { $0.transactionID != t.id }) { k -= 1 }
        return k
    }

    /// A negative key derived from `seed`, past any live record's.
    private func derivedKey(_ seed: String) -> Int64 {
        var k = Coordinator.hashKey(seed)
        while outbox.hasLive(key: k) { k -= 1 }
        return k
    }

    private static func hashKey(_ seed: String) -> Int64 {
        var h: UInt64 = 0xcbf29ce484222325
        for b in seed.utf8 { h = (h ^ UInt64(b)) &* 0x100000001b3 }
        return -Int64(h & 0x3FFF_FFFF_FFFF_FFFF) - 1
    }

    /// C11: delivers the held records the store vouches for: a transaction
    /// it lists as unfinished (`.unfinished`), or, for something owned (an
    /// "already owned" answer, a non-consumable, a subscription), one among
    /// the player's entitlements at open. One per
    /// transaction for consumables (a record copied under another key is not
    /// a second purchase); rebuilt from the store's facts. The others are
    /// dropped, and the game is told.
    private func resolveHeld(unfinished: Set<String>?, owned: [StoreTransaction]?) {
        // Each record's fields are read once and travel with it.
        var toCheck: [(record: OutboxRecord, stored: StoredPurchase)] = []
        toCheck.reserveCapacity(heldAtOpen?.count ?? 0)
        if let unfinished, let held = heldAtOpen {
            heldAtOpen = nil
            for r in held {
                guard let stored = StoredPurchase(r) else { continue }  // never held (start)
                if unfinished.contains(Coordinator.storeTransactionID(r.transactionID)) { toCheck.append((r, stored)); continue }
                // Something owned (a non-consumable, a subscription) can be
                // finished while a record of it is live: two clicks on it,
                // the second's confirm finishing the shared transaction.
                // The player's entitlements decide for those.
                if stored.alreadyOwned || stored.kind != .consumable {
                    heldOwned.append((r, stored))  // its entitlements decide
                } else {
                    reject(r, stored: stored, "the store does not list transaction \(r.transactionID) as unfinished (finished already, or never made): an old, copied or edited outbox record")
                }
            }
        }
        // The owned transaction that vouches for a record: its facts, like a
        // re-delivered transaction's, decide what the game is shown (a record
        // naming another product than the transaction it borrows is dropped).
        var ownedFacts: [String: StoreTransaction] = [:]
        if let owned, !heldOwned.isEmpty {
            var byID: [String: StoreTransaction] = [:]
            var byOriginal: [String: StoreTransaction] = [:]
            for t in owned { byID[t.id] = t; byOriginal[t.originalID] = t }
            for (r, stored) in heldOwned {
                let original = stored.originalID
                if let t = byID[r.transactionID] ?? byOriginal[r.transactionID] ?? byID[original] ?? byOriginal[original] {
                    ownedFacts[r.transactionID] = t
                    toCheck.append((r, stored))
                } else {
                    reject(r, stored: stored, "the player does not own what the record says (transaction \(r.transactionID))")
                }
            }
            heldOwned = []
        }
        var rekeyed: [StoreTransaction] = []
        for (r, stored) in toCheck {
            let storedProduct = stored.productID
            let reported = reportedAtStart[Coordinator.storeTransactionID(r.transactionID)]
            let facts = reported ?? ownedFacts[r.transactionID]
            // The key, like the rest, comes from the store's facts where they
            // say it (the transaction itself, re-delivered at start).
            let vouched = r.kind == .purchase ? reported.flatMap { vouchedKey($0, record: r, stored: stored) } : nil
            if r.kind == .unverified, facts?.verified == true {
                // It verifies now: its success was stored on its own (once);
                // this result 6 has nothing left to say.
                outbox.reject(r.id)
                scheduleCommit()
            } else if let t = facts, t.productID != storedProduct {
                reject(r, stored: stored, "the record names \(storedProduct), the store's transaction \(t.productID)")
            } else if deliveredAtStart.contains(r.transactionID)
                        && (facts?.kind ?? stored.kind) == .consumable {
                reject(r, stored: stored, "a second record of transaction \(r.transactionID): one purchase, one result")
            } else if let t = reported, let v = vouched, v.key != r.key {
                // A rewritten key would have the game grant a purchase it
                // granted already (issue 21): dropped, and the transaction
                // is delivered again under the key its token names (the
                // game ignores a key it granted).
                let from = v.clickKey.map { "derived from click \($0), which its purchase token names and which had a result before" }
                    ?? (v.key > 0 ? "the click its purchase token names" : "derived from its transaction ID: no click of the game")
                reject(r, stored: stored, "the record's key \(r.key) is not the key of the store's transaction \(t.id), \(v.key) (\(from)): an edited outbox record; the transaction is delivered under key \(v.key)")
                rekeyed.append(t)
            } else {
                deliveredAtStart.insert(r.transactionID)
                queue.push(rebuilt(r, stored: stored, facts: facts, clickKey: vouched.map(\.clickKey) ?? stored.clickKey),
                           resultKey: r.key)
            }
        }
        // The transactions of records dropped for their key, once no other
        // record of theirs is delivered: handled as the store delivers them,
        // after this job (a failed write is then retried like any result).
        for t in rekeyed where !deliveredAtStart.contains(t.id) {
            deliveredAtStart.insert(t.id)
            executor.post { [weak self] in self?.handle(.transaction(t, .update)) }
        }
        if heldAtOpen == nil && heldOwned.isEmpty { reportedAtStart = [:]; deliveredAtStart = []; heldTransactions = [] }
    }

    private func reject(_ r: OutboxRecord, stored: StoredPurchase, _ reason: String) {
        reject(r, productID: stored.productID, reason)
    }

    private func reject(_ r: OutboxRecord, productID: String, _ reason: String) {
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
    private func rebuilt(_ r: OutboxRecord, stored: StoredPurchase, facts: StoreTransaction?, clickKey: Int64?) -> BridgeMessage {
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

    private func handleTransaction(_ t: StoreTransaction, _ arrival: Arrival) {
        // Kept only for the transactions of held records: the facts their
        // messages are rebuilt from.
        if heldAtOpen != nil || !heldOwned.isEmpty, case .update = arrival, heldTransactions.contains(t.id) { reportedAtStart[t.id] = t }
        // Whose click this answers: the purchase call's key, or the token's
        // (C5; a renewal carries its first purchase's token but is the store's).
        var click: Int64? = nil
        if case .purchase(let k) = arrival { click = k } else if !t.isRenewal, let k = t.token?.key, k > 0 { click = k }
        // A click another install or device made (StoreKit shows the token
        // to every device of the Apple ID; a reinstall is a new install) is
        // not this install's: origin "store". It keeps the click's key, so a
        // game whose save outlived the install (a cloud save) recognises a
        // key it granted already and a re-delivery is not granted twice (C4).
        let ours: Bool = {
            if case .purchase = arrival { return true }
            return t.token?.key(forInstall: install) != nil
        }()
        let answersClick: Bool = { if case .purchase(let k) = arrival { return gate.withLock { awaiting.contains(k) } } else { return false } }()
        let owned = t.kind != .consumable
        let recordTxn = t.verified ? t.id : Coordinator.unverifiedTag(t.id)
        let live = outbox.liveRecords(transaction: recordTxn, flavor: .transaction)
        if !live.isEmpty || outbox.hasTombstone(transaction: recordTxn, flavor: .transaction) {
            // Seen before (C4): only a new click on something owned gets its
            // own answer (the existing transaction, no new charge).
            guard answersClick, owned, let k = click, !live.contains(where: { $0.key == k }) else {
                // Confirmed before: make sure the store forgets it, but never
                // before the confirm is durable (C3): a pending commit
                // finishes it then.
                if t.verified && live.isEmpty && !outbox.isFinishPending(transaction: t.id) { store.finish(transactionID: t.id) }
                return
            }
        }
        let key: Int64
        var clickKey: Int64? = nil
        let origin: String
        if let k = click {
            (key, clickKey) = keyForGameResult(k, transaction: recordTxn, seed: recordTxn)
            origin = ours ? "game" : "store"
        } else {
            key = storeKey(t, flavor: "t")
            origin = "store"
        }
        let alreadyOwned = owned && (t.alreadyOwned || (answersClick && t.token?.key != click))
        storeAndEmit(key: key, kind: t.verified ? .purchase : .unverified, txn: recordTxn,
                     facts: .purchase(t, origin: origin, alreadyOwned: alreadyOwned, clickKey: clickKey))
    }

    private func handleRevocation(_ t: StoreTransaction) {
        // A revocation whose signature does not verify could be forged to
        // take a paid item away: it takes nothing (and, like every
        // unverified transaction, is never finished: C6).
        guard t.verified else { return }
        guard outbox.liveRecords(transaction: t.id, flavor: .revocation).isEmpty else { return }
        if outbox.hasTombstone(transaction: t.id, flavor: .revocation) {
            if !outbox.isFinishPending(transaction: t.id) { store.finish(transactionID: t.id) }
            return
        }
        let key = storeKey(t, flavor: "r")
        let origin = t.token?.key(forInstall: install) != nil ? "game" : "store"
        storeAndEmit(key: key, kind: .revocation, txn: t.id, facts: .revocation(t, origin: origin))
    }

    private func handleFailure(key k: Int64, productID: String, failure: PurchaseFailure, detail: String?) {
        if failure == .interrupted {
            // Not final (C9): the payment may still complete; the game is told
            // it waits, and the key keeps awaiting its one result.
            queue.push(BridgeMessage.pending(key: k, productID: productID, reason: "interrupted"))
            return
        }
        let (key, _) = keyForGameResult(k, transaction: nil, seed: "\(productID):\(POSIX.nowMs())")
        let text = detail.map { "\(Coordinator.failureText(failure)) (\($0))" } ?? Coordinator.failureText(failure)
        // The click is remembered as failed with its record (C9): a charge
        // the store makes for it after all, even once this failure is
        // confirmed, gets a key of its own.
        storeAndEmit(key: key, kind: .failure, txn: "", facts: .failure(productID: productID, failure: failure, detail: text),
                     failedClick: k)
    }

    static func failureText(_ f: PurchaseFailure) -> String {
        switch f {
        case .cancelled: return "the player cancelled the purchase"
        case .declined: return "a parent declined the purchase (Ask to Buy)"
        case .networkError: return "the store could not be reached; if the player was charged anyway, the purchase arrives later as a new \"7\" with a fresh key of its own and this key in its \"clickKey\": grant it then"
        case .notAllowed: return "purchases are not allowed on this device or account"
        case .productUnavailable: return "the product is not available in this storefront"
        case .interrupted: return "the payment was interrupted; if the player completes it, its result follows"
        case .unknown: return "the store reported an error; if the player was charged anyway, the purchase arrives later as a new \"7\" with a fresh key of its own and this key in its \"clickKey\": grant it then"
        }
    }

    /// Writes the record durably, then makes its message visible (C2), then
    /// the key stops awaiting. On a write failure nothing is shown; the
    /// store still lists the transaction as unfinished, so it comes back.
    /// The message is rendered from the facts when it is queued.
    private func storeAndEmit(key: Int64, kind: RecordKind, txn: String, facts: ResultFacts, failedClick: Int64? = nil) {
        assert(!outbox.hasLive(key: key), "C9: a second result under key \(key)")
        do throws(IAPError) {
            let r = try outbox.put(key: key, kind: kind, transactionID: txn, facts: facts, failedClick: failedClick)
            assert(outbox.isDurable(r.id), "C2")
            if let message = facts.message(key: key) { queue.push(message, resultKey: key) }
            _ = gate.withLock { awaiting.remove(key) }
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
