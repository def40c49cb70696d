#if !canImport(StoreKit)  // the module is empty where StoreKit exists (StandIn.swift)
import Foundation

// Subscription descriptions of StoreKit's Product, mirrored from the
// iPhoneOS16.2 SDK interface ("16.2:N" is line N; see VerificationResult.swift).

@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, *)
extension Product {
    /// 16.2:24-46, Sendable 16.2:63-68.
    public struct SubscriptionPeriod: Equatable, Hashable, Sendable {
        public enum Unit: Equatable, Hashable, Sendable {
            case day
            case week
            case month
            case year
        }
        public let unit: Unit
        public let value: Int

        init(unit: Unit, value: Int) {
            self.unit = unit
            self.value = value
        }
    }

    /// 16.2:364-387, Sendable 16.2:388-390.
    public struct SubscriptionInfo: Equatable, Hashable, Sendable {
        public let introductoryOffer: SubscriptionOffer?
        public let promotionalOffers: [SubscriptionOffer]
        public let subscriptionGroupID: String
        public let subscriptionPeriod: SubscriptionPeriod
        /// 26.2:784-785 (iOS 18): the win-back offers configured for it.
        @available(iOS 18.0, macOS 15.0, tvOS 18.0, watchOS 11.0, *)
        public var winBackOffers: [SubscriptionOffer] { storedWinBackOffers }
        var storedWinBackOffers: [SubscriptionOffer] = []

        /// iOS 15: whether this player may still take the group's
        /// introductory offer (never subscribed in the group before).
        public var isEligibleForIntroOffer: Bool {
            get async { !World.shared.hasSubscribed(group: subscriptionGroupID) }
        }

        init(introductoryOffer: SubscriptionOffer?, subscriptionGroupID: String, subscriptionPeriod: SubscriptionPeriod) {
            self.introductoryOffer = introductoryOffer
            self.promotionalOffers = []
            self.subscriptionGroupID = subscriptionGroupID
            self.subscriptionPeriod = subscriptionPeriod
        }
    }

    /// 16.2:1395-1426, Sendable 16.2:1427-1435.
    public struct SubscriptionOffer: Equatable, Hashable, Sendable {
        public struct OfferType: RawRepresentable, Equatable, Hashable, Sendable {
            public let rawValue: String
            public init(rawValue: String) { self.rawValue = rawValue }
            public static let introductory = OfferType(rawValue: "introductory")
            public static let promotional = OfferType(rawValue: "promotional")
            /// iOS 18.0.
            @available(iOS 18.0, macOS 15.0, tvOS 18.0, watchOS 11.0, *)
            public static let winBack = OfferType(rawValue: "winBack")
        }
        public struct PaymentMode: RawRepresentable, Equatable, Hashable, Sendable {
            public let rawValue: String
            public init(rawValue: String) { self.rawValue = rawValue }
            public static let payAsYouGo = PaymentMode(rawValue: "payAsYouGo")
            public static let payUpFront = PaymentMode(rawValue: "payUpFront")
            public static let freeTrial = PaymentMode(rawValue: "freeTrial")
        }
        public let id: String?
        public let type: OfferType
        public let price: Decimal
        public let displayPrice: String
        public let period: SubscriptionPeriod
        public let periodCount: Int
        public let paymentMode: PaymentMode

        init(id: String? = nil, type: OfferType, price: Decimal, displayPrice: String, period: SubscriptionPeriod,
             periodCount: Int, paymentMode: PaymentMode) {
            self.id = id
            self.type = type
            self.price = price
            self.displayPrice = displayPrice
            self.period = period
            self.periodCount = periodCount
            self.paymentMode = paymentMode
        }
    }
}
#endif
