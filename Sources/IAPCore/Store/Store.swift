/// The contract every store backend implements: the simulated App Store
/// (IAPSimulator) and StoreKit 2 (IAPStoreKit).
///
/// Threading: the coordinator calls every method except
/// `validatePurchase` on its bridge's SDK thread, one at a time, never on the
/// game's thread (C10). A store may call its sink from any thread; the sink
/// only queues the event for the SDK thread. Store methods may write their
/// own state to disk but must not wait for the player or the network: the
/// answer comes later through the sink.
public protocol Store: AnyObject, Sendable {
    /// "simulator" or "storekit".
    var name: String { get }

    /// Gives the store its bridge's executor for work it must do later (a
    /// purchase's delay, a renewal timer): a store starts no thread or timer
    /// of its own. Called once, before `start`. Default: nothing.
    func attach(scheduler: StoreScheduler)

    /// Checks, from memory only and on the game's thread, that a purchase of
    /// `quantity` units of this product can be started: throws
    /// `.unknownProduct` when the store knows at once that the ID is not
    /// sold, `.invalidArgument` when it knows the product cannot be bought by
    /// the unit (not a consumable) and `quantity` is not 1. Default: accepts
    /// everything (the answer then comes as a "7" failure).
    func validatePurchase(productID: String, quantity: Int) throws(IAPError)

    /// Begins listening. The store reports, through `sink`, every unfinished
    /// transaction (as StoreKit re-delivers them after launch), then the
    /// list of unfinished IDs (`.unfinished`), then the current entitlements
    /// with reason "open". Called once, after `attach` and `prepareStart`
    /// and before any other method.
    func start(sink: @escaping @Sendable (StoreEvent) -> Void)

    /// Work `start` will need, done ahead: the bridge calls it on its SDK
    /// thread while the game's thread reads the outbox, so that the open's
    /// two reads overlap. Reports nothing (the events wait for `start`) and
    /// may not be called at all: `start` then does the work itself.
    /// Default: nothing.
    func prepareStart()

    /// Asks for product information; answered by `.products`.
    func requestProducts(_ ids: [String])

    /// Starts a purchase of `quantity` units (1 for anything but a
    /// consumable; 1...10). `token` travels with the transaction (StoreKit's
    /// `appAccountToken`) so the key survives a crash. The outcome arrives as
    /// `.transaction(_, .purchase(key))`, `.purchaseFailed` or `.pending`.
    /// Throws what `validatePurchase` throws.
    func purchase(productID: String, key: Int64, token: PurchaseToken, quantity: Int) throws(IAPError)

    /// Starts a purchase of one unit with a win-back offer (StoreKit's
    /// `.winBackOffer(_:)` purchase option, iOS 18), as `purchase` does
    /// otherwise. An offer the player may not take (unknown, not eligible)
    /// answers a `.purchaseFailed`, as StoreKit's `ineligibleForOffer` does.
    /// Default: throws `.notSupported`.
    func purchase(productID: String, key: Int64, token: PurchaseToken, winBackOfferID: String) throws(IAPError)

    /// Finishes a transaction: the game has confirmed it. Idempotent. When
    /// the store has really finished it, it may report `.finished`.
    func finish(transactionID: String)

    /// Finishes several at once (a group commit's worth). The default calls
    /// `finish(transactionID:)` for each; a store that can batch its own
    /// bookkeeping does better.
    func finish(transactionIDs: [String])

    /// Restore: sync with the store, then report unfinished transactions and
    /// entitlements with reason "restore" (or `.error` with op "restore").
    func restore()

    /// Reports the current entitlements with the given reason.
    func refreshEntitlements(reason: UpdateReason)

    /// Checks, from memory only and on the game's thread, that this store can
    /// answer `request` here: throws `.notSupported` when the store or the
    /// running OS lacks the feature (a StoreKit API newer than the device),
    /// `.invalidArgument` when an argument can never be valid.
    func validate(_ request: StoreRequest) throws(IAPError)

