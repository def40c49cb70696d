// Linux only: where StoreKit exists, this module is empty (the backend imports
// StoreKit itself), so that building every target on a Mac does not trip over
// declarations that are unavailable there.
#if !canImport(StoreKit)
import Foundation

/// StoreKitStandIn: test-only scaffolding that lets the StoreKit 2 backend
/// (Sources/IAPStoreKit) compile and run where StoreKit does not exist.
///
/// The other files of this module declare the StoreKit types and members the
/// backend uses, with the signatures and availability of Apple's interface
/// text (each declaration names the line it mirrors). This file is the part
/// StoreKit does not have: the controls tests use to play Apple's side
/// (what the next purchase does, parents approving, renewals, refunds,
/// re-delivery, a `finish()` that hangs) and to observe what the backend did.
/// The backend never uses `StandIn` (a test checks it).
public enum StandIn {
    /// What the next `purchase(options:)` does.
    public enum PurchaseOutcome: Sendable {
        /// Charges (or returns the owned transaction) and answers `.success(.verified)`.
        case success
        /// Charges and answers `.success(.unverified(_, error))`.
        case unverified(VerificationResult<Transaction>.VerificationError)
        case userCancelled
        /// Answers `.pending`; `approvePending()` later delivers the transaction.
        case pending
        /// Throws this error (a `StoreKitError`, a `Product.PurchaseError`, ...).
        case failure(any Error)
        /// Charges, puts the transaction into `Transaction.updates`, then (30 ms
        /// later) answers `.success` with it too. (The other order, answer
        /// first: a plain purchase, then `redeliver(id)`.)
        case deliveredTwice
        /// The payment sheet stays up (the call cannot be cancelled) until
        /// `closeHeldSheets()`; then charges and answers `.success`.
        case sheetHeld
    }

    /// Which purchase call the app made.
    public enum PurchaseRoute: String, Sendable {
        /// `purchase(options:)`.
        case plain
        /// `purchase(confirmIn: UIScene, options:)`, iOS 17+.
        case scene
        /// `purchase(confirmIn: UIViewController, options:)`, iOS 18.2+.
        case viewController
    }

    public struct PurchaseCall: Sendable, Equatable {
        public let productID: String
        public let appAccountToken: UUID?
        public let route: PurchaseRoute
        /// The ID of the win-back offer passed with `.winBackOffer`, if any.
        public let winBackOfferID: String?
        public init(productID: String, appAccountToken: UUID?, route: PurchaseRoute = .plain, winBackOfferID: String? = nil) {
            self.productID = productID
            self.appAccountToken = appAccountToken
            self.route = route
            self.winBackOfferID = winBackOfferID
        }
    }

    public struct PendingPurchase: Sendable, Equatable {
        public let productID: String
        public let appAccountToken: UUID?
    }

    public struct LedgerItem: Sendable, Equatable {
        public let id: UInt64
        public let originalID: UInt64
        public let productID: String
        public let finished: Bool
        public let verified: Bool
        public let revoked: Bool
        public let appAccountToken: UUID?
    }

    // MARK: Setting the stage

    /// The iOS version the app runs on: which StoreKit calls exist
    /// (`purchase(confirmIn:)` with a scene from 17.0, with a view controller
    /// from 18.2) and how the old call behaves (from 18.2, `purchase(options:)`
    /// in a UIKit app fails with "Could not get confirmation scene ID").
    /// Default: 18.2.
    public static var osVersion: (major: Int, minor: Int) {
        get { World.shared.locked { World.shared.osVersion } }
        set { World.shared.locked { World.shared.osVersion = newValue } }
    }

    /// What the app has on screen, for the purchase sheet.
    public enum Screen: Sendable {
        /// A foreground-active window scene whose key window has a root view controller.
        case foregroundWithKeyWindow
        /// A foreground-active window scene with no key window.
        case foregroundWithoutKeyWindow
        /// Only a background scene (the app is not in front).
        case backgroundOnly
        /// No scene at all.
        case noScene
    }

