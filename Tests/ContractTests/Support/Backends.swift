import Foundation
import IAPCore
import IAPSimulator
import Testing
#if !canImport(StoreKit)
@testable import IAPStoreKit
import StoreKitStandIn
#endif

/// The stores the contract suite runs against. Each plays Apple's side by its
/// own means (simulator ops, stand-in scripting); the tests' expectations are
/// the same for all of them.
enum BackendKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case simulator
    case storekit

    var testDescription: String { rawValue }

    /// Where StoreKit exists the backend runs against the real framework and
    /// is not driven from here; the contract suite then covers the simulator.
    static var available: [BackendKind] {
        #if canImport(StoreKit)
        return [.simulator]
        #else
        return [.simulator, .storekit]
        #endif
    }

    /// This store over a fresh dataDir (and, for StoreKit, a fresh stand-in App Store).
    func prepared() -> (Backend, Env) {
        let s = backend
        let env = Env()
        s.setUp(env)
        return (s, env)
    }

    var backend: Backend {
        switch self {
        case .simulator: return SimulatorBackend()
        case .storekit:
            #if canImport(StoreKit)
            fatalError("the StoreKit backend is driven through the stand-in, which exists only where StoreKit does not")
            #else
            return StoreKitBackend()
            #endif
        }
    }
}

/// A store the suite can open, restart and play Apple's side of.
protocol Backend: Sendable {
    var kind: BackendKind { get }
    /// Called once per test, before anything else.
    func setUp(_ env: Env)
    func config(_ env: Env) throws -> BridgeConfig
    /// A new store instance for `env`, as at an app launch.
    func makeStore(_ env: Env, _ config: BridgeConfig) throws -> Store

    /// The next purchase fails with `failure` (cancelled: the player cancels).
    func failNext(_ failure: PurchaseFailure, _ b: TestBridge) throws
    /// The next purchase fails with `failure` after the player was charged
    /// (StoreKit's purchase call threw; a bank check passes later).
    func failNextThenCharge(_ failure: PurchaseFailure, _ b: TestBridge) throws
    /// The charge of that purchase arrives, with its click's token, through
    /// the update stream; returns its transaction ID.
    func chargeAfterFailure(_ b: TestBridge) throws -> String
    /// The next purchase waits for a parent's approval.
    func askToBuyNext(_ b: TestBridge) throws
    /// A parent approves the pending purchase.
    func approvePending(_ b: TestBridge) throws
    /// The next purchase result is also delivered through the update stream.
    func deliverNextPurchaseTwice(_ env: Env) throws
    /// A purchase the game did not start (another device, the App Store page).
    func externalPurchase(_ productID: String, _ b: TestBridge) throws -> String
    /// A transaction whose signature does not verify, through the update stream.
    func forge(_ productID: String, _ b: TestBridge) throws -> String
    func refund(_ transactionID: String, _ b: TestBridge) throws
    /// The subscription bought as `transactionID` renews once.
    func renew(_ transactionID: String, _ b: TestBridge) throws
    /// Whether the store considers the transaction finished.
    func isFinished(_ transactionID: String, _ b: TestBridge) throws -> Bool
    /// The IDs of every transaction the store ever made.
    func transactionIDs(_ b: TestBridge) throws -> [String]
    /// The payment method of vip_monthly's subscriber fails and its period
    /// ends: the group is in billing retry (no grace period).
    func billingRetry(_ b: TestBridge) throws
    /// How the player answers the next refund request sheet.
    func nextRefund(approve: Bool, _ b: TestBridge) throws
    /// StoreKit has a price-increase consent message for the player.
    func priceIncreaseMessage(_ b: TestBridge) throws
    /// Parental controls on or off (read by the next open on StoreKit).
    func setPaymentsAllowed(_ on: Bool, _ b: TestBridge) throws
    /// The player's App Store country changes.
    func changeStorefront(_ country: String, _ b: TestBridge) throws
    /// A family member's purchase of a shareable product reaches the player.
    func familyShare(_ productID: String, _ b: TestBridge) throws
    /// The player taps a purchase promoted on the App Store page.
    func promote(_ productID: String, _ b: TestBridge) throws
    /// The player redeems an offer code for this product in the next offer code sheet.
    func nextOfferCode(_ productID: String, _ b: TestBridge) throws
    /// The player turns auto-renew of vip_monthly's group on or off.
    func setAutoRenew(_ on: Bool, _ b: TestBridge) throws
    /// The store's clock moves on (expiries and renewals fall due; on
    /// StoreKit the groups whose status changed are announced).
    func advance(days: Int64, _ b: TestBridge) throws
    /// The store's clock, in ms.
    func storeNowMs(_ b: TestBridge) throws -> Int64
    /// vip_monthly's payment method fails and its month ends: a billing
    /// grace period (`env.billingGrace`) of 16 days begins.
    func graceBegins(_ b: TestBridge) throws
    /// The grace period runs out unpaid: billing retry, no access.
    func graceEnds(_ b: TestBridge) throws
    /// The billing retry runs out: expired with billingError.
    func retryEnds(_ b: TestBridge) throws
    /// Returns once the previous launch's store stopped listening.
    func quiet() async
    /// Returns once the store listens to Apple's side (what Apple sends
    /// before that is not part of these tests).
    func listening() async
}