    /// Answers `request` later through the sink: `.subscriptions`,
    /// `.appTransaction`, `.sheet`, and for `.showMessages` one
    /// `.storeMessageShown` per message it held.
    func perform(_ request: StoreRequest)

    /// Drives a simulated store; other stores throw `.notSupported`.
    func simulate(_ command: JSONValue) throws(IAPError) -> JSONValue

    /// The bridge is closing: report nothing more. Called first by the
    /// close, before its last commit and `stop`, so that an answer arriving
    /// meanwhile is not handed to a bridge that can no longer take it: a
    /// store that can keeps a purchase answered from now on for the next
    /// bridge of the process (StoreKit: LatePurchases). `finish` still
    /// works. Default: nothing.
    func stopReporting()

    /// Stops listening and ends every task the store started; no sink call
    /// starts after this returns (and one that does anyway is ignored).
    func stop()
}

extension Store {
    public func attach(scheduler: StoreScheduler) {}
    public func stopReporting() {}
    public func prepareStart() {}
    public func validatePurchase(productID: String, quantity: Int) throws(IAPError) {}

    public func purchase(productID: String, key: Int64, token: PurchaseToken, winBackOfferID: String) throws(IAPError) {
        throw IAPError(.notSupported, "the \(name) store does not sell with win-back offers")
    }

    public func finish(transactionIDs: [String]) {
        for id in transactionIDs { finish(transactionID: id) }
    }
}

/// How a transaction reached the SDK.
public enum Arrival: Sendable, Equatable {
    /// The answer to `purchase(productID:key:token:quantity:)` for this key.
    case purchase(key: Int64)
    /// The store's update stream, the launch re-delivery or a restore.
    case update
}

/// What a store reports.
public enum StoreEvent: Sendable {
    case transaction(StoreTransaction, Arrival)
    case purchaseFailed(key: Int64, productID: String, failure: PurchaseFailure)
    case pending(key: Int64, productID: String, reason: PendingReason)
    case products(ProductsAnswer)
    /// IDs of every transaction the store still lists as unfinished (C4:
    /// tombstones for transactions not in this list can go).
    case unfinished([String])
    /// These transactions are finished: the store will not list them as
    /// unfinished again (the coordinator bounds how many of their tombstones
    /// a session keeps, so memory stays flat).
    case finished([String])
    /// The current entitlements. `nowMs`: the clock the store judged them
    /// by (the simulator's own clock, which `advance` moves); nil for the
    /// device clock (StoreKit).
    case entitlements([StoreTransaction], reason: UpdateReason, nowMs: Int64? = nil)
    case error(op: String, message: String)
    /// The player tapped a promoted in-app purchase on the App Store page
    /// (StoreKit's PurchaseIntent); the game decides whether to buy it.
    /// `offer`: the win-back offer shown with it, if any.
    case promoted(productID: String, offer: JSONValue?)
    /// Whether this player may pay (parental controls: StoreKit's
    /// `AppStore.canMakePayments`) and the App Store country (ISO 3166
    /// alpha-3, "" when unknown): at start (reason "open") and on change.
    case status(canMakePayments: Bool, storefront: String, reason: UpdateReason)
    /// Subscription groups' status: at start (reason "open", the groups the
    /// player ever subscribed in), on request ("request") and when one
    /// changes ("change"). `invalid`: requested product IDs that are unknown
    /// or not auto-renewable subscriptions.
    case subscriptions([SubscriptionGroupStatus], invalid: [String], reason: UpdateReason)
    /// The answer to `.appTransaction`: the info, or why there is none.
    case appTransaction(AppTransactionInfo?, error: String?)
    /// A sheet closed: `outcome` is `dismissed`, `success`, `userCancelled`
    /// or `error` (with `message`).
    case sheet(StoreSheet, outcome: String, message: String?)
    /// StoreKit has a message for the player (`billingIssue`,
    /// `priceIncreaseConsent`, `winBackOffer`, `generic`). The store holds it
    /// until `perform(.showMessages)`; the coordinator asks at once or
    /// when the game says it is a good moment, as configured.
    case storeMessage(id: String, reason: String)
    /// The answer to `perform(.showMessages)` for one message: `shown` false
    /// when the store could not display it now (no scene in front); it then
    /// stays held. A message is reported shown once: the store then drops it.
    case storeMessageShown(id: String, reason: String, shown: Bool)
}