    /// Default: `.foregroundWithKeyWindow`.
    public static var screen: Screen {
        get { World.shared.locked { World.shared.screen } }
        set { World.shared.locked { World.shared.screen = newValue } }
    }

    /// A purchase call the scripted OS does not have (a crash on a device).
    public struct UnavailableCall: Error, CustomStringConvertible, Sendable {
        public let route: PurchaseRoute
        public var description: String { "purchase call \(route.rawValue) does not exist on this iOS" }
    }

    /// The error `purchase(options:)` throws on iOS 18.2+ in a UIKit app.
    public struct ConfirmationSceneError: Error, CustomStringConvertible, Sendable {
        public init() {}
        public var description: String { "Could not get confirmation scene ID" }
    }

    /// A new, empty App Store and a freshly launched app.
    public static func reset() { World.shared.reset() }

    /// `AppStore.canMakePayments` (parental controls).
    /// SKIncludeConsumableInAppPurchaseHistory in the app's Info.plist (iOS
    /// 18): finished consumables stay in `Transaction.all`, so a long-lived
    /// consumable game's history grows with every purchase.
    public static var includeConsumableHistory: Bool {
        get { World.shared.locked { World.shared.includeConsumableHistory } }
        set { World.shared.locked { World.shared.includeConsumableHistory = newValue } }
    }

    /// Whether `promote` while nobody listens to `PurchaseIntent.intents`
    /// keeps the intent for the first listener (default) or loses it, as
    /// when the app is running and only starts listening later.
    public static var intentsWaitForListener: Bool {
        get { World.shared.locked { World.shared.intentsWaitForListener } }
        set { World.shared.locked { World.shared.intentsWaitForListener = newValue } }
    }

    public static var canMakePayments: Bool {
        get { World.shared.locked { World.shared.canMakePayments } }
        set { World.shared.locked { World.shared.canMakePayments = newValue } }
    }

    /// The player's storefront now (nil: unknown). Setting it announces the
    /// change through `Storefront.updates`.
    public static var storefront: String? {
        get { World.shared.locked { World.shared.storefrontCountry } }
        set {
            if let c = newValue { World.shared.changeStorefront(c) } else { World.shared.locked { World.shared.storefrontCountry = nil } }
        }
    }

    /// The app is launched again (the App Store keeps its ledger). StoreKit
    /// re-delivers unfinished transactions once, right after launch, through
    /// `Transaction.updates`; `updatesRedeliver: false` plays an app whose
    /// listener started too late for that delivery.
    public static func relaunch(updatesRedeliver: Bool = true) { World.shared.relaunch(updatesRedeliver: updatesRedeliver) }

    /// A product as the App Store would describe it.
    public static func product(id: String, type: Product.ProductType, displayName: String, description: String,
                               price: Decimal, displayPrice: String, currencyCode: String,
                               localeIdentifier: String = "en_US", isFamilyShareable: Bool = false,
                               subscriptionGroupID: String? = nil,
                               period: Product.SubscriptionPeriod.Unit? = nil, periodValue: Int = 1,
                               introductoryOffer: (mode: Product.SubscriptionOffer.PaymentMode,
                                                   period: Product.SubscriptionPeriod.Unit, periodValue: Int,
                                                   count: Int, price: Decimal)? = nil,
                               winBackOffers: [(id: String, mode: Product.SubscriptionOffer.PaymentMode,
                                                period: Product.SubscriptionPeriod.Unit, periodValue: Int,
                                                count: Int, price: Decimal)] = []) -> Product {
        var subscription: Product.SubscriptionInfo? = nil
        if let g = subscriptionGroupID, let unit = period {
            let intro = introductoryOffer.map { o in
                Product.SubscriptionOffer(type: .introductory, price: o.price, displayPrice: "\(o.price)",
                                          period: Product.SubscriptionPeriod(unit: o.period, value: o.periodValue),
                                          periodCount: o.count, paymentMode: o.mode)
            }
            subscription = Product.SubscriptionInfo(introductoryOffer: intro, subscriptionGroupID: g,
                                                    subscriptionPeriod: Product.SubscriptionPeriod(unit: unit, value: periodValue))
            subscription?.storedWinBackOffers = winBackOffers.map { o in
                Product.SubscriptionOffer(id: o.id, type: .winBack, price: o.price, displayPrice: "\(o.price)",
                                          period: Product.SubscriptionPeriod(unit: o.period, value: o.periodValue),
                                          periodCount: o.count, paymentMode: o.mode)
            }
        }
        return Product(id: id, type: type, displayName: displayName, description: description, price: price,
                       displayPrice: displayPrice, isFamilyShareable: isFamilyShareable, subscription: subscription,
                       currencyCode: currencyCode, localeIdentifier: localeIdentifier)
    }

