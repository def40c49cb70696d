#if canImport(StoreKit)
import StoreKit
#else
import StoreKitStandIn
#endif
#if canImport(UIKit) && (os(iOS) || os(tvOS))
import UIKit
#endif
import Foundation
import IAPCore

/// The StoreKit 2 backend (iOS 15+, macOS 12+, tvOS 15+) behind the same
/// `Store` protocol as the simulator. The coordinator keeps the delivery
/// contract (outbox, dedup by transaction ID, tombstones, keys); this class
/// only translates between StoreKit and `StoreEvent`s:
///
/// - start: listens to `Transaction.updates` (and, iOS 16.4+,
///   `PurchaseIntent.intents`), sweeps `Transaction.unfinished`, then reports
///   `.unfinished(ids)` and the entitlements with reason "open";
/// - purchase: `product.purchase(options: [.appAccountToken(token)])`, the
///   token carrying the game's key through a crash (C5); an unverified result
///   is reported with `verified: false`, never as a success (C6);
/// - finish: `transaction.finish()` on the transaction as reported, one at a
///   time, each within `finishTimeoutMs` (FinishQueue);
/// - restore: `AppStore.sync()` (a sign-in prompt: only on the player's
///   request), then the unfinished sweep and the entitlements.
///
/// On Linux the same source compiles against StoreKitStandIn, the test-only
/// mirror of the StoreKit declarations it uses.
///
/// Threading: work runs in Tasks; `lock` guards the fields below and is never
/// held across an `await` or while calling the sink.
public final class StoreKitStore: Store, @unchecked Sendable {
    public let name = "storekit"
    public let options: StoreKitOptions
    let config: BridgeConfig

    private let lock = Lock()
    private var sink: (@Sendable (StoreEvent) -> Void)? = nil
    private var stopped = false
    /// This store's registration with LatePurchases while it is open.
    private var lateID: Int? = nil
    /// Every task this store starts (listeners included): `stop` cancels
    /// them and waits for them (C8).
    let tasks = TaskTracker()
    /// How long `stop` waits for tasks StoreKit does not let go of at once.
    static let stopLimitMs: Int64 = 2_000
    /// Reported transactions by ID, for `finish` (which needs the value).
    private var kept: [String: Transaction] = [:]
    /// Promoted purchases waiting for the game, by product ID.
    private var promoted: [String: PromotedOffer] = [:]
    /// This store's registration with PromotedIntents, while open.
    private var promotedOwner: Int? = nil
    /// Products seen in answers, by ID: prices for transactions, and
    /// purchases without another request.
    private var products: [String: Product] = [:]
    /// Products whose price lookup failed this session: not asked again just
    /// to price a re-delivered transaction.
    private var unpriced: Set<String> = []
    /// IDs the App Store said it does not sell (the last answer that named them).
    private var notSold: Set<String> = []
    /// IDs of the last entitlements reported; nil until the "open" list.
    private var lastEntitlementIDs: [String]? = nil
    /// Refunded transactions the history scan reported that StoreKit had
    /// finished already: a finish of one asks StoreKit nothing
    /// (`finishNow`). The coordinator finishes a refund it delivered before
    /// at every open (its tombstone is kept), and each such call waited in
    /// the finish queue, up to `finishTimeoutMs` if StoreKit hung.
    private var finishedBefore: Set<String> = []
    /// `InheritedTokens.inherits` by transaction ID: the history before a
    /// transaction does not change, so each is read once a session.
    private var inheritedTokens: [UInt64: Bool] = [:]
    private let finisher: FinishQueue
    /// StoreKit messages announced to the coordinator, not shown yet.
    let messageShelf = MessageShelf()

    /// How long a re-delivered transaction may wait for its product's price.
    static let priceLookupLimitMs: Int64 = 3_000

