#if !canImport(StoreKit)  // the module is empty where StoreKit exists (StandIn.swift)
import Foundation

/// Apple's side of StoreKit, as the stand-in plays it: the App Store's ledger
/// of transactions (which survives the app: a relaunch keeps it), the
/// device's unfinished queue, the update stream, and what the next purchase
/// will do. One per process, like StoreKit; tests that use it run serialized
/// and start with `StandIn.reset()`.
///
/// Lock rule: `lock` is never held while yielding into a stream, resuming a
/// continuation or finishing a stream (their callbacks take it).
final class World: @unchecked Sendable {
    static let shared = World()

    typealias Result = VerificationResult<Transaction>

    struct Entry {
        var transaction: Transaction
        var verified: Bool
        var finished: Bool
    }

    private let lock = NSLock()
    private var products: [String: Product] = [:]
    private var entries: [UInt64: Entry] = [:]
    private var order: [UInt64] = []
    private var nextID: UInt64 = 7_000_000_001
    private var script: [StandIn.PurchaseOutcome] = []
    private var pending: [StandIn.PendingPurchase] = []
    private var hung: [(id: UInt64, resume: CheckedContinuation<Void, Never>)] = []
    /// Purchases whose payment sheet is up (`sheetHeld`).
    private var heldSheets: [CheckedContinuation<Void, Never>] = []
    private var updateSubscribers: [Int: AsyncStream<Result>.Continuation] = [:]
    private var intentSubscribers: [Int: AsyncStream<PurchaseIntent>.Continuation] = [:]
    private var nextSubscriber = 0
    private var launchRedelivery = true
    private var clockOffset: TimeInterval = 0

    // Scriptable settings and what was observed (read and written through StandIn).
    var productsError: (any Error)? = nil
    var syncError: (any Error)? = nil
    var finishHangs = false
    /// Charges made while true carry no `price` (StoreKit's is optional).
    var omitPrices = false
    var environment = "Xcode"
    var osVersion: (major: Int, minor: Int) = (18, 2)
    var canMakePayments = true
    var storefrontCountry: String? = "USA"
    var storefrontSubscribers: [Int: AsyncStream<Storefront>.Continuation] = [:]
    var screen: StandIn.Screen = .foregroundWithKeyWindow
    /// Intents promoted while nobody listened: the first listener gets them.
    private var waitingIntents: [PurchaseIntent] = []
    private(set) var finishCalls: [UInt64] = []
    private(set) var purchaseCalls: [StandIn.PurchaseCall] = []
    private(set) var productRequests: [[String]] = []
    private(set) var syncCount = 0
    /// Which per-product entitlement call the app made, in order:
    /// "currentEntitlement(for:)" (deprecated from iOS 18.4) or
    /// "currentEntitlements(for:)" (iOS 18.4).
    var entitlementLookups: [String] = []
    /// Statuses, sheets, messages, the app transaction (Message.swift).
    var extras = WorldExtras()

    func locked<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    var now: Date { locked { Date().addingTimeInterval(clockOffset) } }

    /// True when the player has had a subscription of this group.
    /// The win-back offers the player took in the group; called with `lock` held.
    func winBackOffersTakenLocked(group: String) -> Set<String> {
        Set(order.compactMap { id -> String? in
            guard let t = entries[id]?.transaction, t.subscriptionGroupID == group,
                  let o = t.offerRaw, o.type == .winBack else { return nil }
            return o.id
        })
    }

    func hasSubscribed(group: String) -> Bool {
        locked { order.contains { entries[$0]?.transaction.subscriptionGroupID == group } }
    }

    // MARK: Reset and launch

