import IAPCore

/// Everything the SDK tells the game, one case per message type of
/// docs/PROTOCOL.md. Only `.purchase` and `.revoked` wait for a confirm.
public enum IAPEvent: Sendable, Equatable {
    /// `"7"`: a purchase result. Grant it when `shouldGrant` and the key is
    /// not in your save, save, then `confirm(key:)` (every result, granted or not).
    case purchase(PurchaseResult)
    /// `"revoked"`: a refund; take the item back, save, then `confirm(key:)`.
    case revoked(Revocation)
    /// `"999"`: the answer to `requestProducts`.
    case products(ProductList)
    /// `"pending"`: a purchase waits (Ask to Buy, a bank's check); its
    /// result follows under the same key. Grant nothing yet.
    case pending(key: Int64, productID: String, reason: PendingReason)
    /// `"entitlements"`: what the player owns now. `reason` is `open`,
    /// `restore` (the restore finished: this is its answer) or `change`.
    case entitlements(Entitlements)
    /// `"subscription"`: the status of subscription groups.
    case subscriptions(SubscriptionReport)
    /// `"store"`: whether the player may pay, and the App Store country.
    case store(StoreStatus)
    /// `"error"`: an asynchronous operation failed.
    case error(AsyncError)
    /// `"unvouched"`: a stored result the store does not vouch for was dropped.
    case unvouched(key: Int64, productID: String, transactionID: String, reason: String)
    /// `"outbox_damaged"`: the outbox was damaged on disk; what was readable
    /// was recovered and is delivered again.
    case outboxDamaged(recovered: Int, skippedBytes: Int, copy: String?)
    /// `"promoted"`: the player tapped a product promoted on the App Store;
    /// buy it when the game is ready, or ignore it.
    case promoted(productID: String, offer: ProductOffer?)
    /// `"app"`: the app transaction, or why the store could not give it.
    case appTransaction(AppTransactionInfo?, error: String?)
    /// `"sheet"`: a system sheet closed.
    case sheet(name: String, outcome: String, transactionID: String?, message: String?)
    /// `"storeMessage"`: StoreKit has a message for the player; `state` is
    /// `shown` or `deferred`.
    case storeMessage(id: String, reason: String, state: String)
}

/// The `"7"` result codes.
public enum ResultCode: Int, Sendable, CaseIterable {
    case success = 0
    case cancelled = 1
    case declined = 2
    case networkError = 3
    case notAllowed = 4
    case productUnavailable = 5
    /// The store's signature check failed: never grant it.
    case unverified = 6
    case unknown = 8
}

public enum ProductKind: String, Sendable, CaseIterable {
    case consumable, nonConsumable, nonRenewingSubscription, autoRenewableSubscription
}

/// Whose click a result answers: `game` (a click of this install, under the
/// key `buy` returned) or `store` (renewals, purchases made elsewhere).
/// The core's own type, so the two cannot drift apart.
public typealias Origin = PurchaseOrigin
/// Why a purchase waits: `askToBuy`, `interrupted` or `actionRequired`.
public typealias PendingReason = IAPCore.PendingReason
/// Why entitlements, store status or subscriptions were reported: `open`,
/// `change`, `restore` or `request`.
public typealias UpdateReason = IAPCore.UpdateReason

/// A store transaction's facts. Dates are milliseconds since 1970 (UTC).
public struct PurchaseTransaction: Sendable, Equatable {
    public let id: String
    public let originalID: String
    public let productID: String
    public let kind: ProductKind
    public let purchaseDate: Int64
    public let expiresDate: Int64?
    /// Decimal text as paid, e.g. "0.99", for all `quantity` units.
    public let price: String
    public let currency: String
    public let quantity: Int
    /// `simulator`, or StoreKit's `production`, `sandbox`, `xcode`.
    public let environment: String
    public let familyShared: Bool
    /// ISO 3166 alpha-3, when the store said.
    public let storefront: String?
    public let isUpgraded: Bool
    /// StoreKit only: the signed transaction, for a server.
    public let jws: String?
    /// The offer the purchase used (a free trial, a win-back offer); nil
    /// at the regular price.
    public let offer: UsedOffer?
}

