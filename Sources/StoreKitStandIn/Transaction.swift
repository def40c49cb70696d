#if !canImport(StoreKit)  // the module is empty where StoreKit exists (StandIn.swift)
import Foundation

// StoreKit's Transaction, mirrored from the iPhoneOS16.2 SDK interface
// ("16.2:N" is line N; see VerificationResult.swift) and, for `reason`, the
// iPhoneOS17.0 one. Only the members the backend uses are declared. The SDK
// type has no public initializer; neither has this one (tests make
// transactions through StandIn), so the backend cannot build one either.

/// 16.2:486-487 (Identifiable), Equatable 16.2:567-570, Hashable 16.2:571-577,
/// Sendable 16.2:677-679.
@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, *)
public struct Transaction: Identifiable, Equatable, Hashable, Sendable {
    /// 16.2:488-494. Raw values are not in the interface; these are the stand-in's.
    public struct RevocationReason: RawRepresentable, Equatable, Hashable, Sendable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        public static let developerIssue = RevocationReason(rawValue: 1)
        public static let other = RevocationReason(rawValue: 0)
    }

    /// iPhoneOS17.0 interface, inside `public struct Transaction`:
    /// `@available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, *) public
    /// struct Reason : RawRepresentable, Equatable, Hashable, Sendable` with
    /// `purchase` and `renewal` (absent from 16.2). Raw values as the 17.0
    /// back-deployed `reasonStringRepresentation` reads them ("PURCHASE").
    @available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, *)
    public struct Reason: RawRepresentable, Equatable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public static let purchase = Reason(rawValue: "PURCHASE")
        public static let renewal = Reason(rawValue: "RENEWAL")
    }

    /// 16.2:515.
    public let id: UInt64
    /// 16.2:516.
    public let originalID: UInt64
    /// 16.2:518.
    public let productID: String
    /// 16.2:519.
    public let subscriptionGroupID: String?
    /// 16.2:521.
    public let purchaseDate: Date
    /// 16.2:522.
    public let originalPurchaseDate: Date
    /// 16.2:523.
    public let expirationDate: Date?
    /// 16.2:524.
    public let purchasedQuantity: Int
    /// 16.2:525.
    public let isUpgraded: Bool
    /// 16.2:528.
    public let revocationDate: Date?
    /// 16.2:529.
    public let revocationReason: RevocationReason?
    /// 16.2:530.
    public let productType: Product.ProductType
    /// 16.2:531: the UUID the app passed with `.appAccountToken`.
    public let appAccountToken: UUID?

    /// iOS 15: who owns it: this Apple ID, or a family member who shares it.
    public struct OwnershipType: RawRepresentable, Equatable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public static let purchased = OwnershipType(rawValue: "PURCHASED")
        public static let familyShared = OwnershipType(rawValue: "FAMILY_SHARED")
    }

    public var ownershipType: OwnershipType { familyShared ? .familyShared : .purchased }

    /// 16.2:532-533. A `let` in the SDK; a computed property here because a
    /// stored property cannot carry a narrower availability.
    @available(iOS 16.0, macOS 13.0, tvOS 16.0, watchOS 9.0, *)
    public var environment: AppStore.Environment { AppStore.Environment(rawValue: environmentRaw) }

    /// 16.2:534-557 (deprecated from iOS 16 in favour of `environment`).
    @available(iOS, introduced: 15.0, deprecated: 16.0, message: "Use the environment property instead")
    @available(macOS, introduced: 12.0, deprecated: 13.0, message: "Use the environment property instead")
    @available(tvOS, introduced: 15.0, deprecated: 16.0, message: "Use the environment property instead")
    @available(watchOS, introduced: 8.0, deprecated: 9.0, message: "Use the environment property instead")
    public var environmentStringRepresentation: String { environmentRaw }

    /// Back-deployed to iOS 15 (deprecated in 17 for `reason`): "PURCHASE"
    /// or "RENEWAL".
    @available(iOS, introduced: 15.0, deprecated: 17.0, message: "Use the reason property instead")
    @available(macOS, introduced: 12.0, deprecated: 14.0, message: "Use the reason property instead")
    @available(tvOS, introduced: 15.0, deprecated: 17.0, message: "Use the reason property instead")
    @available(watchOS, introduced: 8.0, deprecated: 10.0, message: "Use the reason property instead")
    public var reasonStringRepresentation: String { reasonRaw }

    /// What the player paid, offers included (iOS 15, back-deployed); nil when unknown.
    public var price: Decimal? { paidPrice }

    /// ISO 4217 code of `price` (iOS 15; deprecated in 16 for `currency`).
    @available(iOS, introduced: 15.0, deprecated: 16.0, message: "Use the currency property instead")
    @available(macOS, introduced: 12.0, deprecated: 13.0, message: "Use the currency property instead")
    @available(tvOS, introduced: 15.0, deprecated: 16.0, message: "Use the currency property instead")
    @available(watchOS, introduced: 8.0, deprecated: 9.0, message: "Use the currency property instead")
    public var currencyCode: String? { paidCurrency }

    /// The currency of `price` (iOS 16).
    @available(iOS 16.0, macOS 13.0, tvOS 16.0, watchOS 9.0, *)
    public var currency: Locale.Currency? { paidCurrency.map { Locale.Currency($0) } }

    /// iPhoneOS17.0 interface: `@available(iOS 17.0, macOS 14.0, tvOS 17.0,
    /// watchOS 10.0, *) public let reason: StoreKit.Transaction.Reason`.
    @available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, *)
    public var reason: Reason { Reason(rawValue: reasonRaw) }

    /// 26.2:1269-1270 (iOS 17): the storefront of the purchase.
    @available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, *)
    public var storefront: Storefront { Storefront(countryCode: storefrontRaw, id: storefrontRaw) }
    /// 26.2:1269-1275: iOS 15, back-deployed before 17; deprecated on macOS
    /// 14, tvOS 17 and Mac Catalyst 17, not on iOS (the file declares no iOS
    /// deprecation).
    @available(macOS, introduced: 12.0, deprecated: 14.0, message: "Use the storefront property instead")
    @available(tvOS, introduced: 15.0, deprecated: 17.0, message: "Use the storefront property instead")
    public var storefrontCountryCode: String { storefrontRaw }

    /// 16.2:565.
    public typealias ID = UInt64

    // Stand-in storage behind the members above.
    let environmentRaw: String
    let reasonRaw: String
    /// What `VerificationResult.jwsRepresentation` returns for this transaction.
    let signedJWS: String
    /// Shared by a family member (`StandIn.familyShare`).
    var familyShared = false
    var paidPrice: Decimal? = nil
    var paidCurrency: String? = nil
    var storefrontRaw = "USA"
    /// The offer the purchase used (TransactionOffer.swift).
    var offerRaw: StandInTransactionOffer? = nil

    init(id: UInt64, originalID: UInt64, productID: String, subscriptionGroupID: String?, purchaseDate: Date,
         originalPurchaseDate: Date, expirationDate: Date?, purchasedQuantity: Int, isUpgraded: Bool,
         revocationDate: Date?, revocationReason: RevocationReason?, productType: Product.ProductType,
         appAccountToken: UUID?, environmentRaw: String, reasonRaw: String) {
        self.id = id
        self.originalID = originalID
        self.productID = productID
        self.subscriptionGroupID = subscriptionGroupID
        self.purchaseDate = purchaseDate
        self.originalPurchaseDate = originalPurchaseDate
        self.expirationDate = expirationDate
        self.purchasedQuantity = purchasedQuantity
        self.isUpgraded = isUpgraded
        self.revocationDate = revocationDate
        self.revocationReason = revocationReason
        self.productType = productType
        self.appAccountToken = appAccountToken
        self.environmentRaw = environmentRaw
        self.reasonRaw = reasonRaw
        self.signedJWS = StandInJWS.make(id: id, originalID: originalID, productID: productID,
                                         revoked: revocationDate != nil)
    }

    /// A copy with other revocation fields (a refund).
    func revoked(at date: Date, reason: RevocationReason) -> Transaction {
        var t = Transaction(id: id, originalID: originalID, productID: productID, subscriptionGroupID: subscriptionGroupID,
                    purchaseDate: purchaseDate, originalPurchaseDate: originalPurchaseDate,
                    expirationDate: expirationDate, purchasedQuantity: purchasedQuantity, isUpgraded: isUpgraded,
                    revocationDate: date, revocationReason: reason, productType: productType,
                    appAccountToken: appAccountToken, environmentRaw: environmentRaw, reasonRaw: reasonRaw)
        t.paidPrice = paidPrice
        t.paidCurrency = paidCurrency
        t.storefrontRaw = storefrontRaw
        t.familyShared = familyShared
        t.offerRaw = offerRaw
        return t
    }

    /// 16.2:562-564: tells the App Store the content was delivered. Scripted
    /// through `StandIn.finishHangs` (a `finish()` that never returns).
    public func finish() async {
        await World.shared.finish(id)
    }
}

