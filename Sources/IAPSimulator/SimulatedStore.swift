import IAPCore

/// A simulated App Store, for every platform: reads an Xcode `.storekit`
/// catalog, charges, keeps every transaction durably in its own state
/// directory, and behaves as StoreKit 2 does where the SDK can tell: unfinished
/// transactions re-delivered at start, owned non-consumables not charged
/// twice, renewals as new transactions with the same original ID, Ask to Buy,
/// interrupted payments, refunds, store-initiated and forged transactions.
///
/// Lock rule: `lock` is never held while calling the sink.
public final class SimulatedStore: Store, @unchecked Sendable {
    public let name = "simulator"
    public let catalog: Catalog
    /// The catalog's subscription group IDs, sorted: read at every purchase
    /// (the statuses that changed) and every clock tick, so made once, not
    /// per call (a set and a sort of the whole catalog each time were 13% of
    /// the SDK threads' instructions per purchase, scripts/bench-callgrind.sh).
    /// The catalog's subscription groups, and the groups of subscriptions
    /// the player bought whose product the catalog no longer has.
    var subscriptionGroups: [String]
    /// Every subscription product's group the store has seen in a catalog
    /// (written to its log): a subscription whose product a later catalog
    /// dropped is still the player's, in its group, until its period ends
    /// (it was dropped from the entitlements at once, and its unconfirmed
    /// "7" reported "unvouched": found by an attack on updates).
    var knownGroups: [String: String] = [:]
    /// The player's App Store country (ISO 3166 alpha-3): the catalog's
    /// `_storefront` until the `storefront` op changes it.
    var storefront: String
    /// Parental controls: false makes every purchase fail (result "4").
    var paymentsAllowed = true
    var currency: String { Price.currency(storefront: storefront) }
    let options: SimulatorOptions
    let config: BridgeConfig

    let lock = Lock()
    var log: SimStateLog
    var txns: [Int64: SimTransaction] = [:]
    /// IDs of non-consumable and subscription transactions (entitlement candidates).
    var ownable: [Int64] = []
    var pending: [String: SimPending] = [:]
    var pendingOrder: [String] = []
    var nextTxnID: Int64 = 2_000_000_000_000_001
    var nextPendingNumber = 1
    var clockOffsetMs: Int64 = 0
    /// Subscription group -> auto-renew switched off.
    var autoRenewOff: Set<String> = []
    /// Subscription group -> product it changes to at the next renewal (downgrade).
    var nextRenewalProduct: [String: String] = [:]
    /// Groups whose renewals fail to charge (billing_issue) until the card
    /// is fixed (billing_resolve) or a purchase in the group succeeds.
    var billingIssue: Set<String> = []
    /// Products with a price increase: the new price and whether the player
    /// consented (price_increase; consent comes with the StoreKit message).
    var priceIncrease: [String: (price: String, agreed: Bool)] = [:]
    /// Products whose agreed increase took effect: the price renewals charge.
    var repriced: [String: String] = [:]
    /// Subscriptions (their group's latest transaction) that ended for good:
    /// billing retry ran out, or a price increase was not agreed. Never renewed.
    var lapsed: [Int64: String] = [:]
    /// The app transaction: version and date the player first got the game.
    var originalApp: (version: String, dateMs: Int64)? = nil
    /// The simulated App Store account's appTransactionID for this game:
    /// made once with the store's state (which plays the account, so it
    /// survives reinstalls of the game), kept in its log.
    var appTransactionID: String? = nil
    /// `app_transaction`'s preorderDate (ms), if the player pre-ordered.
    var preorderDateMs: Int64? = nil
    /// How the next sheet of each kind answers (sheet_next), this session.
    var sheetScript: [String: (outcome: String, productID: String?)] = [:]
    /// A sheet the player keeps up (sheet_next "hold") until sheet_close.
    var heldSheet: StoreSheet? = nil
    /// StoreKit messages not shown yet: id -> (reason, the group or product it is about).
    var heldMessages: [String: (reason: String, subject: String)] = [:]
    var nextMessageNumber = 1
    /// The status of each group as last reported (changes are announced).
    var lastStatuses: [String: SubscriptionGroupStatus] = [:]
    var askToBuy: Bool
    var failNext: PurchaseFailure? = nil
    /// `fail_next` with `"chargeLater"`: the failing purchase is charged
    /// all the same, when `resolve` says (kept as pending, "chargeLater").
    var chargeLaterNext = false
    var cancelNext = false
    var interruptNext = false
    var sink: (@Sendable (StoreEvent) -> Void)? = nil
    /// What `start` will report, made ahead by `prepareStart`.
    var prepared: [StoreEvent]? = nil
    var stopped = false
    var lastEntitlementIDs: [Int64] = []
    /// The bridge's executor: the purchase delay and the renewal timer run on it.
    var scheduler: StoreScheduler? = nil
    /// Purchases waiting out `purchaseDelayMs`, by key.
    var delayed: [Int64: (productID: String, token: PurchaseToken, quantity: Int, winBack: String?)] = [:]
    /// Purchases whose payment sheet was still up when the bridge closed:
    /// they complete at the next start, answering the purchase call (as a
    /// StoreKit purchase interrupted by a quit completes after relaunch).
    var landing: [(key: Int64, productID: String, token: PurchaseToken, quantity: Int, winBack: String?)] = []
    private let lockFD: Int32
    let timeFactor: Int64
    /// The device's clock when the store opened, and the monotonic clock's
    /// reading then: the store's clock runs on the second, so a clock the
    /// player or NTP moves later moves nothing (Apple's clock is not the
    /// device's).
    let openRealMs: Int64
    let openMonotonicNs: UInt64
    /// The latest instant the store has given or recorded (a charge's date,
    /// a refund's): its clock never goes back below it, whatever the
    /// device's clock says at the next open.
    var clockFloorMs: Int64 = 0
    /// What the open added to `clockOffsetMs` to start from the floor: not
    /// written back (the next open lifts again as its own device clock
    /// needs), so a device clock that was behind leaves no lasting lead.
    var clockLiftMs: Int64 = 0