public enum ProductKind: String, Sendable, CaseIterable {
    case consumable
    case nonConsumable
    case nonRenewingSubscription
    case autoRenewableSubscription

    /// `rawValue` as written into a message, with no `String` made
    /// (`VocabularyTests` checks the two agree).
    public var jsonName: StaticString {
        switch self {
        case .consumable: return "consumable"
        case .nonConsumable: return "nonConsumable"
        case .nonRenewingSubscription: return "nonRenewingSubscription"
        case .autoRenewableSubscription: return "autoRenewableSubscription"
        }
    }
}

/// A transaction as every store describes it.
///
/// A value, kept behind one reference (copy-on-write): a transaction has a
/// dozen strings and optionals, so a plain struct cost a retain and a
/// release of each at every copy, about 1,000 instructions, and a result
/// copies its transaction several times on its way from the store to the
/// game (the event, the held record's facts, the message); a copy is now
/// one retain. A change (`t.verified = false`) copies the fields first when
/// another value shares them.
public struct StoreTransaction: Sendable, Equatable {
    /// The fields. Mutated only through `unique()`, so never while another
    /// value (on any thread) holds the same box: safe to send. For the same
    /// reason no two accesses to `v` can overlap, and Swift's run-time
    /// exclusivity check (at every field read) is off.
    final class Box: @unchecked Sendable {
        @exclusivity(unchecked) var v: Values
        init(_ v: Values) { self.v = v }
    }

    struct Values: Equatable, Sendable {
        var id: String
        var originalID: String
        var productID: String
        var kind: ProductKind
        var purchaseDateMs: Int64
        var expiresDateMs: Int64?
        var revocationDateMs: Int64?
        var revocationReason: String?
        var price: String
        var currency: String
        var quantity: Int64
        var token: PurchaseToken?
        var verified: Bool
        var jws: String?
        var environment: String
        var isUpgraded: Bool
        var isRenewal: Bool
        var alreadyOwned: Bool
        var familyShared: Bool
        var storefront: String?
        var offer: TransactionOffer?
    }

    private var box: Box

    private mutating func unique() -> Box {
        if !isKnownUniquelyReferenced(&box) { box = Box(box.v) }
        return box
    }