@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, *)
extension Transaction {
    /// 16.2:586-599, Sendable 16.2:689-693. The element is the verification
    /// result; iteration never throws.
    public struct Transactions: AsyncSequence, Sendable {
        public typealias Element = VerificationResult<Transaction>

        public struct AsyncIterator: AsyncIteratorProtocol {
            var base: AsyncStream<VerificationResult<Transaction>>.Iterator
            public mutating func next() async -> VerificationResult<Transaction>? { await base.next() }
        }

        let stream: AsyncStream<VerificationResult<Transaction>>
        public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: stream.makeAsyncIterator()) }
    }

    /// 16.2:605-609: non-consumables, active subscriptions, non-renewing
    /// subscriptions; never consumables, never revoked. Finite.
    public static var currentEntitlements: Transactions { World.shared.snapshot(\.currentEntitlements) }

    /// 16.2:610-612: the transaction that entitles the player to the
    /// product now, if any. Deprecated from iOS 18.4 (26.2:1428-1433).
    @available(iOS, introduced: 15.0, deprecated: 18.4, message: "Use the currentEntitlements(for:) method instead.")
    @available(macOS, introduced: 12.0, deprecated: 15.4, message: "Use the currentEntitlements(for:) method instead.")
    @available(tvOS, introduced: 15.0, deprecated: 18.4, message: "Use the currentEntitlements(for:) method instead.")
    public static func currentEntitlement(for productID: String) async -> VerificationResult<Transaction>? {
        World.shared.locked { World.shared.entitlementLookups.append("currentEntitlement(for:)") }
        return World.shared.currentEntitlements.first { $0.unsafePayloadValue.productID == productID }
    }

    /// 26.2:1451-1452 (iOS 18.4): every transaction that entitles the player
    /// to the product now (the player's own and a family member's).
    @available(iOS 18.4, macOS 15.4, tvOS 18.4, watchOS 11.4, *)
    public static func currentEntitlements(for productID: String) -> Transactions {
        World.shared.locked { World.shared.entitlementLookups.append("currentEntitlements(for:)") }
        let items = World.shared.currentEntitlements.filter { $0.unsafePayloadValue.productID == productID }
        return Transactions(stream: AsyncStream { c in
            for r in items { c.yield(r) }
            c.finish()
        })
    }

    /// 16.2 (Transaction): every transaction of the player, refunded
    /// consumables included (finished consumables are absent unless
    /// refunded, without SKIncludeConsumableInAppPurchaseHistory). Finite.
    public static var all: Transactions { World.shared.snapshot(\.all) }

    /// 16.2:616-620: every transaction not finished yet. Finite.
    public static var unfinished: Transactions { World.shared.snapshot(\.unfinished) }

    /// 16.2:622-628: never ends. The first sequence made after a (scripted)
    /// launch starts with every unfinished transaction, as StoreKit re-delivers
    /// them once right after launch.
    public static var updates: Transactions { World.shared.subscribeUpdates() }
}
#endif