    /// `storage`: where the store's log lives; tests pass a simulated disk.
    public static func open(config: BridgeConfig, storage: any LogStorage = POSIXStorage()) throws(IAPError) -> SimulatedStore {
        let (options, catalog, fd) = try checkAndLock(config)
        return try finish(config: config, options: options, catalog: catalog, lockFD: fd, storage: storage)
    }

    /// The opening's first half (StoreOpening): the options, the catalog
    /// and the state directory's lock, where a refused config is refused
    /// before anything is created and two bridges racing for one dataDir
    /// meet. `finish` reads the state, the open's long part.
    public static func begin(config: BridgeConfig, storage: any LogStorage = POSIXStorage()) throws(IAPError) -> StoreOpening {
        let (options, catalog, fd) = try checkAndLock(config)
        return StoreOpening(finish: { () throws(IAPError) -> Store in
            try finish(config: config, options: options, catalog: catalog, lockFD: fd, storage: storage)
        }, abandon: { POSIX.unlockDirectory(fd) })
    }

    private static func checkAndLock(_ config: BridgeConfig) throws(IAPError) -> (SimulatorOptions, Catalog, Int32) {
        let options = try SimulatorOptions.parse(config.simulator, dataDir: config.dataDir)
        let catalog = try Catalog.load(path: config.catalog ?? "")
        // dataDir is read later, beside the store's state: checked now, so a
        // dataDir the open refuses leaves no store directory (with the
        // failed call's app version in it) behind.
        // (A dataDir inside the stateDir waits for the stateDir to be made.)
        let data = POSIX.lexicallyNormal(config.dataDir)
        if POSIX.parent(of: data) != POSIX.lexicallyNormal(options.stateDir) {
            try POSIX.checkDirectory(config.dataDir, role: "dataDir")
        }
        return (options, catalog, try prepareStateDirectory(options, dataDir: config.dataDir))
    }

    /// Reads the store's log and replays it; on failure the state
    /// directory's lock is released.
    private static func finish(config: BridgeConfig, options: SimulatorOptions, catalog: Catalog, lockFD fd: Int32,
                               storage: any LogStorage) throws(IAPError) -> SimulatedStore {
        do throws(IAPError) {
            let (log, events) = try SimStateLog.open(directory: options.stateDir, durable: options.durable, storage: storage)
            let s = SimulatedStore(config: config, options: options, catalog: catalog, log: log, lockFD: fd)
            // Sized once: most events of a long log are charges.
            s.txns.reserveCapacity(events.count)
            for e in events {
                switch e {
                case .charge(let t):
                    s.insert(t)
                    s.clockFloorMs = max(s.clockFloorMs, t.purchaseMs)
                case .fields(let f): s.replay(f)
                }
            }
            s.startFromFloor()
            var opening = s.learnGroups()
            s.lastEntitlementIDs = s.entitlementIDsLocked()
            if s.originalApp == nil {
                let now = s.nowLocked()
                let id = String(UInt64.random(in: 1_000_000_000_000...9_999_999_999_999))
                opening.append(event("app") { $0.string("version", options.appVersion); $0.int("at", now); $0.string("id", id) })
                s.originalApp = (options.appVersion, now)
                s.appTransactionID = id
            }
            // The first open's identity and a catalog's new subscription
            // products, in one write (none at a later open of the same catalog).
            try s.persist(opening)
            return s
        } catch {
            POSIX.unlockDirectory(fd)
            throw error
        }
    }

    private init(config: BridgeConfig, options: SimulatorOptions, catalog: Catalog, log: SimStateLog, lockFD: Int32) {
        self.config = config
        self.options = options
        self.catalog = catalog
        self.subscriptionGroups = Set(catalog.products.compactMap {
            $0.kind == .autoRenewableSubscription ? $0.subscriptionGroupID : nil
        }).sorted()
        self.log = log
        self.lockFD = lockFD
        self.storefront = catalog.settings.storefront
        self.askToBuy = catalog.settings.askToBuy
        // Xcode's `_timeRate`: 0 real time; 1 one second is one day; 2 one
        // second is one hour; larger values are taken as the factor itself.
        switch catalog.settings.timeRate {
        case ...0: timeFactor = 1
        case 1: timeFactor = 86_400
        case 2: timeFactor = 3_600
        default: timeFactor = Int64(catalog.settings.timeRate)
        }
        openRealMs = POSIX.nowMs()
        openMonotonicNs = POSIX.monotonicNs()
    }

    // MARK: State replay and persistence