    func reset() {
        let (subs, intents, waiting, others): ([AsyncStream<Result>.Continuation], [AsyncStream<PurchaseIntent>.Continuation],
                                               [CheckedContinuation<Void, Never>], [() -> Void]) = locked {
            let out = (Array(updateSubscribers.values), Array(intentSubscribers.values), hung.map(\.resume) + heldSheets, extras.streams)
            heldSheets = []
            extras = WorldExtras()
            // nextID keeps counting: an operation left over from before the reset
            // (a finish still queued) must not touch a new transaction with its ID.
            products = [:]; entries = [:]; order = []; script = []; pending = []; hung = []
            updateSubscribers = [:]; intentSubscribers = [:]; launchRedelivery = true; clockOffset = 0
            productsError = nil; syncError = nil; finishHangs = false; omitPrices = false; environment = "Xcode"
            osVersion = (18, 2); screen = .foregroundWithKeyWindow; waitingIntents = []
            canMakePayments = true; storefrontCountry = "USA"; storefrontSubscribers = [:]
            finishCalls = []; purchaseCalls = []; productRequests = []; syncCount = 0; entitlementLookups = []
            includeConsumableHistory = false; intentsWaitForListener = true
            return out
        }
        for s in subs { s.finish() }
        for s in intents { s.finish() }
        for c in waiting { c.resume() }
        for finish in others { finish() }
    }

    /// The app is launched again: the next `Transaction.updates` sequence
    /// starts with every unfinished transaction, unless that launch delivery
    /// went to nobody (`updatesRedeliver` false: the app listened too late).
    func relaunch(updatesRedeliver: Bool) { locked { launchRedelivery = updatesRedeliver } }

    /// Moves the App Store's clock; StoreKit then announces, through
    /// `Status.updates`, each subscription group whose status changed (a
    /// period that ended while the app runs).
    func advanceClock(_ seconds: TimeInterval) {
        let (changed, subs): ([Product.SubscriptionInfo.Status], [AsyncStream<Product.SubscriptionInfo.Status>.Continuation]) = locked {
            let groups = subscriptionGroupsLocked()
            let before = groups.map { statusLocked(group: $0) }
            clockOffset += seconds
            var changed: [Product.SubscriptionInfo.Status] = []
            for (g, old) in zip(groups, before) {
                guard let now = statusLocked(group: g) else { continue }
                if old.map({ World.sameStatus($0, now) }) != true { changed.append(now) }
            }
            return (changed, Array(extras.statusSubscribers.values))
        }
        for status in changed { for s in subs { s.yield(status) } }
    }

    /// `now` as StoreKit's clock has it (the real one, moved by `advanceClock`).
    var nowDate: Date { locked { Date().addingTimeInterval(clockOffset) } }

    /// Every subscription group in the ledger, in the order first seen.
    func subscriptionGroupsLocked() -> [String] {
        var out: [String] = []
        for id in order { if let g = entries[id]?.transaction.subscriptionGroupID, !out.contains(g) { out.append(g) } }
        return out
    }

    /// For the other files of the stand-in; called with `lock` held.
    var clockOffsetLocked: TimeInterval { clockOffset }
    func productLocked(_ id: String) -> Product? { products[id] }
    func hasTransactionLocked(_ id: UInt64) -> Bool { entries[id] != nil }
    /// The latest transaction of a subscription group (by purchase date).
    func latestLocked(group: String) -> Entry? {
        order.compactMap { entries[$0] }.filter { $0.transaction.subscriptionGroupID == group }
            .max { $0.transaction.purchaseDate < $1.transaction.purchaseDate }
    }

    // MARK: Catalog

    func setProducts(_ list: [Product]) { locked { for p in list { products[p.id] = p } } }

    func products(_ ids: [String]) throws -> [Product] {
        try locked {
            productRequests.append(ids)
            if let e = productsError { throw e }
            var seen = Set<String>()
            return ids.compactMap { seen.insert($0).inserted ? products[$0] : nil }
        }
    }

    func sync() throws {
        try locked {
            syncCount += 1
            if let e = syncError { throw e }
        }
    }

    // MARK: Ledger

    private func result(_ e: Entry) -> Result {
        e.verified ? .verified(e.transaction) : .unverified(e.transaction, .invalidSignature)
    }

