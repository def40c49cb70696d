#if !canImport(StoreKit)  // the module is empty where StoreKit exists (StandIn.swift)
import Foundation

// The offer a transaction used, mirrored from the iPhoneOS 26.2 interface
// ("26.2:N" is line N of StoreKit's arm64e-apple-ios.swiftinterface).

@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, *)
extension Transaction {
    /// 26.2:1090-1101. Raw values: the stand-in's, except `winBack` (4, as
    /// its back-deployed body says).
    public struct OfferType: RawRepresentable, Equatable, Hashable, Sendable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        public static let introductory = OfferType(rawValue: 1)
        public static let promotional = OfferType(rawValue: 2)
        public static let code = OfferType(rawValue: 3)
        /// 26.2:1096-1099: back-deployed to iOS 15.
        public static var winBack: OfferType { OfferType(rawValue: 4) }
    }

    /// 26.2:1112-1137 (iOS 17.2).
    @available(iOS 17.2, macOS 14.2, tvOS 17.2, watchOS 10.2, *)
    public struct Offer: Equatable, Hashable, Sendable {
        /// 26.2:1114-1125. Raw values as the SDK's back-deployed `oneTime`
        /// spells its own ("ONE_TIME").
        public struct PaymentMode: RawRepresentable, Equatable, Hashable, Sendable {
            public let rawValue: String
            public init(rawValue: String) { self.rawValue = rawValue }
            public static let freeTrial = PaymentMode(rawValue: "FREE_TRIAL")
            public static let payAsYouGo = PaymentMode(rawValue: "PAY_AS_YOU_GO")
            public static let payUpFront = PaymentMode(rawValue: "PAY_UP_FRONT")
            /// 26.2:1121-1124: back-deployed before iOS 26.
            public static var oneTime: PaymentMode { PaymentMode(rawValue: "ONE_TIME") }
        }
        public let id: String?
        public let type: OfferType
        public let paymentMode: PaymentMode?
        /// 26.2:1130-1131 (iOS 18.4). Stored for every version here; the
        /// availability is what the backend must respect.
        @available(iOS 18.4, macOS 15.4, tvOS 18.4, watchOS 11.4, *)
        public var period: Product.SubscriptionPeriod? { storedPeriod }
        let storedPeriod: Product.SubscriptionPeriod?
    }

    /// 26.2:1154-1155 (iOS 17.2).
    @available(iOS 17.2, macOS 14.2, tvOS 17.2, watchOS 10.2, *)
    public var offer: Offer? {
        offerRaw.map { Offer(id: $0.id, type: $0.type, paymentMode: Offer.PaymentMode(rawValue: $0.mode), storedPeriod: $0.period) }
    }

    /// 26.2:1157-1164: deprecated from 17.2 for `offer.type`.
    @available(iOS, introduced: 15.0, deprecated: 17.2, renamed: "offer.type", message: "Use the offer property instead.")
    @available(macOS, introduced: 12.0, deprecated: 14.2, renamed: "offer.type", message: "Use the offer property instead.")
    @available(tvOS, introduced: 15.0, deprecated: 17.2, renamed: "offer.type", message: "Use the offer property instead.")
    public var offerType: OfferType? { offerRaw?.type }

    /// 26.2:1167-1174: deprecated from 17.2 for `offer.id`.
    @available(iOS, introduced: 15.0, deprecated: 17.2, renamed: "offer.id", message: "Use the offer property instead.")
    @available(macOS, introduced: 12.0, deprecated: 14.2, renamed: "offer.id", message: "Use the offer property instead.")
    @available(tvOS, introduced: 15.0, deprecated: 17.2, renamed: "offer.id", message: "Use the offer property instead.")
    public var offerID: String? { offerRaw?.id }

    /// 26.2:1177-1197: back-deployed, deprecated from 17.2.
    @available(iOS, introduced: 15.0, deprecated: 17.2, renamed: "offer.paymentMode.rawValue", message: "Use the offer property instead.")
    @available(macOS, introduced: 12.0, deprecated: 14.2, renamed: "offer.paymentMode.rawValue", message: "Use the offer property instead.")
    @available(tvOS, introduced: 15.0, deprecated: 17.2, renamed: "offer.paymentMode.rawValue", message: "Use the offer property instead.")
    public var offerPaymentModeStringRepresentation: String? { offerRaw?.mode }

    /// 26.2:1199-1213: back-deployed, deprecated from 18.4 (ISO 8601 text).
    @available(iOS, introduced: 15.0, deprecated: 18.4, message: "Use the offer property instead.")
    @available(macOS, introduced: 12.0, deprecated: 15.4, message: "Use the offer property instead.")
    @available(tvOS, introduced: 15.0, deprecated: 18.4, message: "Use the offer property instead.")
    public var offerPeriodStringRepresentation: String? {
        offerRaw?.period.map { p in
            let unit: String
            switch p.unit {
            case .day: unit = "D"
            case .week: unit = "W"
            case .month: unit = "M"
            case .year: unit = "Y"
            }
            return "P\(p.value)\(unit)"
        }
    }
}

/// The stand-in's storage behind `Transaction.offer` (no availability, so a
/// transaction can hold it on every version).
struct StandInTransactionOffer: Equatable, Hashable, Sendable {
    var id: String?
    var type: Transaction.OfferType
    var mode: String
    var period: Product.SubscriptionPeriod?

    /// What StoreKit records for a purchase made with `offer`.
    init(_ offer: Product.SubscriptionOffer) {
        id = offer.id
        type = offer.type == .introductory ? .introductory : offer.type == .promotional ? .promotional : .winBack
        if offer.paymentMode == .freeTrial { mode = "FREE_TRIAL" }
        else if offer.paymentMode == .payAsYouGo { mode = "PAY_AS_YOU_GO" }
        else { mode = "PAY_UP_FRONT" }
        period = offer.period
    }
}
#endif