extension Backend {
    /// Opens a bridge on `env` (an app launch) and waits for the
    /// entitlements every open reports once the store's start sweep is done.
    func open(_ env: Env) async throws -> TestBridge {
        await quiet()
        var config = try self.config(env)
        if env.deferStoreMessages { config.storeMessages = .defer }
        let store = FaultyStore(try makeStore(env, config), faults: env.faults)
        let c: Coordinator
        do { c = try Coordinator.open(config: config, store: store) } catch {
            store.stop()
            throw error
        }
        let b = TestBridge(c)
        await b.wait(for: "the entitlements reported at open") { ms in
            ms.contains { $0["type"]?.stringValue == "entitlements" && $0["reason"]?.stringValue == "open" }
        }
        await listening()
        return b
    }

    /// Returns once every event the store produced before the call has been
    /// handled: a transaction made now through the update stream comes after
    /// all of them. Its own result is confirmed.
    func barrier(_ b: TestBridge) async throws {
        let id = try externalPurchase("coins_100", b)
        guard let r = await b.result("the barrier transaction \(id)", where: { $0.transactionID == id }), let k = r.key
        else { return }
        try b.confirm(k)
    }
}

// MARK: The simulated store

struct SimulatorBackend: Backend {
    var kind: BackendKind { .simulator }

    func setUp(_ env: Env) {}

    func config(_ env: Env) throws -> BridgeConfig {
        let catalog = env.billingGrace ? try SimulatorBackend.graceCatalog(env) : sampleCatalog
        let json = #"{"store":"simulator","dataDir":"\#(env.dataDir)","catalog":"\#(catalog)","simulator":{"stateDir":"\#(env.stateDir)","tickMs":0}}"#
        return try BridgeConfig.parse(Array(json.utf8))
    }