    /// Records a new transaction; called with `lock` held.
    private func chargeLocked(_ p: Product, token: UUID?, verified: Bool, renewalOf: Transaction? = nil,
                              quantity: Int = 1, offer: Product.SubscriptionOffer? = nil) -> Entry {
        let id = nextID
        nextID += 1
        let at = Date().addingTimeInterval(clockOffset)
        // A subscription bought again in its group continues the player's
        // chain (same originalID), as the App Store does; the first one of a
        // group takes the introductory offer.
        var earlier: Transaction? = nil
        if renewalOf == nil, let g = p.subscription?.subscriptionGroupID {
            earlier = order.lazy.compactMap { self.entries[$0]?.transaction }.first { $0.subscriptionGroupID == g }
            // A new subscription renews (auto-renew is on again).
            extras.autoRenewOff.remove(g)
        }
        var paid = offer?.price ?? p.price
        var used = offer
        if offer == nil, renewalOf == nil, earlier == nil, let intro = p.subscription?.introductoryOffer {
            paid = intro.price
            used = intro
        }
        var expires: Date? = nil
        if let period = p.subscription?.subscriptionPeriod {
            let start = renewalOf?.expirationDate ?? at
            expires = start.addingTimeInterval(World.seconds(period))
            if let used, renewalOf == nil {
                // The offer's term replaces the first period (a free trial
                // of a week ends after a week; pay up front covers all its
                // periods, pay as you go one at a time).
                var end = start
                let n = used.paymentMode == .payAsYouGo ? 1 : max(1, used.periodCount)
                for _ in 0..<n { end = end.addingTimeInterval(World.seconds(used.period)) }
                expires = end
            }
        }
        var t = Transaction(
            id: id, originalID: renewalOf?.originalID ?? earlier?.originalID ?? id, productID: p.id,
            subscriptionGroupID: p.subscription?.subscriptionGroupID, purchaseDate: renewalOf?.expirationDate ?? at,
            originalPurchaseDate: renewalOf?.originalPurchaseDate ?? earlier?.originalPurchaseDate ?? at,
            expirationDate: expires, purchasedQuantity: quantity,
            isUpgraded: false, revocationDate: nil, revocationReason: nil, productType: p.type,
            appAccountToken: token, environmentRaw: environment, reasonRaw: renewalOf == nil ? "PURCHASE" : "RENEWAL")
        t.paidPrice = omitPrices ? nil : paid * Decimal(quantity)
        t.paidCurrency = p.currencyCode
        t.storefrontRaw = storefrontCountry ?? "USA"
        t.offerRaw = used.map(StandInTransactionOffer.init)
        let e = Entry(transaction: t, verified: verified, finished: false)
        entries[id] = e
        order.append(id)
        return e
    }

    private static func seconds(_ p: Product.SubscriptionPeriod) -> TimeInterval {
        let day: TimeInterval = 86_400
        switch p.unit {
        case .day: return Double(p.value) * day
        case .week: return Double(p.value) * 7 * day
        case .month: return Double(p.value) * 30 * day
        case .year: return Double(p.value) * 365 * day
        }
    }

    /// What a purchase of something owned returns instead of a new charge:
    /// the owned non-consumable, or the active plan of the same product.
    private func ownedLocked(_ p: Product) -> Entry? {
        let now = Date().addingTimeInterval(clockOffset)
        for id in order.reversed() {
            guard let e = entries[id], e.verified, e.transaction.productID == p.id, e.transaction.revocationDate == nil
            else { continue }
            if p.type == .nonConsumable { return e }
            if p.type == .autoRenewable, let x = e.transaction.expirationDate, x > now { return e }
        }
        return nil
    }

    /// Every transaction; finished consumables only when refunded.
    var all: [Result] {
        locked {
            order.compactMap { entries[$0] }.filter { e in
                includeConsumableHistory
                    || !(e.finished && e.transaction.productType == .consumable && e.transaction.revocationDate == nil)
            }.map(result)
        }
    }

    /// Whether an intent promoted while nobody listens waits for the first
    /// listener (the one that launched the app) or is lost (the app was
    /// already running without a listener).
    var intentsWaitForListener = true

    /// The app's Info.plist sets SKIncludeConsumableInAppPurchaseHistory
    /// (iOS 18): finished consumables stay in `Transaction.all`.
    var includeConsumableHistory = false

    var unfinished: [Result] {
        locked { order.compactMap { entries[$0] }.filter { !$0.finished }.map(result) }
    }