    public init(config: BridgeConfig, options: StoreKitOptions) {
        self.config = config
        self.options = options
        let box = WeakBox()
        finisher = FinishQueue(limitMs: options.finishTimeoutMs) { id in
            box.store?.emit(.error(op: "store", message: "finishing transaction \(id) took longer than \(options.finishTimeoutMs) ms; the SDK stopped waiting. The transaction stays unfinished in StoreKit and is finished at the next launch; the game is not asked to grant it again"))
        }
        box.store = self
    }

    /// Finishes that ran out of time this session.
    public var finishTimeoutCount: Int { finisher.timeoutCount }

    /// Tasks of this store still running (0 after `stop` unless StoreKit
    /// held one past the limit).
    public var runningTaskCount: Int { tasks.count }

    /// Finish tasks and time-limited calls (finishes, price lookups) still
    /// running: 0 once `stop` returned (C8).
    public var runningFinishCount: Int { finisher.runningCount + TimeLimit.runningCount }

    // MARK: Store

    public func start(sink: @escaping @Sendable (StoreEvent) -> Void) {
        lock.withLock { self.sink = sink }
        // A purchase an earlier bridge of this process could not hear the
        // answer of (LatePurchases): this one reports it.
        let late = LatePurchases.shared.attach { [weak self] result in
            // Refused by a store that is stopping (it would report nowhere):
            // the answer waits for the next bridge.
            guard let self, !self.lock.withLock({ self.stopped }) else { return false }
            return self.tasks.spawn { [weak self] in
                // Only while StoreKit still lists it as unfinished: one the
                // closed bridge handled already (through the update stream,
                // answered late to its purchase call) is done with, and its
                // tombstone may be gone.
                let id = result.unsafePayloadValue.id
                for await r in Transaction.unfinished where r.unsafePayloadValue.id == id {
                    await self?.report(result, .update)
                    return
                }
            }
        }
        lock.withLock { lateID = late }
        // Both start now: the listener catches what StoreKit sends from now on
        // (the launch re-delivery included), the sweep what is already waiting
        // whether or not it was sent before anyone listened.
        tasks.spawn { [weak self] in
            for await result in Transaction.updates {
                guard let self, !Task.isCancelled else { return }
                // A refund StoreKit sends now is finished as StoreKit asks,
                // even if the history scan saw it first.
                let id = String(result.unsafePayloadValue.id)
                self.lock.withLock { _ = self.finishedBefore.remove(id) }
                await self.report(result, .update)
            }
        }
        tasks.spawn { [weak self] in
            guard let self else { return }
            var ids: [String] = []
            for await result in Transaction.unfinished {
                if Task.isCancelled { return }
                ids.append(String(result.unsafePayloadValue.id))
                await self.report(result, .update)
            }
            self.emit(.unfinished(ids))
            let groups = await self.reportRefundsWhileClosed(unfinished: Set(ids))
            let list = await self.entitlements()
            self.lock.withLock { self.lastEntitlementIDs = list.map(\.id) }
            self.emit(.entitlements(list, reason: .open))
            // Whether the player may pay, and the App Store country.
            let country = await Storefront.current?.countryCode ?? ""
            self.emit(.status(canMakePayments: AppStore.canMakePayments, storefront: country, reason: .open))
            // The status of every group the player ever subscribed in.
            let statuses = await self.statuses(groups: groups)
            if !statuses.isEmpty { self.emit(.subscriptions(statuses, invalid: [], reason: .open)) }
        }
        listenForStatusChanges()
        // A storefront change (StoreKit announces it; canMakePayments it
        // does not: that one is read at each open).
        tasks.spawn { [weak self] in
            for await front in Storefront.updates {
                guard let self, !Task.isCancelled else { return }
                self.emit(.status(canMakePayments: AppStore.canMakePayments, storefront: front.countryCode, reason: .change))
            }
        }
        // PurchaseIntent: iOS 16.4, Mac Catalyst 16.4 (os(iOS)) and macOS
        // 14.4; unavailable on tvOS (26.2:228-231, MacOSX15.5:604-607).
        #if !canImport(StoreKit) || os(iOS) || os(macOS)
        if #available(iOS 16.4, macOS 14.4, *), OSCheck.atLeast(16, 4) { listenForPromotedPurchases() }
        #endif
        #if !canImport(StoreKit) || os(iOS)
        if #available(iOS 16.0, *), OSCheck.atLeast(16, 0) { listenForMessages() }
        #endif
    }