/// The offer a transaction used (the `"offer"` of docs/PROTOCOL.md).
public struct UsedOffer: Sendable, Equatable {
    /// `introductory`, `promotional`, `code` or `winBack`.
    public let type: String
    /// The offer's ID; nil for an introductory offer.
    public let id: String?
    /// `freeTrial`, `payAsYouGo`, `payUpFront`, `oneTime`; nil when unknown.
    public let paymentMode: String?
    /// One offer period, ISO 8601; nil when unknown.
    public let period: String?
}

/// One `"7"`.
public struct PurchaseResult: Sendable, Equatable {
    public let key: Int64
    public let productID: String
    public let result: ResultCode
    /// Units to grant (0 on failures).
    public let quantity: Int
    /// Nil on failures: no transaction exists.
    public let transaction: PurchaseTransaction?
    public let origin: Origin
    public let alreadyOwned: Bool
    /// The click this answers, when that click's key already had its result.
    public let clickKey: Int64?
    /// A sentence for logs, on failures and unverified results.
    public let message: String?

    /// True for a success: grant it once per key.
    public var shouldGrant: Bool { result == .success }
}

/// One `"revoked"`.
public struct Revocation: Sendable, Equatable {
    public let key: Int64
    public let productID: String
    public let transactionID: String
    public let originalTransactionID: String
    public let kind: ProductKind
    public let revocationDate: Int64
    public let reason: String
    public let quantity: Int
    public let origin: Origin
}

/// An introductory or promotional offer.
public struct ProductOffer: Sendable, Equatable {
    public let id: String?
    public let type: String?
    /// `free`, `payAsYouGo`, `payUpFront`.
    public let paymentMode: String
    /// ISO 8601 duration of one period.
    public let period: String
    public let periods: Int
    public let price: String
}

public struct ProductInfo: Sendable, Equatable {
    public let id: String
    public let title: String
    public let description: String
    public let price: String
    public let displayPrice: String
    public let currency: String
    public let kind: ProductKind
    public let subscriptionPeriod: String?
    public let subscriptionGroupID: String?
    public let introductoryOffer: ProductOffer?
    public let introOfferEligible: Bool?
    public let familyShareable: Bool
    /// The win-back offers this player may take now (iOS 18+): buy one with
    /// `buy(productID:winBackOfferID:)`.
    public let winBackOffers: [ProductOffer]
}

public struct ProductList: Sendable, Equatable {
    public let products: [ProductInfo]
    /// IDs the store does not know.
    public let invalid: [String]
    /// Set when the store could not answer.
    public let error: String?
}

public struct Entitlements: Sendable, Equatable {
    public let reason: UpdateReason
    /// The store's clock the list was judged by.
    public let now: Int64
    public let items: [PurchaseTransaction]

    public func owns(_ productID: String) -> Bool { items.contains { $0.productID == productID } }
}

public struct SubscriptionGroup: Sendable, Equatable {
    public let groupID: String
    public let state: String
    /// The player has access now.
    public let active: Bool
    public let productID: String
    public let transactionID: String
    public let originalTransactionID: String
    public let expiresDate: Int64?
    public let willAutoRenew: Bool
    public let expirationReason: String?
    public let gracePeriodExpiresDate: Int64?
    public let renewalDate: Int64?
    public let renewalProductID: String?
    public let renewalPrice: String?
    public let currency: String
    public let priceIncreaseStatus: String
    public let verified: Bool
}

public struct SubscriptionReport: Sendable, Equatable {
    public let reason: UpdateReason
    public let groups: [SubscriptionGroup]
    public let invalid: [String]
}

public struct StoreStatus: Sendable, Equatable {
    public let reason: UpdateReason
    public let canMakePayments: Bool
    public let storefront: String
}

public struct AsyncError: Sendable, Equatable {
    /// What failed: `products`, `restore`, `buy`, `confirm`, `outbox`, ...
    public let op: String
    public let code: IAPKitError.Code
    public let message: String
    /// Set when the error is about one purchase.
    public let key: Int64?
    public let productID: String?
}

public struct AppTransactionInfo: Sendable, Equatable {
    public let originalAppVersion: String
    public let originalPurchaseDate: Int64
    public let appVersion: String
    public let environment: String
    public let verified: Bool
    public let appTransactionID: String
    public let originalPlatform: String
    public let preorderDate: Int64?
}
