#if !canImport(StoreKit)  // the module is empty where StoreKit exists (StandIn.swift)
import Foundation

// StoreKit's Product, mirrored from the iPhoneOS16.2 SDK interface ("16.2:N"
// is line N; see VerificationResult.swift). Only the members the backend uses
// are declared. No public initializer, as in the SDK: tests make products
// through `StandIn.product(...)`.

/// 16.2:762-790 (Identifiable), Equatable 16.2:791-796, Hashable 16.2:797-805,
/// Sendable 16.2:863-865.
@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, *)
public struct Product: Identifiable, Equatable, Hashable, Sendable {
    /// 16.2:764-772, Sendable 16.2:866-868. Raw values are not in the
    /// interface; these are the stand-in's (the backend compares with the
    /// static members only).
    public struct ProductType: RawRepresentable, Equatable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public static let consumable = ProductType(rawValue: "Consumable")
        public static let nonConsumable = ProductType(rawValue: "Non-Consumable")
        public static let nonRenewable = ProductType(rawValue: "Non-Renewable")
        public static let autoRenewable = ProductType(rawValue: "Auto-Renewable")
    }

    /// 16.2:778.
    public let id: String
    /// 16.2:779.
    public let type: ProductType
    /// 16.2:780.
    public let displayName: String
    /// 16.2:781.
    public let description: String
    /// 16.2:782.
    public let price: Decimal
    /// 16.2:783.
    public let displayPrice: String
    /// 16.2:784.
    public let isFamilyShareable: Bool
    /// 16.2:785.
    public let subscription: SubscriptionInfo?
    /// 16.2:789.
    public typealias ID = String

    // Stand-in storage behind `priceFormatStyle`.
    let currencyCode: String
    let localeIdentifier: String

    init(id: String, type: ProductType, displayName: String, description: String, price: Decimal,
         displayPrice: String, isFamilyShareable: Bool, subscription: SubscriptionInfo?, currencyCode: String,
         localeIdentifier: String) {
        self.id = id
        self.type = type
        self.displayName = displayName
        self.description = description
        self.price = price
        self.displayPrice = displayPrice
        self.isFamilyShareable = isFamilyShareable
        self.subscription = subscription
        self.currencyCode = currencyCode
        self.localeIdentifier = localeIdentifier
    }

    /// 16.2:892-908 (back-deployed to iOS 15): where the currency code comes from.
    public var priceFormatStyle: Decimal.FormatStyle.Currency {
        Decimal.FormatStyle.Currency(code: currencyCode, locale: Locale(identifier: localeIdentifier))
    }
}

@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, *)
extension Product {
    /// 16.2:733-755. Not Sendable in 16.2 (17.0 adds it), so neither here.
    public struct PurchaseOption: Equatable, Hashable {
        enum Kind: Hashable, Sendable {
            case appAccountToken(UUID)
            case quantity(Int)
            case winBackOffer(String?)
        }
        let kind: Kind

        /// 16.2:736.
        public static func appAccountToken(_ token: UUID) -> PurchaseOption { PurchaseOption(kind: .appAccountToken(token)) }

        /// 16.2:738: units of a consumable.
        public static func quantity(_ quantity: Int) -> PurchaseOption { PurchaseOption(kind: .quantity(quantity)) }

        /// iOS 18.0 (iPhoneOS18.1 interface, `Product.PurchaseOption`): buys
        /// with this win-back offer (from a `PurchaseIntent`, for instance).
        @available(iOS 18.0, macOS 15.0, tvOS 18.0, watchOS 11.0, *)
        public static func winBackOffer(_ offer: Product.SubscriptionOffer) -> PurchaseOption {
            PurchaseOption(kind: .winBackOffer(offer.id))
        }
    }

    /// 16.2:816-820. Not Sendable in 16.2 (17.0 adds it), so neither here:
    /// the backend must not send it across isolation domains.
    public enum PurchaseResult {
        case success(VerificationResult<Transaction>)
        case userCancelled
        case pending
    }

    /// 16.2:821-835, Equatable/Hashable 16.2:1514-1517.
    public enum PurchaseError: Error, Equatable, Hashable {
        case invalidQuantity
        case productUnavailable
        case purchaseNotAllowed
        case ineligibleForOffer
        case invalidOfferIdentifier
        case invalidOfferPrice
        case invalidOfferSignature
        case missingOfferParameters
    }

    /// 16.2:836-838. Scripted through `StandIn.nextPurchase(...)`. From iOS
    /// 18.2 (`StandIn.osVersion`), in a UIKit app, it throws
    /// `StandIn.ConfirmationSceneError` ("Could not get confirmation scene
    /// ID"): the sheet needs a scene or view controller.
    /// @MainActor as StoreKit declares it (26.2:1649).
    @MainActor
    public func purchase(options: Set<PurchaseOption> = []) async throws -> PurchaseResult {
        try await World.shared.purchase(self, options: options.map(\.kind), route: .plain)
    }

    /// iOS 17.0 (iPhoneOS17.0+ interface): the sheet shows in `scene`.
    @available(iOS 17.0, macCatalyst 17.0, *)
    @available(macOS, unavailable)
    @available(watchOS, unavailable)
    @MainActor
    public func purchase(confirmIn scene: some UIScene, options: Set<PurchaseOption> = []) async throws -> PurchaseResult {
        try await World.shared.purchase(self, options: options.map(\.kind), route: .scene)
    }

    /// iOS 18.2 (not in the iPhoneOS18.1 interface; Apple's documentation):
    /// the sheet shows near `viewController`.
    @available(iOS 18.2, macCatalyst 18.2, tvOS 18.2, *)
    @available(macOS, unavailable)
    @available(watchOS, unavailable)
    @MainActor
    public func purchase(confirmIn viewController: UIViewController,
                         options: Set<PurchaseOption> = []) async throws -> PurchaseResult {
        try await World.shared.purchase(self, options: options.map(\.kind), route: .viewController)
    }

    /// 16.2:840-845: the products the store sells among `identifiers`;
    /// unknown IDs are simply absent.
    public static func products<Identifiers>(for identifiers: Identifiers) async throws -> [Product]
    where Identifiers: Collection, Identifiers.Element == String {
        try World.shared.products(Array(identifiers))
    }
}
#endif