    private func replay(_ e: JSONFields) {
        guard let kind = e["e"]?.stringValue else { return }
        switch kind {
        case "txn":  // a charge written before the binary form
            guard let t = SimTransaction.decode(e) else { return }
            insert(t)
        case "fin":
            if let id = e["id"]?.int64Value { txns[id]?.finished = true }
        case "fins":
            for v in e["ids"]?.value?.arrayValue ?? [] { if let id = v.int64Value { txns[id]?.finished = true } }
        case "ack":
            if let id = e["id"]?.int64Value { txns[id]?.revocationAcked = true; txns[id]?.finished = true }
        case "revoke":
            if let id = e["id"]?.int64Value {
                txns[id]?.revokedMs = e["at"]?.int64Value
                clockFloorMs = max(clockFloorMs, e["at"]?.int64Value ?? 0)
                txns[id]?.revokeReason = e["reason"]?.stringValue
            }
        case "upgraded":
            if let id = e["id"]?.int64Value { txns[id]?.upgraded = true }
        case "pend":
            guard let id = e["id"]?.stringValue, let product = e["product"]?.stringValue, let key = e["key"]?.int64Value,
                  let reason = e["reason"]?.stringValue else { return }
            if pending[id] == nil { pendingOrder.append(id) }
            // Logs before quantities, offers and tokens were kept: one unit,
            // no offer, the click's key alone.
            pending[id] = SimPending(id: id, productID: product, key: key,
                                     token: e["token"]?.stringValue.flatMap(PurchaseToken.init(uuidString:)) ?? PurchaseToken(key: key),
                                     reason: reason, quantity: Int(e["qty"]?.int64Value ?? 1),
                                     winBackOfferID: e["offer"]?.stringValue)
            if let n = Int(id.dropFirst()) { nextPendingNumber = max(nextPendingNumber, n + 1) }
        case "unpend":
            if let id = e["id"]?.stringValue { pending[id] = nil; pendingOrder.removeAll { $0 == id } }
        case "group":
            if let p = e["product"]?.stringValue, let g = e["group"]?.stringValue { knownGroups[p] = g }
        case "clock":
            if let off = e["offset"]?.int64Value { clockOffsetMs = off }
            if let at = e["at"]?.int64Value { clockFloorMs = max(clockFloorMs, at) }
        case "renew":
            if let g = e["group"]?.stringValue, let on = e["on"]?.boolValue {
                if on { autoRenewOff.remove(g) } else { autoRenewOff.insert(g) }
            }
        case "next":
            if let g = e["group"]?.stringValue { nextRenewalProduct[g] = e["product"]?.stringValue }
        case "ask":
            if let on = e["on"]?.boolValue { askToBuy = on }
        case "payments":
            if let on = e["on"]?.boolValue { paymentsAllowed = on }
        case "storefront":
            if let c = e["country"]?.stringValue { storefront = c }
        case "billing":
            if let g = e["group"]?.stringValue, let on = e["on"]?.boolValue {
                if on { billingIssue.insert(g) } else { billingIssue.remove(g) }
            }
        case "priceinc":
            if let pid = e["product"]?.stringValue {
                if let price = e["price"]?.stringValue {
                    priceIncrease[pid] = (price, e["agreed"]?.boolValue ?? false)
                } else {
                    priceIncrease[pid] = nil
                }
            }
        case "repriced":
            if let pid = e["product"]?.stringValue, let price = e["price"]?.stringValue { repriced[pid] = price }
        case "lapse":
            if let id = e["id"]?.int64Value, let reason = e["reason"]?.stringValue { lapsed[id] = reason }
        case "app":
            if let v = e["version"]?.stringValue, let at = e["at"]?.int64Value {
                // A state made before the ID was kept: one derived from its
                // first app event, as stable.
                if appTransactionID == nil { appTransactionID = e["id"]?.stringValue ?? String(1_000_000_000_000 + UInt64(max(0, at)) % 9_000_000_000_000) }
                originalApp = (v, at)
            }
            if let p = e["preorder"]?.int64Value { preorderDateMs = p > 0 ? p : nil }
        case "fly":
            if let key = e["key"]?.int64Value, let product = e["product"]?.stringValue {
                let q = e["qty"]?.int64Value.flatMap { (1...10).contains($0) ? Int($0) : nil } ?? 1
                // Records before the token was kept: a version-1 token (this install's).
                let token = e["token"]?.stringValue.flatMap(PurchaseToken.init(uuidString:)) ?? PurchaseToken(key: key)
                landing.append((key, product, token, q, e["offer"]?.stringValue))
            }
        case "land":
            landing.removeAll()
        default:
            return
        }
    }

    /// The unfinished transactions, in ID order, as the store reports them
    /// (at start and at a restore). Each is read once: a store with 1,000
    /// unfinished copied each three times and wrote its ID as text three
    /// times.
    func unfinishedLocked() -> [StoreTransaction] {
        var ids: [Int64] = []
        for (id, t) in txns where t.isUnfinished { ids.append(id) }
        ids.sort()
        let currency = self.currency
        return ids.map { txns[$0]!.storeTransaction(currency: currency) }
    }

    func insert(_ t: SimTransaction) {
        txns[t.id] = t
        if t.kind != .consumable { ownable.append(t.id) }
        nextTxnID = max(nextTxnID, t.id + 1)
    }

    func persist(_ events: [[UInt8]]) throws(IAPError) {
        guard !events.isEmpty else { return }
        try log.append(events)
    }

    // MARK: Clock