    /// Puts products on sale (`Product.products(for:)` returns them).
    public static func sell(_ products: [Product]) { World.shared.setProducts(products) }

    /// The next purchases do these, in order; after them, `.success`.
    public static func nextPurchases(_ outcomes: PurchaseOutcome...) { World.shared.script(outcomes) }

    /// `Product.products(for:)` throws this while set.
    public static var productsError: (any Error)? {
        get { World.shared.locked { World.shared.productsError } }
        set { World.shared.locked { World.shared.productsError = newValue } }
    }

    /// `AppStore.sync()` throws this while set.
    public static var syncError: (any Error)? {
        get { World.shared.locked { World.shared.syncError } }
        set { World.shared.locked { World.shared.syncError = newValue } }
    }

    /// While true, transactions charged carry no `price` (`Transaction.price`
    /// is optional: the SDK then reports the product's list price times the
    /// quantity).
    public static var omitPrices: Bool {
        get { World.shared.locked { World.shared.omitPrices } }
        set { World.shared.locked { World.shared.omitPrices = newValue } }
    }

    /// While true, `finish()` never returns (until `releaseHungFinishes`) and
    /// has no effect.
    public static var finishHangs: Bool {
        get { World.shared.locked { World.shared.finishHangs } }
        set { World.shared.locked { World.shared.finishHangs = newValue } }
    }

    /// The raw `AppStore.Environment` of transactions made from now on.
    public static var environment: String {
        get { World.shared.locked { World.shared.environment } }
        set { World.shared.locked { World.shared.environment = newValue } }
    }

    public static func releaseHungFinishes(takeEffect: Bool) { World.shared.releaseHungFinishes(takeEffect: takeEffect) }

    /// The player finishes every payment sheet `sheetHeld` kept up: each
    /// purchase is charged and answered.
    public static func closeHeldSheets() { World.shared.closeHeldSheets() }

    // MARK: Apple's side acting

    /// A parent approves the oldest pending purchase; returns its transaction ID.
    @discardableResult
    public static func approvePending() -> UInt64? { World.shared.approvePending() }

    /// A parent declines the oldest pending purchase: no transaction at all.
    public static func declinePending() { World.shared.declinePending() }

    /// A family member buys a shareable product: it reaches this player as a
    /// transaction with `ownershipType` `.familyShared`, through updates.
    @discardableResult
    public static func familyShare(_ productID: String) -> UInt64? {
        World.shared.charge(productID, token: nil, verified: true, finished: false, deliver: true, familyShared: true)
    }

    /// A purchase the app did not start (another device, promoted on the App
    /// Store), delivered through `Transaction.updates`.
    @discardableResult
    public static func externalPurchase(_ productID: String, verified: Bool = true,
                                        appAccountToken: UUID? = nil) -> UInt64? {
        World.shared.charge(productID, token: appAccountToken, verified: verified, finished: false, deliver: true)
    }

    /// A transaction already in the ledger, delivered nowhere: unfinished ones
    /// show up in `Transaction.unfinished`, owned ones in `currentEntitlements`.
    @discardableResult
    public static func seed(_ productID: String, appAccountToken: UUID? = nil, finished: Bool,
                            verified: Bool = true) -> UInt64? {
        World.shared.charge(productID, token: appAccountToken, verified: verified, finished: finished, deliver: false)
    }