    public func requestProducts(_ ids: [String]) {
        var seen = Set<String>()
        let unique = ids.filter { seen.insert($0).inserted }
        tasks.spawn { [self] in
            do {
                let found = try await Product.products(for: unique)
                var byID: [String: Product] = [:]
                for p in found where byID[p.id] == nil { byID[p.id] = p }
                let invalid = unique.filter { byID[$0] == nil }
                lock.withLock {
                    for (id, p) in byID { products[id] = p; unpriced.remove(id) }
                    notSold.subtract(byID.keys)
                    notSold.formUnion(invalid)
                }
                var items: [ProductInfo] = []
                for p in unique.compactMap({ byID[$0] }) {
                    var info = StoreKitMapping.product(p)
                    // iOS 15: whether this player may still take the group's
                    // introductory offer (asked only where there is one).
                    if info.introductoryOffer != nil, let sub = p.subscription {
                        info.introOfferEligible = await sub.isEligibleForIntroOffer
                    }
                    if info.kind == .autoRenewableSubscription {
                        info.winBackOffers = await StoreKitMapping.eligibleWinBackOffers(p)
                    }
                    items.append(info)
                }
                emit(.products(ProductsAnswer(products: items, invalid: invalid)))
            } catch {
                emit(.products(ProductsAnswer(products: [], invalid: [],
                                              error: "the App Store could not be asked for products: \(StoreKitMapping.describe(error))")))
            }
        }
    }

    /// From memory: a product the last request listed as invalid is refused
    /// at once; several units only of a product known as consumable (one
    /// never looked up is checked by StoreKit itself).
    public func validatePurchase(productID: String, quantity: Int) throws(IAPError) {
        try lock.withLock { () throws(IAPError) in
            if notSold.contains(productID) {
                throw IAPError(.unknownProduct, "product \"\(productID)\" is not sold by the App Store (the last product request listed it as invalid)")
            }
            if quantity != 1, let p = products[productID], p.type != .consumable {
                throw IAPError(.invalidArgument, "only a consumable can be bought several at a time; \"\(productID)\" is not one")
            }
        }
    }

    public func purchase(productID: String, key: Int64, token: PurchaseToken, quantity: Int) throws(IAPError) {
        // A product the App Store promoted is bought even if a products
        // request has not listed it.
        if lock.withLock({ promoted[productID] == nil }) { try validatePurchase(productID: productID, quantity: quantity) }
        try lock.withLock { () throws(IAPError) in
            guard !stopped else { throw IAPError(.closed, "the store is stopped") }
        }
        tasks.spawn { [self] in await runPurchase(productID: productID, key: key, token: token, quantity: quantity) }
    }