    /// The store's clock: the device's clock at the open, plus the lead
    /// `advance` and `_timeRate` gave it (`clockOffsetMs`), plus the time
    /// passed since the open on the monotonic clock, sped up by `_timeRate`.
    /// It never goes back (`clockFloorMs`): a device clock set back or
    /// stepped by NTP, or a lead lost with a kill, once revived an expired
    /// subscription, charged its missed periods at once, or kept a new
    /// charge from being the group's latest (found by an attack on clocks).
    /// Saturates at `maxClockMs`: a catalog's `_timeRate` is outside input,
    /// and a huge one overflowed here (found by fuzzing, issue 7).
    func nowLocked() -> Int64 {
        let (sped, overflow) = elapsedMs().multipliedReportingOverflow(by: timeFactor)
        let now = overflow ? SimulatedStore.maxClockMs : max(clockFloorMs, SimulatedStore.clampedClock(openRealMs, clockOffsetMs, sped))
        clockFloorMs = now
        return now
    }

    /// The events that record the groups of this catalog's subscriptions
    /// the log does not hold yet (none once it does: a later open writes
    /// nothing); adds to `subscriptionGroups` the groups of products a later
    /// catalog dropped.
    func learnGroups() -> [[UInt8]] {
        var events: [[UInt8]] = []
        for p in catalog.products where p.kind == .autoRenewableSubscription {
            guard let g = p.subscriptionGroupID, knownGroups[p.id] != g else { continue }
            knownGroups[p.id] = g
            events.append(event("group") { $0.string("product", p.id); $0.string("group", g) })
        }
        subscriptionGroups = Set(subscriptionGroups).union(knownGroups.values).sorted()
        return events
    }

    /// The group of a subscription product, from the catalog or, for one a
    /// later catalog dropped, from what the store saw before.
    func groupID(of productID: String) -> String? {
        catalog.product(productID)?.subscriptionGroupID ?? knownGroups[productID]
    }

    /// An open whose device clock is behind the floor runs on from the
    /// floor at once (held at the floor instead, the clock stood still, and
    /// `advance` moved nothing, until real time caught up).
    func startFromFloor() {
        let raw = SimulatedStore.clampedClock(openRealMs, clockOffsetMs)
        guard raw < clockFloorMs else { return }
        clockLiftMs = clockFloorMs - raw
        clockOffsetMs = SimulatedStore.clampedClock(clockOffsetMs, clockLiftMs)
    }

    /// Milliseconds since the open, on the monotonic clock.
    private func elapsedMs() -> Int64 {
        Int64(clamping: (POSIX.monotonicNs() &- openMonotonicNs) / 1_000_000)
    }

    /// The end of year 9999: the simulated clock never passes it, so renewal
    /// date arithmetic stays far from Int64's limits.
    static let maxClockMs: Int64 = 253_402_300_799_999

    /// The sum of `parts`, kept within 0...maxClockMs instead of overflowing.
    static func clampedClock(_ parts: Int64...) -> Int64 {
        var t: Int64 = 0
        for p in parts {
            let (sum, overflow) = t.addingReportingOverflow(p)
            if overflow { return p > 0 ? maxClockMs : 0 }
            t = sum
        }
        return min(max(t, 0), maxClockMs)
    }

    // MARK: Store protocol

    public func start(sink: @escaping @Sendable (StoreEvent) -> Void) {
        let out: [StoreEvent] = lock.withLock {
            self.sink = sink
            guard var out = prepared else { return startEventsLocked() }
            prepared = nil
            // Renewals and lapses that fell due while the bridge read its
            // outbox, reported as a tick reports them.
            processClockLocked(&out, announce: true)
            return out
        }
        emit(out)
        let flights: [(key: Int64, productID: String, token: PurchaseToken, quantity: Int, winBack: String?)] = lock.withLock {
            defer { landing.removeAll() }
            return landing
        }
        if !flights.isEmpty {
            // Recorded before the charges: a crash between them must not land
            // them again (a second charge for one click). A crash after the
            // mark loses a payment that was never taken, as a real one can.
            let marked: Bool = lock.withLock { (try? persist([event("land") { _ in }])) != nil }
            if marked {
                for f in flights {
                    purchaseNow(productID: f.productID, key: f.key, token: f.token, quantity: f.quantity, winBackOfferID: f.winBack)
                }
            }
        }
        if options.tickMs > 0 && catalog.products.contains(where: { $0.kind == .autoRenewableSubscription }) {
            scheduleTick()
        }
    }

    public func attach(scheduler: StoreScheduler) {
        lock.withLock { self.scheduler = scheduler }
    }

    /// Replays the clock and lists the unfinished transactions (a new
    /// `StoreTransaction` each) on the SDK thread while the bridge reads its
    /// outbox; `start` reports them. Once, and only before `start`.
    public func prepareStart() {
        lock.withLock {
            guard sink == nil, prepared == nil, !stopped else { return }
            prepared = startEventsLocked()
        }
    }

    /// What `start` reports at once: the clock's renewals, every unfinished
    /// transaction, their IDs, entitlements, status and subscriptions.
    private func startEventsLocked() -> [StoreEvent] {
        var out: [StoreEvent] = []
        processClockLocked(&out, announce: false)
        let unfinished = unfinishedLocked()
        out.reserveCapacity(out.count + unfinished.count + 8)
        for t in unfinished { out.append(.transaction(t, .update)) }
        out.append(.unfinished(unfinished.map(\.id)))
        out.append(.entitlements(entitlementsLocked(), reason: .open, nowMs: nowLocked()))
        lastEntitlementIDs = entitlementIDsLocked()
        out.append(.status(canMakePayments: paymentsAllowed, storefront: storefront, reason: .open))
        let statuses = subscribedStatusesLocked()
        if !statuses.isEmpty { out.append(.subscriptions(statuses, invalid: [], reason: .open)) }
        for st in statuses { lastStatuses[st.groupID] = st }
        // StoreKit sends a message again at launch while it still
        // matters: an unfixed billing issue, an unanswered price increase.
        reannounceMessagesLocked(&out)
        return out
    }