    public var id: String { get { box.v.id } set { unique().v.id = newValue } }
    public var originalID: String { get { box.v.originalID } set { unique().v.originalID = newValue } }
    public var productID: String { get { box.v.productID } set { unique().v.productID = newValue } }
    public var kind: ProductKind { get { box.v.kind } set { unique().v.kind = newValue } }
    public var purchaseDateMs: Int64 { get { box.v.purchaseDateMs } set { unique().v.purchaseDateMs = newValue } }
    public var expiresDateMs: Int64? { get { box.v.expiresDateMs } set { unique().v.expiresDateMs = newValue } }
    public var revocationDateMs: Int64? { get { box.v.revocationDateMs } set { unique().v.revocationDateMs = newValue } }
    public var revocationReason: String? { get { box.v.revocationReason } set { unique().v.revocationReason = newValue } }
    /// Decimal string, e.g. "0.99" (as the store displays it, no currency sign).
    public var price: String { get { box.v.price } set { unique().v.price = newValue } }
    public var currency: String { get { box.v.currency } set { unique().v.currency = newValue } }
    public var quantity: Int64 { get { box.v.quantity } set { unique().v.quantity = newValue } }
    public var token: PurchaseToken? { get { box.v.token } set { unique().v.token = newValue } }
    /// False when the store's signature check failed (C6).
    public var verified: Bool { get { box.v.verified } set { unique().v.verified = newValue } }
    /// The signed JWS, where the store has one (StoreKit).
    public var jws: String? { get { box.v.jws } set { unique().v.jws = newValue } }
    /// "simulator", "xcode", "sandbox", "production".
    public var environment: String { get { box.v.environment } set { unique().v.environment = newValue } }
    /// True when a higher subscription in its group replaced it.
    public var isUpgraded: Bool { get { box.v.isUpgraded } set { unique().v.isUpgraded = newValue } }
    /// A subscription renewal: the store made it, not a click, even though it
    /// may carry the original purchase's token.
    public var isRenewal: Bool { get { box.v.isRenewal } set { unique().v.isRenewal = newValue } }
    /// The answer to a purchase of something already owned: no new charge.
    public var alreadyOwned: Bool { get { box.v.alreadyOwned } set { unique().v.alreadyOwned = newValue } }
    /// Bought by a family member and shared with this player (Family
    /// Sharing, StoreKit's `ownershipType` `.familyShared`).
    public var familyShared: Bool { get { box.v.familyShared } set { unique().v.familyShared = newValue } }
    /// The App Store country the purchase was made in (ISO 3166 alpha-3,
    /// e.g. "USA"); nil when the store did not say.
    public var storefront: String? { get { box.v.storefront } set { unique().v.storefront = newValue } }
    /// The offer this transaction used (a free trial, a win-back offer...);
    /// nil at the regular price or when the store did not say.
    public var offer: TransactionOffer? { get { box.v.offer } set { unique().v.offer = newValue } }
    /// An earlier transaction of the same subscription group carries the same
    /// purchase token: this one continues a subscription whose token an
    /// earlier purchase set, and is not the purchase of the click the token
    /// names. StoreKit keeps a subscription's `appAccountToken` for its
    /// later transactions, so a change made outside the game (an upgrade or
    /// re-subscription in the App Store's settings, an offer code) carries
    /// the token of the click that started the subscription. The store
    /// works it out from its history when it reports the transaction; not
    /// stored with records (a record's key was decided when it was stored),
    /// and not part of `==`.
    public var inheritsToken = false
    /// `familyShared` as the messages' `ownershipType` (StoreKit's names).
    public var ownershipType: String { familyShared ? "familyShared" : "purchased" }

    public init(id: String, originalID: String, productID: String, kind: ProductKind, purchaseDateMs: Int64,
                expiresDateMs: Int64? = nil, revocationDateMs: Int64? = nil, revocationReason: String? = nil,
                price: String, currency: String, quantity: Int64 = 1, token: PurchaseToken? = nil,
                verified: Bool = true, jws: String? = nil, environment: String, isUpgraded: Bool = false,
                isRenewal: Bool = false, alreadyOwned: Bool = false, familyShared: Bool = false, storefront: String? = nil,
                offer: TransactionOffer? = nil, inheritsToken: Bool = false) {
        box = Box(Values(
            id: id,
            originalID: originalID,
            productID: productID,
            kind: kind,
            purchaseDateMs: purchaseDateMs,
            expiresDateMs: expiresDateMs,
            revocationDateMs: revocationDateMs,
            revocationReason: revocationReason,
            price: price,
            currency: currency,
            quantity: quantity,
            token: token,
            verified: verified,
            jws: jws,
            environment: environment,
            isUpgraded: isUpgraded,
            isRenewal: isRenewal,
            alreadyOwned: alreadyOwned,
            familyShared: familyShared,
            storefront: storefront,
            offer: offer))
        self.inheritsToken = inheritsToken
    }

    public static func == (a: StoreTransaction, b: StoreTransaction) -> Bool {
        a.box === b.box || a.box.v == b.box.v
    }
}

/// Why a purchase did not produce a transaction. Each maps to one `"7"`
/// result code (docs/PROTOCOL.md).
public enum PurchaseFailure: String, Sendable, CaseIterable {
    case cancelled
    case declined
    case networkError
    case notAllowed
    case productUnavailable
    case interrupted
    case unknown