    /// Non-consumables, non-renewing subscriptions, the latest plan of each
    /// subscription group while it is subscribed or in a billing grace
    /// period (`entitledLocked`); never consumables, never revoked.
    var currentEntitlements: [Result] {
        locked {
            let now = Date().addingTimeInterval(clockOffset)
            var out: [Result] = []
            var products = Set<String>()
            var groups = Set<String>()
            for id in order.reversed() {
                guard let e = entries[id] else { continue }
                let t = e.transaction
                if t.productType == .autoRenewable, let g = t.subscriptionGroupID {
                    guard groups.insert(g).inserted else { continue }
                    if t.revocationDate == nil, !t.isUpgraded, entitledLocked(group: g, t, now: now) { out.append(result(e)) }
                    continue
                }
                guard t.revocationDate == nil, t.productType == .nonConsumable || t.productType == .nonRenewable else { continue }
                if t.productType == .nonConsumable { guard products.insert(t.productID).inserted else { continue } }
                out.append(result(e))
            }
            return out.reversed()
        }
    }

    func snapshot(_ list: KeyPath<World, [Result]>) -> Transaction.Transactions {
        let items = self[keyPath: list]
        return Transaction.Transactions(stream: AsyncStream { c in
            for r in items { c.yield(r) }
            c.finish()
        })
    }

    // MARK: Streams

    func subscribeUpdates() -> Transaction.Transactions {
        var cont: AsyncStream<Result>.Continuation! = nil
        let stream = AsyncStream<Result> { cont = $0 }
        let (n, replay): (Int, [Result]) = locked {
            let n = nextSubscriber
            nextSubscriber += 1
            updateSubscribers[n] = cont
            let replay = launchRedelivery ? order.compactMap { entries[$0] }.filter { !$0.finished }.map(result) : []
            launchRedelivery = false
            return (n, replay)
        }
        cont.onTermination = { [weak self] _ in self?.locked { _ = self?.updateSubscribers.removeValue(forKey: n) } }
        for r in replay { cont.yield(r) }
        return Transaction.Transactions(stream: stream)
    }

    func subscribeIntents() -> AsyncStream<PurchaseIntent> {
        var cont: AsyncStream<PurchaseIntent>.Continuation! = nil
        let stream = AsyncStream<PurchaseIntent> { cont = $0 }
        let (n, waiting): (Int, [PurchaseIntent]) = locked {
            let n = nextSubscriber
            nextSubscriber += 1
            intentSubscribers[n] = cont
            defer { waitingIntents = [] }
            return (n, waitingIntents)
        }
        cont.onTermination = { [weak self] _ in self?.locked { _ = self?.intentSubscribers.removeValue(forKey: n) } }
        for i in waiting { cont.yield(i) }
        return stream
    }

    var updateSubscriberCount: Int { locked { updateSubscribers.count } }
    var intentSubscriberCount: Int { locked { intentSubscribers.count } }

    /// Puts a transaction into every `Transaction.updates` sequence.
    func deliver(_ r: Result) {
        let subs = locked { Array(updateSubscribers.values) }
        for s in subs { s.yield(r) }
    }

    func deliver(id: UInt64) {
        guard let e = locked({ entries[id] }) else { return }
        deliver(result(e))
    }

    // MARK: Purchases

    // MARK: Screen and OS

    func isAtLeast(_ major: Int, _ minor: Int) -> Bool {
        let v = locked { osVersion }
        return v.major > major || (v.major == major && v.minor >= minor)
    }

    func scenes() -> Set<UIScene> {
        switch locked({ screen }) {
        case .foregroundWithKeyWindow:
            return [UIWindowScene(activationState: .foregroundActive,
                                  windows: [UIWindow(isKeyWindow: true, rootViewController: UIViewController())])]
        case .foregroundWithoutKeyWindow:
            return [UIWindowScene(activationState: .foregroundActive,
                                  windows: [UIWindow(isKeyWindow: false, rootViewController: nil)])]
        case .backgroundOnly:
            return [UIWindowScene(activationState: .background,
                                  windows: [UIWindow(isKeyWindow: true, rootViewController: UIViewController())])]
        case .noScene:
            return []
        }
    }

    // MARK: Purchases