    private func scheduleTick() {
        let s = lock.withLock { stopped ? nil : scheduler }
        s?.after(ms: options.tickMs) { [weak self] in self?.tick() }
    }

    func tick() {
        var out: [StoreEvent] = []
        let running: Bool = lock.withLock {
            guard !stopped else { return false }
            processClockLocked(&out, announce: true)
            return true
        }
        emit(out)
        if running { scheduleTick() }
    }

    func emit(_ events: [StoreEvent]) {
        guard !events.isEmpty, let s = lock.withLock({ stopped ? nil : sink }) else { return }
        for e in events { s(e) }
    }

    public func requestProducts(_ ids: [String]) {
        let answer: ProductsAnswer = lock.withLock {
            if let e = catalog.settings.storeKitError(forAPI: "product") {
                return ProductsAnswer(products: [], invalid: [], error: "simulated StoreKit error (\(e.type)) on Load Products")
            }
            var found: [ProductInfo] = []
            var invalid: [String] = []
            var seen = Set<String>()
            for id in ids where seen.insert(id).inserted {
                guard let p = catalog.product(id) else { invalid.append(id); continue }
                found.append(info(p))
            }
            return ProductsAnswer(products: found, invalid: invalid)
        }
        emit([.products(answer)])
    }

    func info(_ p: CatalogProduct) -> ProductInfo {
        let (title, description) = catalog.localized(p)
        return ProductInfo(id: p.id, title: title, description: description, price: p.price,
                           displayPrice: Price.display(p.price, currency: currency), currency: currency, kind: p.kind,
                           subscriptionPeriod: p.subscriptionPeriod, subscriptionGroupID: p.subscriptionGroupID,
                           introductoryOffer: p.introductoryOffer,
                           introOfferEligible: p.introductoryOffer == nil ? nil : !hasSubscribedLocked(group: p.subscriptionGroupID),
                           familyShareable: p.familyShareable,
                           winBackOffers: eligibleWinBackOffersLocked(p).map(\.json))
    }

    /// Several units only of a consumable (StoreKit's `.quantity`).
    public func validatePurchase(productID: String, quantity: Int) throws(IAPError) {
        guard let p = catalog.product(productID) else {
            throw IAPError(.unknownProduct, "product \"\(productID)\" is not in the catalog")
        }
        if quantity != 1, p.kind != .consumable {
            throw IAPError(.invalidArgument, "only a consumable can be bought several at a time; \"\(productID)\" is not one")
        }
    }

    /// Answers after `purchaseDelayMs` on the bridge's executor (at once
    /// without one: a store used on its own, as some tests do).
    public func purchase(productID: String, key: Int64, token: PurchaseToken, quantity: Int) throws(IAPError) {
        try purchase(productID: productID, key: key, token: token, quantity: quantity, winBack: nil)
    }

    public func purchase(productID: String, key: Int64, token: PurchaseToken, winBackOfferID: String) throws(IAPError) {
        try purchase(productID: productID, key: key, token: token, quantity: 1, winBack: winBackOfferID)
    }

    private func purchase(productID: String, key: Int64, token: PurchaseToken, quantity: Int, winBack: String?) throws(IAPError) {
        try validatePurchase(productID: productID, quantity: quantity)
        let s: StoreScheduler? = lock.withLock {
            guard let s = scheduler, options.purchaseDelayMs > 0 else { return nil }
            delayed[key] = (productID, token, quantity, winBack)
            return s
        }
        if let s {
            s.after(ms: options.purchaseDelayMs) { [weak self] in
                guard let self, self.lock.withLock({ self.delayed.removeValue(forKey: key) }) != nil else { return }
                self.purchaseNow(productID: productID, key: key, token: token, quantity: quantity, winBackOfferID: winBack)
            }
        } else {
            purchaseNow(productID: productID, key: key, token: token, quantity: quantity, winBackOfferID: winBack)
        }
    }