    /// The sample catalog with `_billingGracePeriodEnabled`, in env's directory.
    static func graceCatalog(_ env: Env) throws -> String {
        let text = try String(contentsOfFile: sampleCatalog, encoding: .utf8)
        let edited = text.replacingOccurrences(of: "\"settings\" : {", with: "\"settings\" : {\n    \"_billingGracePeriodEnabled\" : true,")
        try #require(edited != text, "the sample catalog has a settings object")
        let path = env.root + "/grace.storekit"
        try edited.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func makeStore(_ env: Env, _ config: BridgeConfig) throws -> Store { try SimulatedStore.open(config: config) }

    func quiet() async {}
    func listening() async {}

    @discardableResult
    private func sim(_ b: TestBridge, _ json: String) throws -> JSONValue { try b.c.simulate(try JSONParser.parse(json)) }

    func failNext(_ failure: PurchaseFailure, _ b: TestBridge) throws {
        if failure == .cancelled { try sim(b, #"{"op":"cancel_next"}"#) } else {
            try sim(b, #"{"op":"fail_next","error":"\#(failure.rawValue)"}"#)
        }
    }

    func failNextThenCharge(_ failure: PurchaseFailure, _ b: TestBridge) throws {
        try sim(b, #"{"op":"fail_next","error":"\#(failure.rawValue)","chargeLater":true}"#)
    }

    func chargeAfterFailure(_ b: TestBridge) throws -> String {
        let pending = try sim(b, #"{"op":"pending"}"#)["pending"]?.arrayValue ?? []
        let id = try #require(pending.first { $0["reason"]?.stringValue == "chargeLater" }?["id"]?.stringValue)
        return try #require(try sim(b, #"{"op":"resolve","id":"\#(id)"}"#)["transactionID"]?.stringValue)
    }

    func askToBuyNext(_ b: TestBridge) throws { try sim(b, #"{"op":"ask_to_buy","enabled":true}"#) }

    func approvePending(_ b: TestBridge) throws {
        let pending = try sim(b, #"{"op":"pending"}"#)["pending"]?.arrayValue ?? []
        let id = try #require(pending.first?["id"]?.stringValue, "a pending purchase")
        try sim(b, #"{"op":"ask_to_buy","enabled":false}"#)
        try sim(b, #"{"op":"approve","id":"\#(id)"}"#)
    }

    func deliverNextPurchaseTwice(_ env: Env) throws { env.faults.duplicateNextPurchase = true }

    func externalPurchase(_ productID: String, _ b: TestBridge) throws -> String {
        try #require(try sim(b, #"{"op":"external_purchase","productID":"\#(productID)"}"#)["transactionID"]?.stringValue)
    }

    func forge(_ productID: String, _ b: TestBridge) throws -> String {
        try #require(try sim(b, #"{"op":"forge","productID":"\#(productID)"}"#)["transactionID"]?.stringValue)
    }

    func refund(_ transactionID: String, _ b: TestBridge) throws {
        try sim(b, #"{"op":"refund","transactionID":"\#(transactionID)"}"#)
    }

    func renew(_ transactionID: String, _ b: TestBridge) throws {
        // vip_monthly renews once when its month is over.
        try sim(b, #"{"op":"advance","seconds":\#(32 * 86_400)}"#)
    }

    func billingRetry(_ b: TestBridge) throws {
        try sim(b, #"{"op":"billing_issue","productID":"vip_monthly"}"#)
        try sim(b, #"{"op":"advance","seconds":\#(32 * 86_400)}"#)
    }

    func nextRefund(approve: Bool, _ b: TestBridge) throws {
        try sim(b, #"{"op":"sheet_next","sheet":"refund","outcome":"\#(approve ? "approve" : "cancel")"}"#)
    }

    func priceIncreaseMessage(_ b: TestBridge) throws {
        try sim(b, #"{"op":"price_increase","productID":"vip_monthly","price":"3.99"}"#)
    }

    func setPaymentsAllowed(_ on: Bool, _ b: TestBridge) throws { try sim(b, #"{"op":"payments_allowed","enabled":\#(on)}"#) }
    func changeStorefront(_ country: String, _ b: TestBridge) throws { try sim(b, #"{"op":"storefront","countryCode":"\#(country)"}"#) }
    func familyShare(_ productID: String, _ b: TestBridge) throws { try sim(b, #"{"op":"family_share","productID":"\#(productID)"}"#) }
    func promote(_ productID: String, _ b: TestBridge) throws { try sim(b, #"{"op":"promote","productID":"\#(productID)"}"#) }
    func nextOfferCode(_ productID: String, _ b: TestBridge) throws {
        try sim(b, #"{"op":"sheet_next","sheet":"offerCode","outcome":"redeem","productID":"\#(productID)"}"#)
    }

    func setAutoRenew(_ on: Bool, _ b: TestBridge) throws {
        try sim(b, #"{"op":"auto_renew","productID":"vip_monthly","enabled":\#(on)}"#)
    }

    func advance(days: Int64, _ b: TestBridge) throws { try sim(b, #"{"op":"advance","seconds":\#(days * 86_400)}"#) }

    func storeNowMs(_ b: TestBridge) throws -> Int64 { try #require(try sim(b, #"{"op":"clock"}"#)["now"]?.int64Value) }

    func graceBegins(_ b: TestBridge) throws {
        try sim(b, #"{"op":"billing_issue","productID":"vip_monthly"}"#)
        // The first period is the catalog's one-week free trial (the
        // introductory offer of vip_monthly): its renewal is due on day 7.
        try advance(days: 8, b)
    }

    func graceEnds(_ b: TestBridge) throws { try advance(days: 17, b) }

    func retryEnds(_ b: TestBridge) throws { try advance(days: 61, b) }

    func transactionIDs(_ b: TestBridge) throws -> [String] {
        (try sim(b, #"{"op":"transactions"}"#)["transactions"]?.arrayValue ?? []).compactMap { $0["transactionID"]?.stringValue }
    }

    func isFinished(_ transactionID: String, _ b: TestBridge) throws -> Bool {
        let all = try sim(b, #"{"op":"transactions"}"#)["transactions"]?.arrayValue ?? []
        let t = try #require(all.first { $0["transactionID"]?.stringValue == transactionID }, "transaction \(transactionID)")
        return t["finished"]?.boolValue == true
    }
}

// MARK: The StoreKit backend over the stand-in

#if !canImport(StoreKit)
struct StoreKitBackend: Backend {
    var kind: BackendKind { .storekit }
    var finishTimeoutMs = 2_000
    /// More members of the config's "storekit" object, as JSON text without
    /// braces (e.g. `"promotedPurchases":"buy"`).
    var storekitExtra = ""

    /// A fresh App Store selling the sample catalog's products, as App Store
    /// Connect would describe them (the same titles, prices and periods the
    /// simulator reads from the file).
    func setUp(_ env: Env) {
        StandIn.reset()
        StandIn.sell(StoreKitBackend.catalogProducts())
        // Promoted purchases kept for the process (iap_launch) belong to one test.
        PromotedIntents.shared.resetForTesting()
    }

    static func catalogProducts() -> [Product] {
        guard let catalog = try? Catalog.load(path: sampleCatalog) else { return [] }
        let currency = Price.currency(storefront: catalog.settings.storefront)
        return catalog.products.map { p in
            let (title, description) = catalog.localized(p)
            let type: Product.ProductType
            switch p.kind {
            case .consumable: type = .consumable
            case .nonConsumable: type = .nonConsumable
            case .nonRenewingSubscription: type = .nonRenewable
            case .autoRenewableSubscription: type = .autoRenewable
            }
            let period = p.subscriptionPeriod.flatMap(parsePeriod)
            let intro = p.introductoryOffer.flatMap { o -> (mode: Product.SubscriptionOffer.PaymentMode,
                                                          period: Product.SubscriptionPeriod.Unit, periodValue: Int,
                                                          count: Int, price: Decimal)? in
                guard let (unit, value) = o["period"]?.stringValue.flatMap(parsePeriod) else { return nil }
                let mode: Product.SubscriptionOffer.PaymentMode
                switch o["paymentMode"]?.stringValue {
                case "payAsYouGo": mode = .payAsYouGo
                case "payUpFront": mode = .payUpFront
                default: mode = .freeTrial
                }
                return (mode, unit, value, Int(o["periods"]?.int64Value ?? 1),
                        Decimal(string: o["price"]?.stringValue ?? "0") ?? 0)
            }
            return StandIn.product(
                id: p.id, type: type, displayName: title, description: description,
                price: Decimal(string: p.price) ?? 0, displayPrice: Price.display(p.price, currency: currency),
                currencyCode: currency, localeIdentifier: catalog.settings.locale, isFamilyShareable: p.familyShareable,
                subscriptionGroupID: p.kind == .autoRenewableSubscription ? p.subscriptionGroupID : nil,
                period: period?.0, periodValue: period?.1 ?? 1, introductoryOffer: intro)
        }
    }

    /// "P1M" -> (.month, 1).
    static func parsePeriod(_ text: String) -> (Product.SubscriptionPeriod.Unit, Int)? {
        guard text.count >= 3, text.first == "P", let value = Int(text.dropFirst().dropLast()) else { return nil }
        switch text.last {
        case "D": return (.day, value)
        case "W": return (.week, value)
        case "M": return (.month, value)
        case "Y": return (.year, value)
        default: return nil
        }
    }

    func config(_ env: Env) throws -> BridgeConfig {
        let extra = storekitExtra.isEmpty ? "" : "," + storekitExtra
        let json = #"{"store":"storekit","dataDir":"\#(env.dataDir)","storekit":{"finishTimeoutMs":\#(finishTimeoutMs)\#(extra)}}"#
        return try BridgeConfig.parse(Array(json.utf8))
    }

    /// A fresh dataDir over a fresh stand-in App Store, for the suites that
    /// test the StoreKit backend alone.
    func freshEnv() -> Env {
        let env = Env()
        setUp(env)
        return env
    }

    /// An app launch on `env` for those suites: a relaunched stand-in, a new
    /// backend instance, and a bridge that has sent its entitlements at open
    /// and whose update listener is running.
    func launchStandIn(_ env: Env, updatesRedeliver: Bool = true) async throws -> (TestBridge, StoreKitStore) {
        await quiet()
        StandIn.relaunch(updatesRedeliver: updatesRedeliver)
        var config = try self.config(env)
        if env.deferStoreMessages { config.storeMessages = .defer }
        let store = try #require(try StoreKitFactory.make(config) as? StoreKitStore)
        let c = try Coordinator.open(config: config, store: FaultyStore(store, faults: env.faults))
        let b = TestBridge(c)
        await b.wait(for: "the entitlements at open") { ms in
            ms.contains { $0["type"]?.stringValue == "entitlements" && $0["reason"]?.stringValue == "open" }
        }
        await listening()
        return (b, store)
    }

    func makeStore(_ env: Env, _ config: BridgeConfig) throws -> Store {
        StandIn.relaunch()
        return try StoreKitFactory.make(config)
    }

    func quiet() async {
        await TestBridge.eventually("the previous launch's listeners gone") {
            // iap_launch's listener (PromotedIntents) lives for the process.
            StandIn.updateListeners == 0 && StandIn.messageListeners == 0
                && StandIn.intentListeners == (PromotedIntents.shared.listensFromLaunch ? 1 : 0)
        }
    }

    /// The backend's listeners run in tasks that start soon after the open.
    func listening() async {
        await TestBridge.eventually("the backend listening to Transaction.updates, PurchaseIntent.intents and Message.messages") {
            // PurchaseIntent from iOS 16.4: one listener, the bridge's or iap_launch's.
            StandIn.updateListeners == 1 && StandIn.messageListeners == (SimulatedOS.isAtLeast(16, 0) ? 1 : 0)
                && StandIn.intentListeners == (SimulatedOS.isAtLeast(16, 4) || PromotedIntents.shared.listensFromLaunch ? 1 : 0)
        }
    }

    /// One representative StoreKit error per failure (the full table is in
    /// StoreKitBackendTests).
    static func error(for failure: PurchaseFailure) -> any Error {
        switch failure {
        case .networkError: return StoreKitError.networkError(URLError(.notConnectedToInternet))
        case .notAllowed: return Product.PurchaseError.purchaseNotAllowed
        case .productUnavailable: return StoreKitError.notAvailableInStorefront
        default: return StoreKitError.unknown
        }
    }

    func failNext(_ failure: PurchaseFailure, _ b: TestBridge) throws {
        StandIn.nextPurchases(failure == .cancelled ? .userCancelled : .failure(StoreKitBackend.error(for: failure)))
    }

    func failNextThenCharge(_ failure: PurchaseFailure, _ b: TestBridge) throws {
        StandIn.nextPurchases(.failure(StoreKitBackend.error(for: failure)))
    }

    func chargeAfterFailure(_ b: TestBridge) throws -> String {
        let call = try #require(StandIn.purchaseCalls.last)
        return String(try #require(StandIn.externalPurchase(call.productID, appAccountToken: call.appAccountToken)))
    }

    func askToBuyNext(_ b: TestBridge) throws { StandIn.nextPurchases(.pending) }

    func approvePending(_ b: TestBridge) throws { _ = try #require(StandIn.approvePending(), "a pending purchase") }

    func deliverNextPurchaseTwice(_ env: Env) throws { StandIn.nextPurchases(.deliveredTwice) }

    func externalPurchase(_ productID: String, _ b: TestBridge) throws -> String {
        String(try #require(StandIn.externalPurchase(productID)))
    }

    func forge(_ productID: String, _ b: TestBridge) throws -> String {
        String(try #require(StandIn.externalPurchase(productID, verified: false)))
    }

    func refund(_ transactionID: String, _ b: TestBridge) throws { StandIn.refund(try #require(UInt64(transactionID))) }

    func renew(_ transactionID: String, _ b: TestBridge) throws {
        let id = try #require(UInt64(transactionID))
        _ = try #require(StandIn.renew(id))
    }

    func billingRetry(_ b: TestBridge) throws {
        let group = try #require(StoreKitBackend.catalogProducts().first { $0.id == "vip_monthly" }?.subscription?.subscriptionGroupID)
        StandIn.setRenewal(group: group, StandIn.Renewal(state: .inBillingRetryPeriod, expirationReason: .billingError,
                                                         isInBillingRetry: true))
    }

    func nextRefund(approve: Bool, _ b: TestBridge) throws {
        StandIn.nextRefundAnswer = approve ? .submit(grant: true) : .userCancelled
    }

    func priceIncreaseMessage(_ b: TestBridge) throws {
        StandIn.sendMessage(.priceIncreaseConsent)
    }

    func setPaymentsAllowed(_ on: Bool, _ b: TestBridge) throws { StandIn.canMakePayments = on }
    func changeStorefront(_ country: String, _ b: TestBridge) throws { StandIn.storefront = country }
    func familyShare(_ productID: String, _ b: TestBridge) throws { _ = try #require(StandIn.familyShare(productID)) }
    func promote(_ productID: String, _ b: TestBridge) throws { StandIn.promote(productID) }
    func nextOfferCode(_ productID: String, _ b: TestBridge) throws { StandIn.nextOfferCodeProduct = productID }

    func isFinished(_ transactionID: String, _ b: TestBridge) throws -> Bool {
        StandIn.isFinished(try #require(UInt64(transactionID)))
    }

    func setAutoRenew(_ on: Bool, _ b: TestBridge) throws { StandIn.setAutoRenew(group: StandInSubscription.vipGroup, on) }

    func advance(days: Int64, _ b: TestBridge) throws { StandIn.advanceClock(seconds: TimeInterval(days * 86_400)) }

    func storeNowMs(_ b: TestBridge) throws -> Int64 { Int64((StandIn.now.timeIntervalSince1970 * 1000).rounded()) }

    /// Scripted while the month still runs (then the clock passes its end):
    /// StoreKit reports the grace period, which lasts until 16 days after
    /// the end (the stand-in's month is 30 days).
    func graceBegins(_ b: TestBridge) throws {
        let graceEnd = StandIn.now.addingTimeInterval(46 * 86_400)
        StandIn.setRenewal(group: StandInSubscription.vipGroup,
                           StandIn.Renewal(state: .inGracePeriod, expirationReason: .billingError, isInBillingRetry: true,
                                           gracePeriodExpirationDate: graceEnd))
        try advance(days: 32, b)
    }

    func graceEnds(_ b: TestBridge) throws {
        try advance(days: 17, b)
        StandIn.setRenewal(group: StandInSubscription.vipGroup,
                           StandIn.Renewal(state: .inBillingRetryPeriod, expirationReason: .billingError, isInBillingRetry: true))
    }

    func retryEnds(_ b: TestBridge) throws {
        try advance(days: 61, b)
        StandIn.setRenewal(group: StandInSubscription.vipGroup,
                           StandIn.Renewal(state: .expired, willAutoRenew: false, expirationReason: .billingError))
    }

    func transactionIDs(_ b: TestBridge) throws -> [String] { StandIn.ledger.map { String($0.id) } }
}
#endif