    /// A purchase with a win-back offer (iOS 18's `.winBackOffer` option):
    /// the product is looked up, its offer of that ID found, and bought as a
    /// promoted intent's offer is.
    public func purchase(productID: String, key: Int64, token: PurchaseToken, winBackOfferID: String) throws(IAPError) {
        try validatePurchase(productID: productID, quantity: 1)
        try lock.withLock { () throws(IAPError) in
            guard !stopped else { throw IAPError(.closed, "the store is stopped") }
        }
        tasks.spawn { [self] in
            guard #available(iOS 18.0, macOS 15.0, tvOS 18.0, *), OSCheck.atLeast(18, 0) else {
                // StoreKit has no win-back offers before iOS 18: nothing is charged.
                emit(.purchaseFailed(key: key, productID: productID, failure: .notAllowed))
                return
            }
            switch await lookup(productID) {
            case .found(let p):
                guard let offer = StoreKitMapping.winBackOffer(p, id: winBackOfferID) else {
                    emit(.purchaseFailed(key: key, productID: productID, failure: .productUnavailable))
                    return
                }
                await runPurchase(productID: productID, key: key, token: token, quantity: 1,
                                  offer: PromotedOffer(product: p, subscriptionOffer: offer))
            case .notSold:
                emit(.purchaseFailed(key: key, productID: productID, failure: .productUnavailable))
            case .failed(let error):
                emit(.purchaseFailed(key: key, productID: productID, failure: StoreKitMapping.failure(for: error)))
            }
        }
    }

    public func finish(transactionID: String) {
        finisher.submit(transactionID) { [weak self] in await self?.finishNow(transactionID) }
    }

    public func restore() {
        tasks.spawn { [self] in
            do {
                try await AppStore.sync()
            } catch {
                emit(.error(op: "restore", message: "App Store sync failed: \(StoreKitMapping.describe(error))"))
                return
            }
            for await result in Transaction.unfinished { await report(result, .update) }
            let list = await entitlements()
            lock.withLock { lastEntitlementIDs = list.map(\.id) }
            emit(.entitlements(list, reason: .restore))
        }
    }

    public func refreshEntitlements(reason: UpdateReason) {
        tasks.spawn { [self] in emit(.entitlements(await entitlements(), reason: reason)) }
    }

    public func simulate(_ command: JSONValue) throws(IAPError) -> JSONValue {
        throw IAPError(.notSupported, "iap_simulator drives the simulated store; this bridge uses StoreKit")
    }

    /// Stops reporting, cancels every task and waits for them, up to
    /// `stopLimitMs` (a purchase sheet the player still has open cannot be
    /// cancelled: its answer goes to the bridge open then in this process,
    /// or the next one (LatePurchases); after a relaunch, StoreKit's update
    /// stream brings the unfinished transaction; either way with its key).
    public func stop() {
        stopReporting()
        let unanswered: [PromotedOffer] = lock.withLock {
            defer { promoted = [:] }
            return Array(promoted.values)
        }
        // Promoted purchases the game did not answer wait for the next bridge.
        if let id = lock.withLock({ promotedOwner }) { PromotedIntents.shared.detach(id, unanswered: unanswered) }
        // One deadline for both, the close's last finishes first (the
        // coordinator queued them just before): `iap_close` waits at most
        // `stopLimitMs` here, also when called on the main thread, which a
        // StoreKit task hopping to the main actor then cannot reach.
        let due = SDKThread.nowMs() + StoreKitStore.stopLimitMs
        finisher.stop(limitMs: StoreKitStore.stopLimitMs / 2)
        tasks.stop(limitMs: max(50, due - SDKThread.nowMs()))
    }

    public func stopReporting() {
        let late: Int? = lock.withLock {
            stopped = true
            sink = nil
            defer { lateID = nil }
            return lateID
        }
        if let late { LatePurchases.shared.detach(late) }
    }

    // MARK: Reporting

    func emit(_ event: StoreEvent) {
        guard let s = lock.withLock({ stopped ? nil : sink }) else { return }
        s(event)
    }

    /// Reports one transaction as StoreKit gave it; keeps it for `finish`.
    private func report(_ result: VerificationResult<Transaction>, _ arrival: Arrival, alreadyOwned: Bool = false) async {
        let t = result.unsafePayloadValue
        var verified = false
        if case .verified = result { verified = true }
        let product = await priced(t.productID)
        var st = StoreKitMapping.transaction(t, verified: verified, jws: result.jwsRepresentation, product: product,
                                             config: config)
        st.alreadyOwned = alreadyOwned
        if case .update = arrival, !st.isRenewal, st.revocationDateMs == nil, st.token != nil {
            st.inheritsToken = await inherits(t)
        }
        lock.withLock { kept[st.id] = t }
        emit(.transaction(st, arrival))
        if st.kind != .consumable { await announceEntitlementChange() }
    }

    /// The product for pricing a transaction: cached, else asked for within
    /// a short limit (a re-delivered purchase must not wait on the network).
    private func priced(_ productID: String) async -> Product? {
        let (cached, skip): (Product?, Bool) = lock.withLock { (products[productID], unpriced.contains(productID)) }
        if let cached { return cached }
        if skip { return nil }
        let box = ProductBox()
        _ = await TimeLimit.run(ms: StoreKitStore.priceLookupLimitMs) { [self] in
            if case .found(let p) = await lookup(productID) { box.set(p) }
        }
        let p = box.value
        if p == nil { lock.withLock { _ = unpriced.insert(productID) } }
        return p
    }

    private enum Lookup {
        case found(Product)
        case notSold
        case failed(any Error)
    }

    private func lookup(_ productID: String) async -> Lookup {
        if let p = lock.withLock({ products[productID] }) { return .found(p) }
        do {
            guard let p = try await Product.products(for: [productID]).first(where: { $0.id == productID }) else {
                lock.withLock { _ = notSold.insert(productID) }
                return .notSold
            }
            lock.withLock {
                products[productID] = p
                notSold.remove(productID)
                unpriced.remove(productID)
            }
            return .found(p)
        } catch {
            return .failed(error)
        }
    }

    private func runPurchase(productID: String, key: Int64, token: PurchaseToken, quantity: Int,
                             offer: PromotedOffer? = nil) async {
        // A purchase the App Store promoted (PurchaseIntent) is bought as the
        // intent says: its product, with its win-back offer; `offer`: the
        // game's own choice of win-back offer (iap_buy_offer).
        let intent = offer ?? lock.withLock { promoted.removeValue(forKey: productID) }
        let product: Product
        if let intent {
            product = intent.product
        } else {
            switch await lookup(productID) {
            case .found(let p): product = p
            case .notSold:
                emit(.purchaseFailed(key: key, productID: productID, failure: .productUnavailable))
                return
            case .failed(let error):
                emit(.purchaseFailed(key: key, productID: productID, failure: StoreKitMapping.failure(for: error)))
                return
            }
        }
        // The token's text is a valid UUID by construction (16 bytes).
        guard let uuid = UUID(uuidString: token.uuidString) else {
            emit(.purchaseFailed(key: key, productID: productID, failure: .unknown))
            return
        }
        // Something owned is not charged again: StoreKit answers with the
        // transaction that already entitles the player.
        let ownedBefore: Set<UInt64> = StoreKitMapping.kind(product.type) == .consumable ? [] : await Self.owned(productID)
        do {
            let answer = try await StoreKitStore.buy(product, token: uuid, offer: intent, quantity: quantity)
            switch answer {
            case .success(let verification):
                // Answered after iap_close (a sheet the close could not
                // cancel): to the bridge open now, or the next one.
                if lock.withLock({ stopped }) {
                    LatePurchases.shared.hand(verification)
                    return
                }
                await report(verification, .purchase(key: key),
                             alreadyOwned: ownedBefore.contains(verification.unsafePayloadValue.id))
            case .userCancelled:
                emit(.purchaseFailed(key: key, productID: productID, failure: .cancelled))
            case .pending:
                // StoreKit does not say why: a parent must approve (Ask to
                // Buy) or the player must act (a bank's check). The
                // transaction, if any, comes later through `updates` with
                // this token.
                emit(.pending(key: key, productID: productID, reason: .actionRequired))
            case .other:
                emit(.purchaseFailed(key: key, productID: productID, failure: .unknown))
            }
        } catch {
            emit(.purchaseFailed(key: key, productID: productID, failure: StoreKitMapping.failure(for: error)))
        }
    }

    /// A purchase answer, Sendable (Product.PurchaseResult is not, before iOS 17).
    enum PurchaseAnswer: Sendable {
        case success(VerificationResult<Transaction>)
        case userCancelled
        case pending
        case other
    }

    /// The transactions that entitle the player to the product now: from
    /// iOS 18.4 `currentEntitlements(for:)` (all of them: the player's own
    /// and a family member's), below it `currentEntitlement(for:)`, which
    /// 18.4 deprecates (26.2:1428-1433, 1451-1452).
    static func owned(_ productID: String) async -> Set<UInt64> {
        if #available(iOS 18.4, macOS 15.4, tvOS 18.4, *), OSCheck.atLeast(18, 4) {
            var ids: Set<UInt64> = []
            for await r in Transaction.currentEntitlements(for: productID) { ids.insert(r.unsafePayloadValue.id) }
            return ids
        }
        return await Transaction.currentEntitlement(for: productID).map { [$0.unsafePayloadValue.id] } ?? []
    }

    /// The purchase call this OS wants (DESIGN §6, "Current iOS"): from iOS
    /// 18.2 `purchase(confirmIn:)` with the key window's view controller,
    /// from 17 with the foreground window scene; the plain
    /// `purchase(options:)` (which fails on 18.2+ in a UIKit app with "Could
    /// not get confirmation scene ID") only below 17, or when the app has no
    /// scene (then nothing better exists). The SDK finds the scene itself.
    @MainActor
    static func buy(_ product: Product, token: UUID?, offer: PromotedOffer?, quantity: Int = 1) async throws -> PurchaseAnswer {
        var options: Set<Product.PurchaseOption> = []
        if let token { options.insert(.appAccountToken(token)) }
        if quantity > 1 { options.insert(.quantity(quantity)) }
        if let offer, #available(iOS 18.0, macOS 15.0, tvOS 18.0, *), OSCheck.atLeast(18, 0),
           let o = offer.subscriptionOffer, o.type == .winBack {
            options.insert(.winBackOffer(o))
        }
        let result: Product.PurchaseResult
        // iOS and tvOS alike: StoreKit declares both confirmIn forms for
        // tvOS too (scene: tvOS 17; view controller: tvOS 18.2; 26.2:1650-1657).
        #if !canImport(StoreKit) || os(iOS) || os(tvOS)
        let scene = foregroundScene()
        if #available(iOS 18.2, tvOS 18.2, *), OSCheck.atLeast(18, 2), let vc = scene.flatMap(keyViewController) {
            result = try await product.purchase(confirmIn: vc, options: options)
        } else if #available(iOS 17.0, tvOS 17.0, *), OSCheck.atLeast(17, 0), let scene {
            result = try await product.purchase(confirmIn: scene, options: options)
        } else {
            result = try await product.purchase(options: options)
        }
        #else
        result = try await product.purchase(options: options)
        #endif
        if case .success(let v) = result { return .success(v) }
        if case .userCancelled = result { return .userCancelled }
        if case .pending = result { return .pending }
        return .other
    }

    #if !canImport(StoreKit) || os(iOS) || os(tvOS)
    /// The app's foreground window scene (active first, then inactive).
    @MainActor
    static func foregroundScene() -> UIWindowScene? {
        let scenes = UIApplication.shared.connectedScenes.compactMap { $0 as? UIWindowScene }
        return scenes.first { $0.activationState == .foregroundActive }
            ?? scenes.first { $0.activationState == .foregroundInactive }
    }

    /// The topmost view controller of the scene's key window.
    @MainActor
    static func keyViewController(_ scene: UIWindowScene) -> UIViewController? {
        guard var vc = (scene.keyWindow ?? scene.windows.first { $0.isKeyWindow })?.rootViewController else { return nil }
        while let top = vc.presentedViewController { vc = top }
        return vc
    }
    #endif

    /// Purchases refunded while the app was closed, of every kind:
    /// `Transaction.updates` does not deliver them again, entitlements never
    /// list consumables, and a non-consumable or subscription that is only
    /// missing from "entitlements" would have a game that missed a launch
    /// never hear "revoked" (docs/PROTOCOL.md promises it for every kind).
    /// `Transaction.all` keeps refunded transactions, so it is scanned at
    /// open, all of it and with no age limit: Apple documents no order, so
    /// any cap on the count could stop before the one refund that matters
    /// (a game with SKIncludeConsumableInAppPurchaseHistory keeps every
    /// consumable there), and a player away for a season still has a refund
    /// to hear of. The scan runs on the store's own task, never on the
    /// game's thread, and stops when the bridge closes; the coordinator
    /// drops the revocations it has delivered already (tombstones, kept as
    /// long as the outbox).
    /// `unfinished`: the IDs this open's sweep listed.
    /// Returns the subscription groups the scan saw (for the "open" status).
    @discardableResult
    private func reportRefundsWhileClosed(unfinished: Set<String>) async -> [String] {
        await scanHistory { result in
            guard case .verified(let t) = result, t.revocationDate != nil else { return }
            // Not listed by this open's sweep: finished already (`finishedBefore`).
            let id = String(t.id)
            if !unfinished.contains(id) { lock.withLock { _ = finishedBefore.insert(id) } }
            await report(result, .update)
        }
    }

    /// Reads all of `Transaction.all` until cancelled; returns the
    /// subscription groups seen (in the order seen).
    func scanHistory(_ each: (VerificationResult<Transaction>) async -> Void = { _ in }) async -> [String] {
        var groups: [String] = []
        var known: Set<String> = []
        for await result in Transaction.all {
            if Task.isCancelled { break }
            if let g = result.unsafePayloadValue.subscriptionGroupID, known.insert(g).inserted { groups.append(g) }
            await each(result)
        }
        return groups
    }

    /// What the player owns: verified, unrevoked entitlements; non-renewing
    /// subscriptions only within the game's term (as the simulator).
    private func entitlements() async -> [StoreTransaction] {
        var out: [StoreTransaction] = []
        let now = POSIX.nowMs()
        for await result in Transaction.currentEntitlements {
            // C6: an entitlement whose signature does not verify is not owned.
            guard case .verified(let t) = result, t.revocationDate == nil else { continue }
            let product = lock.withLock { products[t.productID] }
            var st = StoreKitMapping.transaction(t, verified: true, jws: result.jwsRepresentation, product: product,
                                                 config: config)
            if st.kind == .consumable { continue }
            // The facts that vouch for a held record at open (C11) give its key.
            if !st.isRenewal, st.token != nil { st.inheritsToken = await inherits(t) }
            if st.kind == .nonRenewingSubscription, let end = st.expiresDateMs, end <= now { continue }
            out.append(st)
        }
        return out.sorted { (UInt64($0.id) ?? 0) < (UInt64($1.id) ?? 0) }
    }

    /// `InheritedTokens.inherits`, read once per transaction. An answer
    /// found while the store stops (a cancelled read) is not kept.
    private func inherits(_ t: Transaction) async -> Bool {
        if let known = lock.withLock({ inheritedTokens[t.id] }) { return known }
        let answer = await InheritedTokens.inherits(t)
        if !Task.isCancelled { lock.withLock { inheritedTokens[t.id] = answer } }
        return answer
    }

    /// Reports the entitlements with reason "change" when they differ from
    /// the last list reported (after the "open" one). Also after each
    /// subscription status change (StoreKitStore+Requests.swift).
    func announceEntitlementChange() async {
        guard lock.withLock({ lastEntitlementIDs != nil }) else { return }
        let list = await entitlements()
        let ids = list.map(\.id)
        let changed: Bool = lock.withLock {
            guard let last = lastEntitlementIDs, last != ids else { return false }
            lastEntitlementIDs = ids
            return true
        }
        if changed { emit(.entitlements(list, reason: .change)) }
    }

    // MARK: Finishing

    private func finishNow(_ id: String) async {
        let skip = lock.withLock { () -> Bool in
            guard finishedBefore.remove(id) != nil else { return false }
            kept[id] = nil
            return true
        }
        if skip {
            emit(.finished([id]))
            return
        }
        var transaction = lock.withLock { kept[id] }
        if transaction == nil {
            // Confirmed before StoreKit re-delivered it this session: find it.
            for await result in Transaction.unfinished where String(result.unsafePayloadValue.id) == id {
                transaction = result.unsafePayloadValue
                break
            }
        }
        if let transaction {
            await transaction.finish()
            lock.withLock { _ = kept.removeValue(forKey: id) }
        }
        // Finished now (or already): StoreKit no longer lists it as
        // unfinished, so the coordinator may drop its tombstone.
        emit(.finished([id]))
    }

    // MARK: Promoted purchases

    #if !canImport(StoreKit) || os(iOS) || os(macOS)
    /// Purchases the player started on the App Store page (PurchaseIntent).
    /// By default the game decides (`"promotedPurchases": "ask"`): a
    /// `"promoted"` message names the product (and its win-back offer); the
    /// intent is kept until the game buys that product (`iap_buy`, which then
    /// buys with the intent's offer); at `iap_close` it goes back to
    /// PromotedIntents for the next bridge of the process. With `"buy"` the
    /// SDK buys at once, without a token: the result gets an SDK key (origin
    /// "store", C7). Intents heard before `iap_open` (`iap_launch`) are
    /// announced now; without `iap_launch` this store listens itself, from
    /// now until `iap_close`.
    @available(iOS 16.4, macOS 14.4, *)
    private func listenForPromotedPurchases() {
        let (id, waiting) = PromotedIntents.shared.attach { [weak self] offer in
            self?.acceptPromoted(offer) ?? false
        }
        lock.withLock { promotedOwner = id }
        for offer in waiting where !acceptPromoted(offer) { PromotedIntents.shared.arrived(offer) }
        guard !PromotedIntents.shared.listensFromLaunch else { return }
        tasks.spawn {
            for await intent in PurchaseIntent.intents {
                if Task.isCancelled { return }
                PromotedIntents.shared.arrived(PromotedIntents.offer(of: intent))
            }
        }
    }

    /// Takes one promoted purchase: announced to the game and kept (or, with
    /// "buy", bought). False when the store is closing: it is not taken.
    private func acceptPromoted(_ held: PromotedOffer) -> Bool {
        let buyNow = options.promotedPurchases == .buy
        let taken: Bool = lock.withLock {
            guard !stopped else { return false }
            products[held.product.id] = held.product
            notSold.remove(held.product.id)
            if !buyNow { promoted[held.product.id] = held }
            return true
        }
        guard taken else { return false }
        if buyNow {
            tasks.spawn { [weak self] in await self?.buyPromoted(held) }
        } else {
            emit(.promoted(productID: held.product.id, offer: held.subscriptionOffer.map(StoreKitMapping.promotedOffer)))
        }
        return true
    }

    private func buyPromoted(_ held: PromotedOffer) async {
        do {
            let answer = try await StoreKitStore.buy(held.product, token: nil, offer: held)
            if case .success(let verification) = answer { await report(verification, .update) }
            // Cancelled: nothing to report. Pending: the transaction arrives
            // later through `updates`.
        } catch {
            emit(.error(op: "store", message: "the purchase of \(held.product.id) promoted on the App Store failed: \(StoreKitMapping.describe(error))"))
        }
    }
    #endif
}

/// A promoted purchase kept until the game decides: its product and, iOS
/// 18+, the win-back offer the App Store showed with it.
struct PromotedOffer: Sendable {
    let product: Product
    let subscriptionOffer: Product.SubscriptionOffer?
}

/// The OS version where `#available` cannot tell (the stand-in on Linux,
/// where it is always true): the stand-in's scripted iOS version. On Apple
/// platforms `#available` decides and this is always true.
enum OSCheck {
    static func atLeast(_ major: Int, _ minor: Int) -> Bool {
        #if canImport(StoreKit)
        return true
        #else
        return SimulatedOS.isAtLeast(major, minor)
        #endif
    }
}

/// Breaks the cycle store -> finish queue -> timeout handler -> store.
private final class WeakBox: @unchecked Sendable {
    weak var store: StoreKitStore?
}

private final class ProductBox: @unchecked Sendable {
    private let lock = Lock()
    private var product: Product? = nil
    func set(_ p: Product) { lock.withLock { product = p } }
    var value: Product? { lock.withLock { product } }
}