    func purchaseNow(productID: String, key: Int64, token: PurchaseToken, quantity: Int, winBackOfferID: String? = nil) {
        var out: [StoreEvent] = []
        lock.withLock {
            guard !stopped else { return }
            guard let p = catalog.product(productID) else {
                // A purchase whose sheet was up at a close, its product gone
                // from the next launch's catalog: answered, never dropped.
                out.append(.purchaseFailed(key: key, productID: productID, failure: .productUnavailable))
                return
            }
            processClockLocked(&out, announce: true)
            if !paymentsAllowed {
                out.append(.purchaseFailed(key: key, productID: productID, failure: .notAllowed))
                return
            }
            if cancelNext {
                cancelNext = false
                out.append(.purchaseFailed(key: key, productID: productID, failure: .cancelled))
                return
            }
            if let f = failNext {
                failNext = nil
                // Something the player owns is not charged again, even after
                // an error (a second charge of a non-consumable: an attack).
                let owns: Bool = switch p.kind {
                case .nonConsumable: ownedNonConsumableLocked(p.id) != nil
                case .autoRenewableSubscription: p.subscriptionGroupID.flatMap { activeSubscriptionLocked(group: $0) }?.productID == p.id
                case .consumable, .nonRenewingSubscription: false
                }
                if chargeLaterNext && !owns {
                    // StoreKit's purchase call threw, and the bank's check
                    // passes later: the charge arrives through the update
                    // stream, with the click's token.
                    pendLocked(productID: productID, key: key, token: token, reason: "chargeLater", quantity: quantity,
                               winBackOfferID: winBackOfferID)
                }
                chargeLaterNext = false
                out.append(.purchaseFailed(key: key, productID: productID, failure: f))
                return
            }
            if catalog.settings.failTransactions {
                out.append(.purchaseFailed(key: key, productID: productID, failure: .unknown))
                return
            }
            if let e = catalog.settings.storeKitError(forAPI: "purchase") {
                out.append(.purchaseFailed(key: key, productID: productID, failure: SimulatedStore.failure(named: e.type) ?? .unknown))
                return
            }
            // A win-back offer is for a lapsed subscriber who has not taken
            // it yet (StoreKit: Product.PurchaseError.ineligibleForOffer).
            var offer: TransactionOffer? = nil
            if let winBackOfferID {
                guard let o = eligibleWinBackOfferLocked(p, id: winBackOfferID) else {
                    out.append(.purchaseFailed(key: key, productID: productID, failure: .productUnavailable))
                    return
                }
                offer = o
            }
            // Something owned is not charged again: StoreKit answers with the existing transaction.
            if let owned = ownedTransactionLocked(for: p) {
                var st = owned.storeTransaction(currency: currency)
                st.alreadyOwned = true
                out.append(.transaction(st, .purchase(key: key)))
                return
            }
            if askToBuy || interruptNext {
                let reason: PendingReason = askToBuy ? .askToBuy : .interrupted
                interruptNext = false
                guard pendLocked(productID: productID, key: key, token: token, reason: reason.rawValue, quantity: quantity,
                                 winBackOfferID: winBackOfferID) else {
                    out.append(.purchaseFailed(key: key, productID: productID, failure: .unknown))
                    return
                }
                // StoreKit reports an interrupted payment as a failure first;
                // the SDK reports both kinds as "pending" (not a result, C9).
                out.append(.pending(key: key, productID: productID, reason: reason))
                return
            }
            let t: SimTransaction
            do throws(IAPError) {
                t = try chargeLocked(p, token: token, storeInitiated: false, quantity: quantity, offer: offer, &out)
            } catch {
                // The store could not record the charge: nothing was charged.
                out.append(.purchaseFailed(key: key, productID: productID, failure: .unknown))
                return
            }
            FaultPoint.afterCharge.reach()
            out.append(.transaction(t.storeTransaction(currency: currency), .purchase(key: key)))
            appendEntitlementChangeLocked(&out)
        }
        emit(out)
    }

    /// The pending purchase `id` is answered (approved, resolved, declined):
    /// recorded, then forgotten.
    func unpendLocked(_ id: String) throws(IAPError) {
        try persist([event("unpend") { $0.string("id", id) }])
        pending[id] = nil
        pendingOrder.removeAll { $0 == id }
    }

    /// Keeps a purchase waiting (`pending` op) for `reason`, with what it
    /// buys; false when the store could not record it.
    @discardableResult
    func pendLocked(productID: String, key: Int64, token: PurchaseToken, reason: String, quantity: Int = 1,
                    winBackOfferID: String? = nil) -> Bool {
        let id = "p\(nextPendingNumber)"
        do throws(IAPError) {
            try persist([event("pend") { w in
                w.string("id", id); w.string("product", productID); w.int("key", key); w.string("reason", reason)
                w.int("qty", Int64(quantity)); w.string("offer", winBackOfferID); w.string("token", token.uuidString)
            }])
        } catch {
            return false
        }
        nextPendingNumber += 1
        pending[id] = SimPending(id: id, productID: productID, key: key, token: token, reason: reason, quantity: quantity,
                                 winBackOfferID: winBackOfferID)
        pendingOrder.append(id)
        return true
    }

    public func finish(transactionID: String) { finish(transactionIDs: [transactionID]) }

    /// Finishes a group commit's worth in one append to the store's log, then
    /// reports them finished (the coordinator drops their tombstones).
    public func finish(transactionIDs: [String]) {
        let done: [String] = lock.withLock {
            var events: [[UInt8]] = []
            var updated: [SimTransaction] = []
            var finished: [String] = []
            var newlyFinished: [JSONValue] = []
            for text in transactionIDs {
                guard let id = Int64(text), var t = txns[id] else { continue }
                var changed = false
                if !t.finished {
                    t.finished = true
                    newlyFinished.append(.number(String(id)))
                    changed = true
                }
                if t.revokedMs != nil && !t.revocationAcked {
                    t.revocationAcked = true
                    events.append(event("ack") { $0.int("id", id) })
                    changed = true
                }
                if changed { updated.append(t) }
                finished.append(text)
            }
            // One event for the whole batch.
            if !newlyFinished.isEmpty { events.append(event("fins") { $0.value("ids", .array(newlyFinished)) }) }
            // If this write fails the store keeps listing the transactions as
            // unfinished: they are re-delivered and, tombstoned, finished again.
            do throws(IAPError) { try persist(events) } catch { return [] }
            for t in updated { txns[t.id] = t }
            return finished
        }
        if !done.isEmpty { emit([.finished(done)]) }
    }