    /// The subscription transaction `id` renews; returns the new transaction's ID.
    @discardableResult
    public static func renew(_ id: UInt64) -> UInt64? { World.shared.renew(id) }

    /// Refunds transaction `id`; running apps see it through `Transaction.updates`.
    public static func refund(_ id: UInt64, reason: Transaction.RevocationReason = .other) {
        World.shared.refund(id, reason: reason)
    }

    /// StoreKit delivers transaction `id` through `Transaction.updates` again.
    public static func redeliver(_ id: UInt64) { World.shared.deliver(id: id) }

    /// The player taps a purchase promoted on the App Store.
    /// With `winBackOfferID`, the intent carries that win-back offer (iOS 18).
    /// Promoted while nobody listens to `PurchaseIntent.intents`, the intent
    /// waits for the first listener (as StoreKit keeps the one that launched
    /// the app).
    public static func promote(_ productID: String, winBackOfferID: String? = nil) {
        World.shared.promote(productID, winBackOfferID: winBackOfferID)
    }

    /// Refunds transaction `id` while the app is closed: nothing is delivered.
    public static func refundWhileClosed(_ id: UInt64, reason: Transaction.RevocationReason = .other) {
        World.shared.refund(id, reason: reason, deliver: false)
    }

    /// Transaction `id` verifies from now on (a transient verification failure ends).
    public static func verify(_ id: UInt64) { World.shared.verify(id) }

    /// Moves the App Store's clock; groups whose status changed with it (a
    /// period that ended) are announced through `Status.updates`.
    public static func advanceClock(seconds: TimeInterval) { World.shared.advanceClock(seconds) }

    /// The App Store's clock: now, moved by `advanceClock`.
    public static var now: Date { World.shared.nowDate }

    // MARK: Observing

    public static var ledger: [LedgerItem] { World.shared.ledger }
    public static func isFinished(_ id: UInt64) -> Bool { ledger.first { $0.id == id }?.finished ?? false }
    public static var finishCalls: [UInt64] { World.shared.locked { World.shared.finishCalls } }
    public static var purchaseCalls: [PurchaseCall] { World.shared.locked { World.shared.purchaseCalls } }
    public static var productRequests: [[String]] { World.shared.locked { World.shared.productRequests } }
    public static var syncCount: Int { World.shared.locked { World.shared.syncCount } }
    /// The per-product entitlement calls the app made (see World.entitlementLookups).
    public static var entitlementLookups: [String] { World.shared.locked { World.shared.entitlementLookups } }
    public static var pendingPurchases: [PendingPurchase] { World.shared.pendingPurchases }
    /// `Transaction.updates` sequences currently listened to.
    public static var updateListeners: Int { World.shared.updateSubscriberCount }
    /// `PurchaseIntent.intents` sequences currently listened to.
    public static var intentListeners: Int { World.shared.intentSubscriberCount }
}

/// The iOS version the stand-in plays (`StandIn.osVersion`), for the
/// backend's run-time checks where `#available` is always true (Linux).
public enum SimulatedOS {
    public static func isAtLeast(_ major: Int, _ minor: Int) -> Bool { World.shared.isAtLeast(major, minor) }
}

/// A JWS-shaped string for each transaction (header.payload.signature,
/// base64url). The stand-in signs nothing: it only lets tests check that the
/// backend hands `jwsRepresentation` to the game.
enum StandInJWS {
    static func make(id: UInt64, originalID: UInt64, productID: String, revoked: Bool) -> String {
        let header = #"{"alg":"ES256","typ":"JWT","x5c":["stand-in"]}"#
        let payload = #"{"transactionId":"\#(id)","originalTransactionId":"\#(originalID)","productId":"\#(productID)","revoked":\#(revoked)}"#
        return [header, payload, "stand-in signature"].map(base64url).joined(separator: ".")
    }

    private static func base64url(_ s: String) -> String {
        Data(s.utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
#endif