    func purchase(_ p: Product, options: [Product.PurchaseOption.Kind], route: StandIn.PurchaseRoute) async throws
        -> Product.PurchaseResult {
        var token: UUID? = nil
        var quantity = 1
        var winBack: String?? = nil
        for o in options {
            switch o {
            case .appAccountToken(let u): token = u
            case .quantity(let q): quantity = q
            case .winBackOffer(let id): winBack = .some(id)
            }
        }
        // The product's own win-back offer of that ID; one the product does
        // not have (a promoted intent's, made up by a test) as a free month.
        let offer: Product.SubscriptionOffer? = winBack.map { id in
            p.subscription?.storedWinBackOffers.first { $0.id == id }
                ?? Product.SubscriptionOffer(id: id, type: .winBack, price: 0, displayPrice: "0",
                                             period: Product.SubscriptionPeriod(unit: .month, value: 1),
                                             periodCount: 1, paymentMode: .freeTrial)
        }
        let (outcome, available, sceneFails): (StandIn.PurchaseOutcome?, Bool, Bool) = locked {
            purchaseCalls.append(StandIn.PurchaseCall(productID: p.id, appAccountToken: token, route: route,
                                                      winBackOfferID: winBack ?? nil))
            let v = osVersion
            let atLeast = { (a: Int, b: Int) in v.major > a || (v.major == a && v.minor >= b) }
            let available = route == .plain || (route == .scene && atLeast(17, 0)) || (route == .viewController && atLeast(18, 2))
            let sceneFails = route == .plain && atLeast(18, 2) && screen != .noScene
            guard available, !sceneFails else { return (nil, available, sceneFails) }
            return (script.isEmpty ? .success : script.removeFirst(), true, false)
        }
        if !available {
            // On a device: a symbol missing at run time. Here: an error the test sees.
            throw StoreKitError.systemError(StandIn.UnavailableCall(route: route))
        }
        if sceneFails { throw StoreKitError.systemError(StandIn.ConfirmationSceneError()) }
        guard let outcome else { throw StoreKitError.unknown }
        switch outcome {
        case .sheetHeld:
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in locked { heldSheets.append(c) } }
            fallthrough  // then charged and answered as a plain success
        case .success:
            return .success(result(locked {
                ownedLocked(p) ?? chargeLocked(p, token: token, verified: true, quantity: quantity, offer: offer)
            }))
        case .unverified(let error):
            let e = locked { chargeLocked(p, token: token, verified: false) }
            return .success(.unverified(e.transaction, error))
        case .userCancelled:
            return .userCancelled
        case .pending:
            locked { pending.append(StandIn.PendingPurchase(productID: p.id, appAccountToken: token)) }
            return .pending
        case .failure(let error):
            throw error
        case .deliveredTwice:
            let r = result(locked { chargeLocked(p, token: token, verified: true) })
            deliver(r)
            // Let the update listener see it before the purchase answer arrives.
            try? await Task.sleep(nanoseconds: 30_000_000)
            return .success(r)
        }
    }

    func script(_ outcomes: [StandIn.PurchaseOutcome]) { locked { script.append(contentsOf: outcomes) } }

    var pendingPurchases: [StandIn.PendingPurchase] { locked { pending } }

    /// A parent approves the oldest pending purchase: a transaction with its
    /// token arrives through the update stream.
    func approvePending() -> UInt64? {
        let r: Result? = locked {
            guard !pending.isEmpty else { return nil }
            let p = pending.removeFirst()
            guard let product = products[p.productID] else { return nil }
            return result(chargeLocked(product, token: p.appAccountToken, verified: true))
        }
        guard let r else { return nil }
        deliver(r)
        return r.unsafePayloadValue.id
    }

    /// A parent declines: StoreKit produces no transaction at all.
    func declinePending() { locked { if !pending.isEmpty { pending.removeFirst() } } }

    /// A transaction the app did not start (another device, a purchase
    /// promoted and completed on the App Store), delivered through updates
    /// when `deliver` is true.
    func charge(_ productID: String, token: UUID?, verified: Bool, finished: Bool, deliver: Bool,
                familyShared: Bool = false) -> UInt64? {
        let r: Result? = locked {
            guard let p = products[productID] else { return nil }
            // A subscription's token stays with its chain: a change made
            // outside the app (an upgrade in Settings, a re-subscription, an
            // offer code) carries the token of the group's latest
            // transaction (Apple, "appAccountToken"). Not a family member's.
            var token = token
            if token == nil, verified, !familyShared, let g = p.subscription?.subscriptionGroupID {
                token = latestLocked(group: g)?.transaction.appAccountToken
            }
            var e = chargeLocked(p, token: token, verified: verified)
            e.finished = finished
            e.transaction.familyShared = familyShared
            entries[e.transaction.id] = e
            return result(e)
        }
        guard let r else { return nil }
        if deliver { self.deliver(r) }
        return r.unsafePayloadValue.id
    }

    /// A renewal of the subscription `id`: a new transaction with the same
    /// original ID and token, reason `.renewal`, delivered through updates.
    func renew(_ id: UInt64) -> UInt64? {
        let r: Result? = locked {
            guard let old = entries[id]?.transaction, let p = products[old.productID] else { return nil }
            return result(chargeLocked(p, token: old.appAccountToken, verified: true, renewalOf: old))
        }
        guard let r else { return nil }
        deliver(r)
        return r.unsafePayloadValue.id
    }

    /// A refund: the transaction gets a revocation date and arrives again
    /// through the update stream (to running apps only).
    /// Transaction `id` verifies from now on.
    func verify(_ id: UInt64) { locked { entries[id]?.verified = true } }

    func refund(_ id: UInt64, reason: Transaction.RevocationReason, deliver: Bool = true) {
        let r: Result? = locked {
            guard var e = entries[id] else { return nil }
            e.transaction = e.transaction.revoked(at: Date().addingTimeInterval(clockOffset), reason: reason)
            entries[id] = e
            return result(e)
        }
        if deliver, let r { self.deliver(r) }
    }

    func promote(_ productID: String, winBackOfferID: String?) {
        let (intent, subs): (PurchaseIntent?, [AsyncStream<PurchaseIntent>.Continuation]) = locked {
            guard let p = products[productID] else { return (nil, []) }
            let offer = winBackOfferID.map { id in
                Product.SubscriptionOffer(id: id, type: .winBack, price: 0, displayPrice: "0",
                                          period: Product.SubscriptionPeriod(unit: .month, value: 1), periodCount: 1,
                                          paymentMode: .freeTrial)
            }
            let intent = PurchaseIntent(product: p, offer: offer)
            if intentSubscribers.isEmpty && intentsWaitForListener { waitingIntents.append(intent) }
            return (intent, Array(intentSubscribers.values))
        }
        guard let intent else { return }
        for s in subs { s.yield(intent) }
    }

    // MARK: Finishing

    func finish(_ id: UInt64) async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let hang: Bool = locked {
                finishCalls.append(id)
                if finishHangs {
                    hung.append((id, c))
                    return true
                }
                entries[id]?.finished = true
                return false
            }
            if !hang { c.resume() }
        }
    }

    func closeHeldSheets() {
        let waiting: [CheckedContinuation<Void, Never>] = locked {
            defer { heldSheets = [] }
            return heldSheets
        }
        for c in waiting { c.resume() }
    }

    /// Lets every hanging `finish()` return; `takeEffect` says whether those
    /// transactions end up finished.
    func releaseHungFinishes(takeEffect: Bool) {
        let waiting: [CheckedContinuation<Void, Never>] = locked {
            if takeEffect { for h in hung { entries[h.id]?.finished = true } }
            let w = hung.map(\.resume)
            hung = []
            return w
        }
        for c in waiting { c.resume() }
    }

    var ledger: [StandIn.LedgerItem] {
        locked {
            order.compactMap { entries[$0] }.map { e in
                StandIn.LedgerItem(id: e.transaction.id, originalID: e.transaction.originalID,
                                   productID: e.transaction.productID, finished: e.finished, verified: e.verified,
                                   revoked: e.transaction.revocationDate != nil,
                                   appAccountToken: e.transaction.appAccountToken)
            }
        }
    }
}
#endif