    public func restore() {
        var out: [StoreEvent] = []
        lock.withLock {
            if let e = catalog.settings.storeKitError(forAPI: "sync") {
                out.append(.error(op: "restore", message: "simulated StoreKit error (\(e.type)) on App Store Sync"))
                return
            }
            processClockLocked(&out, announce: true)
            for t in unfinishedLocked() { out.append(.transaction(t, .update)) }
            out.append(.entitlements(entitlementsLocked(), reason: .restore, nowMs: nowLocked()))
            lastEntitlementIDs = entitlementIDsLocked()
        }
        emit(out)
    }

    public func refreshEntitlements(reason: UpdateReason) {
        let (list, now) = lock.withLock { (entitlementsLocked(), nowLocked()) }
        emit([.entitlements(list, reason: reason, nowMs: now)])
    }

    public func stop() {
        lock.withLock { prepared = nil }
        // A purchase the player was still paying for completes after the next
        // start, answering its purchase call then (recorded in the store's
        // state: the App Store, not the app, remembers it).
        lock.withLock {
            let flying = delayed.sorted { $0.key < $1.key }
            guard !stopped, !flying.isEmpty else { return }
            try? persist(flying.map { k, f in
                event("fly") {
                    $0.int("key", k)
                    $0.string("product", f.productID)
                    $0.string("token", f.token.uuidString)
                    if f.quantity != 1 { $0.int("qty", Int64(f.quantity)) }
                    if let o = f.winBack { $0.string("offer", o) }
                }
            })
            delayed.removeAll()
        }
        lock.withLock {
            guard !stopped else { return }
            stopped = true
            sink = nil
            scheduler = nil
            // A sped-up clock keeps its lead over real time (the device's
            // clock at the next open stands for real time then), and the
            // instant it reached is the next open's floor: an expiry is no
            // event, and a device clock set back between two opens revived
            // an expired subscription.
            let (lead, overflow) = elapsedMs().multipliedReportingOverflow(by: timeFactor - 1)
            let offset = overflow ? SimulatedStore.maxClockMs : SimulatedStore.clampedClock(clockOffsetMs - clockLiftMs, lead)
            let reached = nowLocked()
            try? persist([event("clock") { $0.int("offset", offset); $0.int("at", reached) }])
            log.close()
            POSIX.unlockDirectory(lockFD)
        }
    }

    public func simulate(_ command: JSONValue) throws(IAPError) -> JSONValue {
        try SimulatorCommands.run(command, on: self)
    }

    // MARK: Charging, ownership, subscriptions

    /// Creates and durably records a new transaction for `p`.
    func chargeLocked(_ p: CatalogProduct, token: PurchaseToken?, storeInitiated: Bool, verified: Bool = true,
                      familyShared: Bool = false, quantity: Int = 1, offer winBack: TransactionOffer? = nil,
                      _ out: inout [StoreEvent]) throws(IAPError) -> SimTransaction {
        let now = nowLocked()
        var t = SimTransaction(id: nextTxnID, originalID: nextTxnID, productID: p.id, kind: p.kind, purchaseMs: now, price: p.price)
        // The offer this charge takes: the win-back offer bought with, or the
        // group's introductory offer for a player who never subscribed in it
        // (a renewal's offer is decided in renewLocked).
        let terms = p.kind == .autoRenewableSubscription
            ? (winBack.flatMap { w in p.winBackOffers.first { $0.id == w.id } }
                ?? (hasSubscribedLocked(group: p.subscriptionGroupID) ? nil : p.introTerms))
            : nil
        // StoreKit keeps a subscription's purchase token for its later
        // transactions: a change made outside the game (external_purchase,
        // an offer code) carries the token of the group's latest
        // transaction, the click that started it. A family member's
        // purchase is theirs; a forgery is no transaction of the chain.
        t.token = token ?? (storeInitiated && verified && !familyShared && p.kind == .autoRenewableSubscription
            ? p.subscriptionGroupID.flatMap { latestInGroupLocked($0)?.token } : nil)
        t.inheritsToken = token == nil && t.token != nil
        t.verified = verified
        t.storeInitiated = storeInitiated
        t.familyShared = familyShared
        t.quantity = Int64(quantity)
        t.storefront = storefront
        var events: [[UInt8]] = []
        switch p.kind {
        case .nonRenewingSubscription:
            t.expiresMs = config.nonRenewingTerm(p.id).added(to: now)
        case .autoRenewableSubscription:
            let period = ISODuration(p.subscriptionPeriod ?? "P1M") ?? ISODuration("P1M")!
            t.expiresMs = period.added(to: now)
            if let terms {
                t.offer = terms.transactionOffer
                t.price = terms.price
                t.expiresMs = terms.firstTermEnd(from: now)
            }
            if let g = p.subscriptionGroupID, let current = activeSubscriptionLocked(group: g) {
                // An upgrade replaces the current plan at once, in the same chain.
                t.originalID = current.originalID
                events.append(event("upgraded") { $0.int("id", current.id) })
            }
            if let g = p.subscriptionGroupID, autoRenewOff.contains(g) {
                events.append(event("renew") { $0.string("group", g); $0.bool("on", true) })
            }
        case .consumable, .nonConsumable:
            break
        }
        events.insert(t.encoded(), at: 0)
        try persist(events)
        if p.kind == .autoRenewableSubscription, let g = p.subscriptionGroupID {
            if let current = activeSubscriptionLocked(group: g) { txns[current.id]?.upgraded = true }
            autoRenewOff.remove(g)
            nextRenewalProduct[g] = nil
            if verified { clearOnPurchaseLocked(group: g, product: p.id) }
        }
        insert(t)
        return t
    }

