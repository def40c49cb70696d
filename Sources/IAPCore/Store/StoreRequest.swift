/// What a game asks of the store beyond buying and restoring (issue 13):
/// subscription status, the app transaction, the system sheets and the
/// StoreKit messages the game deferred. Each is answered by one message
/// (docs/PROTOCOL.md): `"subscription"`, `"app"`, `"sheet"`, `"storeMessage"`.
public enum StoreRequest: Sendable, Equatable {
    /// The status of the subscription groups of these products; empty: every
    /// group the player has ever subscribed in. Answered by `.subscriptions`.
    case subscriptionStatus(productIDs: [String])
    /// The app's own transaction (original app version and purchase date).
    /// Answered by `.appTransaction`.
    case appTransaction
    /// A system sheet. Answered by `.sheet` once the player closed it.
    case sheet(StoreSheet)
    /// Shows every StoreKit message the store holds (announced by
    /// `.storeMessage`, not shown yet); each answers `.storeMessageShown`.
    case showMessages
}

/// The system sheets a game can open.
public enum StoreSheet: Sendable, Equatable {
    /// The App Store's subscription management (cancel, change plan).
    case manageSubscriptions
    /// The same, showing one subscription group only (StoreKit's
    /// `showManageSubscriptions(in:subscriptionGroupID:)`, iOS 17).
    case manageSubscriptionGroup(groupID: String)
    /// A refund request for one transaction (StoreKit's beginRefundRequest).
    case refund(transactionID: String)
    /// The offer code redemption sheet; a redeemed code's purchase arrives
    /// as a store-initiated `"7"`.
    case offerCode

    /// The `"sheet"` message's name for it.
    public var name: String {
        switch self {
        case .manageSubscriptions, .manageSubscriptionGroup: return "manageSubscriptions"
        case .refund: return "refund"
        case .offerCode: return "offerCode"
        }
    }
}

/// One subscription group's status (StoreKit's `Product.SubscriptionInfo.Status`
/// with its `RenewalInfo`).
public struct SubscriptionGroupStatus: Sendable, Equatable {
    public var groupID: String
    /// `subscribed`, `expired`, `inBillingRetryPeriod`, `inGracePeriod`,
    /// `revoked`, or `none` (the player never subscribed in the group).
    public var state: String
    /// The product of the latest transaction in the group ("" for `none`).
    public var productID: String
    public var transactionID: String
    public var originalTransactionID: String
    public var expiresDateMs: Int64?
    public var willAutoRenew: Bool
    /// Why the period ended or will end unrenewed: `autoRenewDisabled`,
    /// `billingError` (also in grace and billing retry, while Apple still
    /// tries, as StoreKit reports it), `didNotConsentToPriceIncrease`,
    /// `productUnavailable`, `unknown`; nil while subscribed and renewing.
    public var expirationReason: String?
    /// End of the billing grace period while in one.
    public var gracePeriodExpiresDateMs: Int64?
    /// When the next renewal is due, while it will renew.
    public var renewalDateMs: Int64?
    /// The product the next renewal buys (a downgrade takes effect then).
    public var renewalProductID: String?
    /// What the next renewal will cost (decimal string), where known.
    public var renewalPrice: String?
    public var currency: String
    /// `noIncreasePending`, `pending` (the player has not consented yet) or `agreed`.
    public var priceIncreaseStatus: String
    /// False when the store's signature over the status did not verify: the
    /// game must not trust `state` then.
    public var verified: Bool

    public init(groupID: String, state: String, productID: String = "", transactionID: String = "",
                originalTransactionID: String = "", expiresDateMs: Int64? = nil, willAutoRenew: Bool = false,
                expirationReason: String? = nil, gracePeriodExpiresDateMs: Int64? = nil, renewalDateMs: Int64? = nil,
                renewalProductID: String? = nil, renewalPrice: String? = nil, currency: String = "",
                priceIncreaseStatus: String = "noIncreasePending", verified: Bool = true) {
        self.groupID = groupID
        self.state = state
        self.productID = productID
        self.transactionID = transactionID
        self.originalTransactionID = originalTransactionID
        self.expiresDateMs = expiresDateMs
        self.willAutoRenew = willAutoRenew
        self.expirationReason = expirationReason
        self.gracePeriodExpiresDateMs = gracePeriodExpiresDateMs
        self.renewalDateMs = renewalDateMs
        self.renewalProductID = renewalProductID
        self.renewalPrice = renewalPrice
        self.currency = currency
        self.priceIncreaseStatus = priceIncreaseStatus
        self.verified = verified
    }

    /// Whether the player should have the subscription's content now: while
    /// subscribed or in a billing grace period (Apple keeps access then).
    public var grantsAccess: Bool { verified && (state == "subscribed" || state == "inGracePeriod") }
}

/// The app's own transaction (StoreKit's `AppTransaction`): when and in
/// which version the player first got the game. Games that went from paid to
/// free grant early buyers what they paid for.
public struct AppTransactionInfo: Sendable, Equatable {
    public var originalAppVersion: String
    public var originalPurchaseDateMs: Int64
    public var appVersion: String
    public var environment: String
    public var verified: Bool
    /// The App Store account's stable identifier for this app (StoreKit's
    /// `appTransactionID`): the same on every device and after a reinstall,
    /// so a game without a server can key a cloud save to the player.
    public var appTransactionID: String
    /// Where the player first got the game: "iOS", "macOS", "tvOS", "visionOS".
    public var originalPlatform: String
    /// When the player pre-ordered the game, if they did (ms).
    public var preorderDateMs: Int64?

    public init(originalAppVersion: String, originalPurchaseDateMs: Int64, appVersion: String, environment: String,
                verified: Bool = true, appTransactionID: String = "", originalPlatform: String = "iOS",
                preorderDateMs: Int64? = nil) {
        self.originalAppVersion = originalAppVersion
        self.originalPurchaseDateMs = originalPurchaseDateMs
        self.appVersion = appVersion
        self.environment = environment
        self.verified = verified
        self.appTransactionID = appTransactionID
        self.originalPlatform = originalPlatform
        self.preorderDateMs = preorderDateMs
    }
}