    /// The `"result"` code of the `"7"` message.
    public var resultCode: String { resultText.code.description }

    /// The `"7"`'s `result` and `resultName` (`rawValue`), with no `String`
    /// made (`VocabularyTests` checks the name is `rawValue`).
    public var resultText: (code: StaticString, name: StaticString) {
        switch self {
        case .cancelled: return ("1", "cancelled")
        case .declined: return ("2", "declined")
        case .networkError: return ("3", "networkError")
        case .notAllowed: return ("4", "notAllowed")
        case .productUnavailable: return ("5", "productUnavailable")
        case .interrupted: return ("7", "interrupted")
        case .unknown: return ("8", "unknown")
        }
    }
}

/// One product as the store describes it.
public struct ProductInfo: Sendable, Equatable {
    public var id: String
    public var title: String
    public var description: String
    /// Decimal string, e.g. "4.99".
    public var price: String
    /// Localized, e.g. "$4.99".
    public var displayPrice: String
    public var currency: String
    public var kind: ProductKind
    /// ISO 8601 period ("P1M") for auto-renewable subscriptions.
    public var subscriptionPeriod: String?
    public var subscriptionGroupID: String?
    /// `{"paymentMode","period","periods","price"}` when there is one.
    public var introductoryOffer: JSONValue?
    /// Whether this player may still take the introductory offer (never
    /// subscribed in the group); nil without an offer.
    public var introOfferEligible: Bool?
    /// Family Sharing: a purchase also entitles the player's family
    /// (StoreKit's `isFamilyShareable`; the `.storekit` file's `familyShareable`).
    public var familyShareable: Bool
    /// The win-back offers this player may take now (StoreKit's
    /// `winBackOffers` filtered by the renewal info's
    /// `eligibleWinBackOfferIDs`, iOS 18): each
    /// `{"id","paymentMode","period","periods","price"}`; buy with one through
    /// `iap_buy_offer`. Empty for anything but an auto-renewable subscription.
    public var winBackOffers: [JSONValue]

    public init(id: String, title: String, description: String, price: String, displayPrice: String, currency: String,
                kind: ProductKind, subscriptionPeriod: String? = nil, subscriptionGroupID: String? = nil,
                introductoryOffer: JSONValue? = nil, introOfferEligible: Bool? = nil, familyShareable: Bool = false,
                winBackOffers: [JSONValue] = []) {
        self.id = id
        self.title = title
        self.description = description
        self.price = price
        self.displayPrice = displayPrice
        self.currency = currency
        self.kind = kind
        self.subscriptionPeriod = subscriptionPeriod
        self.subscriptionGroupID = subscriptionGroupID
        self.introductoryOffer = introductoryOffer
        self.introOfferEligible = introOfferEligible
        self.familyShareable = familyShareable
        self.winBackOffers = winBackOffers
    }
}

public struct ProductsAnswer: Sendable {
    public var products: [ProductInfo]
    public var invalid: [String]
    /// Set when the request failed as a whole (network); products are then empty.
    public var error: String?
    public init(products: [ProductInfo], invalid: [String], error: String? = nil) {
        self.products = products
        self.invalid = invalid
        self.error = error
    }
}

extension PurchaseFailure {
    /// What the game's `"7"` says of it (`message`), and what a player
    /// charged anyway can expect.
    public var text: String {
        switch self {
        case .cancelled: return "the player cancelled the purchase"
        case .declined: return "a parent declined the purchase (Ask to Buy)"
        case .networkError: return "the store could not be reached; if the player was charged anyway, the purchase arrives later as a \"7\" under this same key, once this one is confirmed: grant it then"
        case .notAllowed: return "purchases are not allowed on this device or account"
        case .productUnavailable: return "the product is not available in this storefront"
        case .interrupted: return "the payment was interrupted; if the player completes it, its result follows"
        case .unknown: return "the store reported an error; if the player was charged anyway, the purchase arrives later as a \"7\" under this same key, once this one is confirmed: grant it then"
        }
    }
}