    /// What a purchase of `p` returns without charging: an owned
    /// non-consumable, the active subscription of the same product, or (a
    /// downgrade or crossgrade) the active plan, the change taking effect at
    /// the next renewal.
    func ownedTransactionLocked(for p: CatalogProduct) -> SimTransaction? {
        switch p.kind {
        case .nonConsumable:
            return ownedNonConsumableLocked(p.id)
        case .autoRenewableSubscription:
            guard let g = p.subscriptionGroupID, let current = activeSubscriptionLocked(group: g) else { return nil }
            if current.productID == p.id { return current }
            let currentLevel = catalog.product(current.productID)?.groupNumber ?? 1
            let newLevel = p.groupNumber ?? 1
            if newLevel < currentLevel { return nil }  // upgrade: charge now
            nextRenewalProduct[g] = p.id
            try? persist([event("next") { $0.string("group", g); $0.string("product", p.id) }])
            return current
        case .consumable, .nonRenewingSubscription:
            return nil
        }
    }

    /// The App Store's own, unrevoked purchase of a non-consumable. A forged
    /// (unverified) transaction is none: the App Store never made it, and
    /// charges a real purchase of the item.
    func ownedNonConsumableLocked(_ productID: String) -> SimTransaction? {
        ownable.lazy.compactMap { self.txns[$0] }.first { $0.productID == productID && $0.revokedMs == nil && $0.verified }
    }

    /// True when the player has had a subscription of this group (the
    /// introductory offer is then spent).
    func hasSubscribedLocked(group: String?) -> Bool {
        guard let group else { return false }
        return ownable.contains { id in
            guard let t = txns[id], t.kind == .autoRenewableSubscription else { return false }
            return groupID(of: t.productID) == group
        }
    }

    /// The latest unexpired, unrevoked, not-upgraded transaction of a group.
    func activeSubscriptionLocked(group: String) -> SimTransaction? {
        let now = nowLocked()
        return latestInGroupLocked(group).flatMap { t in
            (t.revokedMs == nil && !t.upgraded && ((t.expiresMs ?? 0) > now || inGraceLocked(group: group, t, now: now))) ? t : nil
        }
    }

    func latestInGroupLocked(_ group: String) -> SimTransaction? {
        var best: SimTransaction? = nil
        for id in ownable {
            // A forged (unverified) transaction is no subscription of the App Store's.
            guard let t = txns[id], t.kind == .autoRenewableSubscription, !t.upgraded, t.verified,
                  groupID(of: t.productID) == group else { continue }
            if best == nil || t.purchaseMs >= best!.purchaseMs { best = t }
        }
        return best
    }

    /// Renews every subscription whose period ended while it can renew
    /// (each renewal a new transaction with the same original ID), then ends
    /// those that can no longer renew (SimulatedStore+Billing.swift).
    func processClockLocked(_ out: inout [StoreEvent], announce: Bool) {
        let now = nowLocked()
        for g in subscriptionGroups {
            var renewals = 0
            while renewals < 1000, let last = latestInGroupLocked(g), renewsLocked(group: g, last), last.revokedMs == nil,
                  let exp = last.expiresMs, exp <= now {
                guard renewLocked(group: g, after: last, startMs: exp, &out) else { break }
                renewals += 1
            }
            lapseIfEndedLocked(group: g, now: now)
        }
        if announce { appendEntitlementChangeLocked(&out) }
    }

    func entitlementIDsLocked() -> [Int64] { entitlementTransactionsLocked().map(\.id) }

    /// StoreKit's `currentEntitlements`: non-consumables, the active plan of
    /// each subscription group, non-renewing subscriptions in term; never
    /// consumables, never revoked.
    func entitlementTransactionsLocked() -> [SimTransaction] {
        let now = nowLocked()
        var out: [SimTransaction] = []
        var groupsDone = Set<String>()
        for id in ownable {
            guard let t = txns[id], t.revokedMs == nil, t.verified else { continue }
            switch t.kind {
            case .nonConsumable:
                if !out.contains(where: { $0.productID == t.productID }) { out.append(t) }
            case .nonRenewingSubscription:
                if (t.expiresMs ?? 0) > now { out.append(t) }
            case .autoRenewableSubscription:
                guard let g = groupID(of: t.productID), !groupsDone.contains(g) else { continue }
                if let a = activeSubscriptionLocked(group: g) { out.append(a) }
                groupsDone.insert(g)
            case .consumable:
                continue
            }
        }
        return out.sorted { $0.id < $1.id }
    }

    func entitlementsLocked() -> [StoreTransaction] {
        let currency = self.currency
        return entitlementTransactionsLocked().map { $0.storeTransaction(currency: currency) }
    }

    /// Store error names accepted by `fail_next` and `_storeKitErrors`.
    static func failure(named name: String) -> PurchaseFailure? {
        switch name.lowercased() {
        case "network", "networkerror", "network_error", "urlerror": return .networkError
        case "notallowed", "not_allowed", "purchasenotallowed", "paymentnotallowed", "notentitled": return .notAllowed
        case "productunavailable", "product_unavailable", "productnotavailable": return .productUnavailable
        case "unknown", "generic", "system", "systemerror", "invalid", "purchase", "ineligibleforoffer",
             "invalidofferidentifier", "invalidofferprice", "invalidoffersignature", "missingofferparameters":
            return .unknown
        case "cancelled", "usercancelled", "canceled": return .cancelled
        default: return nil
        }
    }
}
