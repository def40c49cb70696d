import CIAPSupport

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

    let gate = Lock()
    /// The bridge's one lifecycle state, shared with `queue` (Lifecycle.swift
    /// says who moves it). Game-facing calls refuse once it is not open: it
    /// leaves open under `gate`, so a job posted under `gate` is ahead of the
    /// close. Jobs do nothing once it is closed (set by `shutDown`, on the
    /// executor).
    var lifecycle: BridgeLifecycle { queue.lifecycle }
    var closing: Bool { !lifecycle.isOpen }
    var closed: Bool { lifecycle.isClosed }
    /// The keys of the game's purchases: taken here, learnt by the SDK thread.
    let keys: KeyAllocator
    /// Requests the game made (products, restore, status, app transaction):
    /// bounded by rate and by unpolled answers (RequestBudget).
    var requests = RequestBudget()

    // MARK: Executor-owned state (touched only by jobs on `executor`)

    let outbox: Outbox
    var commitScheduled = false
    /// dataDir was anchored in this open (`POSIX.anchorDirectory`): checked
    /// before the first purchase, whose token carries the install identity
    /// read from dataDir. SDK thread only.
    var dataDirAnchored = false
    private let dirLockFD: Int32
    /// Store events whose result could not be stored (a failed write or
    /// sync): handled again, on a fresh file, once the disk recovers (C12),
    /// with a back-off; `storeFailed` says the event under way failed.
    var retryEvents: [StoreEvent] = []
    var retryDelayMs: Int64 = 0
    var storeFailed = false
    var retrying = false
    /// C11: purchase records found at open, held until the store says which
    /// transactions it still lists as unfinished (`.unfinished`) or, for
    /// something owned, until its entitlements at open; only those are
    /// delivered, rebuilt from the store's own facts where it reported the
    /// transaction at start. Nil once resolved.
    var held: HeldRecords? = nil
    /// Charges for a click whose failure is live (shown, not confirmed): a
    /// store that charged after it reported an error. Each waits, unfinished
    /// at the store, until the game confirms that failure, then comes under
    /// the click's key (`keyForCharge`); a close forgets them (the store
    /// delivers them again). By click key.
    var chargesAwaitingFailureConfirm: [Int64: StoreTransaction] = [:]
    /// What the open's resolution is done with (the held records, the
    /// store's re-delivered transactions and unfinished list), released
    /// once the game has taken every message the open queued instead of
    /// before `open` returned (`releaseAfterOpen`). SDK thread only.
    var releasedAfterOpen: [Any] = []
    /// True while `iap_open` waits with a helper (`start`): leftovers are
    /// kept only then.
    var keepsLeftovers = false

    /// The file of version 1.0 that held its SDK key reservation; read as a floor.
    public static let keyReservationFile = "sdk-keys"

    /// Opens the outbox in `config.dataDir`, queues every unconfirmed result
    /// again, then starts the store (which re-delivers unfinished
    /// transactions and reports entitlements) and waits until the SDK thread
    /// has handled what the store reported at once. `executor`: tests pass a
    /// `ManualExecutor`; otherwise the bridge starts its own `SDKThread`.
    /// `rendersJSON`: false for the Swift API, which reads the queue's
    /// values (`MessageQueue.popMessage`) and needs no JSON. `storage`: where
    /// the outbox's log lives; tests pass a simulated disk. The caller
    /// stops `store` if this throws.
    public static func open(config: BridgeConfig, store: Store, counter: UnsafeMutablePointer<Int64>? = nil,
                            executor: Executor? = nil, rendersJSON: Bool = true,
                            storage: any LogStorage = POSIXStorage()) throws(IAPError) -> Coordinator {
        try open(config: config, opening: .made(store), counter: counter, executor: executor,
                 rendersJSON: rendersJSON, storage: storage)
    }

    /// The same, finishing the store's opening (`StoreFactory.begin`) on the
    /// SDK thread while this thread reads dataDir: the open's two long reads
    /// overlap. If this throws, the store was stopped, or its opening
    /// abandoned. When both fail, the store's error is the one thrown, as
    /// when the store was opened first; and damage in dataDir (a damaged
    /// outbox or install identity) is set aside only once the store is open,
    /// so that an open the store fails leaves it for the next open to report.
    /// Such an open may still have done what any open does to a sound
    /// dataDir: created it, its lock, an identity and an empty outbox where
    /// there were none, cut a torn last append, rewritten a version 1 outbox
    /// as version 2; none of that loses or changes a stored result.
    public static func open(config: BridgeConfig, opening: StoreOpening, counter: UnsafeMutablePointer<Int64>? = nil,
                            executor: Executor? = nil, rendersJSON: Bool = true,
                            storage: any LogStorage = POSIXStorage()) throws(IAPError) -> Coordinator {
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
            opening.abandon()
            throw error
        }
        let made = StoreAtOpen()
        if let thread, !Coordinator.inForkedChild {
            // The SDK thread's first job: the store's opening finished (the
            // simulator reads its log), then what its start reports made
            // ready (the simulator replays its state), while this thread
            // reads dataDir.
            let posted = thread.post { made.finish(opening, prepare: true) }
            precondition(posted, "a thread just started takes jobs")
        } else {
            // Without an SDK thread (tests), or in a forked child: first
            // the store, on this thread, then dataDir.
            made.finish(opening, prepare: thread != nil)
            if case .failure(let error) = made.wait() {
                thread?.stop()
                queue.close(fromDeliveryThread: false)
                throw error
            }
        }
        let data: DataDirAtOpen
        do throws(IAPError) {
            data = try DataDirAtOpen.read(config, storage: storage) { () throws(IAPError) in try made.throwIfFailed() }
            do throws(IAPError) {
                try data.anchorIfShowing(config)
            } catch {
                data.close()
                throw error
            }
        } catch {
            made.abandon()
            thread?.stop()  // after the store's job
            let storeError = made.cleanUp(opening)
            queue.close(fromDeliveryThread: false)
            throw storeError ?? error
        }
        let store: Store
        switch made.wait() {
        case .success(let s):
            store = s
        case .failure(let error):
            data.close()
            thread?.stop()
            queue.close(fromDeliveryThread: false)
            throw error
        }
        let c = Coordinator(config: config, store: store, outbox: data.outbox, report: data.report, dirLockFD: data.lockFD,
                            queue: queue, executor: executor ?? thread!, thread: thread, install: data.install.id,
                            installProblem: data.install.problem)
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
        // A real store shows one payment sheet at a time; nothing a player
        // does needs more than a few purchases waiting for an answer. Past
        // `config.purchasesInFlight` (default 32), `iap_buy` answers
        // IAP_E_BUSY at once, with nothing stored or charged.
        self.keys = KeyAllocator(mark: max(outbox.keyMark, Coordinator.readLegacyKeyMark(config.dataDir)),
                                 awaiting: IntSet(outbox.openIntents.map(\.key)), maxInFlight: config.purchasesInFlight)
    }

    private func start() {
        // Queued before open returns: no I/O, the records were read by open.
        if openReport.isDamaged { queue.push(BridgeMessage.outboxDamaged(openReport)) }
        if let installProblem { queue.push(BridgeMessage.error(op: "install", code: .io, message: installProblem)) }
        // The held records go straight into `held`, with no reference left
        // on this thread: the SDK thread drops them once resolved, and frees
        // them there (freed here, after the wait, they held up the game's
        // first poll by about 1,000 instructions a record).
        queue.reserveResults(outbox.liveCount)
        let edited: [OutboxRecord]
        (held, edited) = holdStoredResults()
        let exec = executor
        // Events are handled on the SDK thread, whichever thread reports
        // them, a batch a job (StoreEventInbox).
        let sink = StoreEventInbox().sink(to: exec, retire: { [weak self] batch in self?.releaseAfterOpen(batch) }) { [weak self] event in
            self?.handle(event)
        }
        // With its own SDK thread, this thread renders the messages the
        // resolution queues while it waits (RenderAhead.swift).
        let helper = thread != nil && queue.rendersJSON && !Coordinator.inForkedChild ? RenderAhead() : nil
        if let helper {
            queue.beginRenderingAhead(helper)
            // Set before the store is attached and the open's first job is
            // posted (which this write happens before); cleared by the SDK
            // thread when the open's work is done. Without a helper nothing
            // is kept: no job of its own for a model checker to interleave.
            keepsLeftovers = true
        }
        store.attach(scheduler: StoreScheduler(executor: exec))
        // One round trip to the SDK thread: the store's start, then what it
        // reported at once (the inbox's job), then the wait's own job.
        exec.post { [self] in
            for r in edited {
                let what = r.kind == .failure ? "failure" : r.kind == .revocation ? "revocation" : "purchase"
                reject(r, productID: r.facts.productID, "record \(r.id) under key \(r.key) is not a \(what) the SDK wrote: an edited outbox record")
            }
            store.start(sink: sink)
        }
        guard let helper else {
            exec.runWhenIdleAndWait {}
            return
        }
        let queue = queue
        let stopHelping: @Sendable () -> Void = { [weak self] in
            // The SDK thread's own work is done: it renders what is left
            // beside the opening thread, a batch each in turn (at 100,000
            // results the opening thread alone was still rendering a
            // third of them when the SDK thread had queued the last).
            let rendered = RenderAhead.renderAll(queue)
            queue.endRenderingAhead()
            helper.finish(rendered: rendered)
            // What the open kept goes once the game has taken it all; what
            // comes later is not kept.
            self?.keepsLeftovers = false
            queue.whenDrained { [weak self] in exec.post { [weak self] in self?.dropLeftovers() } }
        }
        // The thread cannot have stopped in an open; if it had, there would
        // be nothing to wait for.
        if !exec.whenIdle(stopHelping) { stopHelping() }
        renderedAheadAtOpen = helper.help(queue)
    }

    /// Keeps `leftovers` of the open until the game has taken everything
    /// the open queued: at 100,000 results, freeing them (a record, its held
    /// entry, the store's transaction and its ID each) took the SDK thread
    /// 40 to 60 ms while the game waited in `iap_open`, and, moved to just
    /// after it returned, slowed the game's polls by half (the two threads
    /// meet in the allocator). Afterwards, dropped at once. A game that
    /// never empties its queue keeps them until `iap_close`: memory the
    /// open needed anyway.
    func releaseAfterOpen(_ leftovers: Any) {
        assertOwner()
        if keepsLeftovers { releasedAfterOpen.append(leftovers) }
    }

    private func dropLeftovers() {
        assertOwner()
        releasedAfterOpen = []
    }

    /// A process forked (without exec) after the library was loaded, on
    /// Linux (a test kit running each game in a child): there the thread
    /// that forked keeps the thread ID the Swift runtime cached in the
    /// parent, and a runtime lock it contends for with another thread (a
    /// first use of a global, a type's metadata) can deadlock. An open
    /// there runs its two reads one after the other, and renders on the SDK
    /// thread, as before the open used both cores: its two threads do not
    /// meet at anything new. (Also when a test asked for it on this
    /// thread: `openingSerially`.)
    @_spi(Testing) public static var inForkedChild: Bool { iapc_serial_open() != 0 }

    /// Tests: opens `body` makes on this thread take the forked child's
    /// path (`inForkedChild`), without forking.
    @_spi(Testing) public static func openingSerially<T>(_ body: () throws -> T) rethrows -> T {
        let was = iapc_set_serial_open(1)
        defer { iapc_set_serial_open(was) }
        return try body()
    }

    /// How many messages were rendered ahead while `open` waited, by this
    /// thread and by the SDK thread once done (RenderAhead.swift): tests
    /// check that the path ran.
    @_spi(Testing) public private(set) var renderedAheadAtOpen = 0

    /// Failures and revocations grant nothing: queued at once. Purchases
    /// wait for the store to vouch for them (C11): the file is on the
    /// player's device and may have been edited, replayed or restored.
    /// Returns the held purchases and the records that are not what the SDK
    /// wrote.
    private func holdStoredResults() -> (HeldRecords, [OutboxRecord]) {
        let held = HeldRecords(capacity: outbox.liveCount, confirmCalls: outbox.confirmCalls)
        var edited: [OutboxRecord] = []
        // Keys given a failure or revocation here: a second record under
        // one (only an edited outbox) would be the key's second result (C9).
        var queuedKeys = IntSet<Int64>()
        outbox.forEachLiveRecord { r in
            switch r.kind {
            case .failure, .revocation:
                if let shown = Coordinator.storedFailureOrRevocation(r), queuedKeys.insert(r.key).inserted {
                    queue.push(shown, resultKey: r.key)
                } else {
                    edited.append(r)
                }
            case .purchase, .unverified:
                if let stored = StoredPurchase(r) { held.hold(r, stored) } else { edited.append(r) }
            }
        }
        return (held, edited)
    }

    // MARK: Game-facing operations (no I/O, C10)

    /// Waits until everything posted before has been handled and every
    /// confirm so far is durable and its transaction finished. Returns the
    /// failure when a confirm could not be made durable, or the bridge is closed.
    @discardableResult
    public func flush() -> IAPError? {
        let closedError = IAPError(.closed, "the bridge is closed")
        if closing { return closedError }
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
        let first: Bool = gate.withLock { lifecycle.advance(to: .closing) }
        guard first else { return nil }
        let box = Locked<IAPError?>(nil)
        executor.runWhenIdleAndWait { [self] in
            if let e = shutDown() { box.withLock { $0 = e } }
        }
        thread?.stop()
        queue.close(fromDeliveryThread: queue.isOnDeliveryThread)
        return box.withLock { $0 }
    }

    public var isClosed: Bool { closing }

    /// True on this bridge's SDK thread or callback thread (a callback, or a
    /// job): what a close waits for, so such a caller must not wait for it.
    public var isCallerOnBridgeThread: Bool { queue.isOnDeliveryThread || executor.isCurrent }

    /// The delivery state (the outbox, what was stored, what awaits a
    /// commit, the held records of C11) has one owner, the SDK thread: every
    /// job that reads or changes it starts with this (debug builds; the
    /// game's thread reaches it only by posting a job, C10).
    @inline(__always)
    func assertOwner(_ function: StaticString = #function) {
        assert(executor.isCurrent, "C10: \(function) touched the delivery state off the SDK thread")
    }

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

    private static func readLegacyKeyMark(_ dir: String) -> Int64 {
        guard let bytes = try? POSIX.readFile(dir + "/" + keyReservationFile, limit: 64),
              let n = Int64(String(decoding: bytes, as: UTF8.self)), n > 0, n < 1 << 62 else { return 0 }
        return n
    }

    private func shutDown() -> IAPError? {
        assertOwner()
        guard !closed else { return nil }
        assert(lifecycle.current == .closing, "close leaves open before its job runs")
        // Before the last commit (a sync: 20 ms on a phone): a purchase the
        // store answers from now on waits for the next bridge of the
        // process instead of reaching this closed one.
        store.stopReporting()
        let failure = commitNow()
        if failure == nil { compact() }
        lifecycle.advance(to: .closed)
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
        gate.withLock { _ = lifecycle.advance(to: .closing) }
        let die: @Sendable () -> Void = { [self] in
            guard lifecycle.advance(to: .closed) else { return }
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

}
