#if canImport(StoreKit)
import StoreKit
#else
import StoreKitStandIn
#endif
import Foundation
import IAPCore

/// The offers of StoreKit's transactions and products, store-neutral.
/// Availability as the iPhoneOS 26.2 interface declares it (docs/APPLE.md).
extension StoreKitMapping {
    /// The offer a transaction used: iOS 17.2+ `Transaction.offer` (its
    /// `period` from 18.4; before that `offerPeriodStringRepresentation`,
    /// back-deployed); below 17.2 the deprecated `offerType`, `offerID` and
    /// `offerPaymentModeStringRepresentation`.
    static func offer(of t: Transaction) -> TransactionOffer? {
        if #available(iOS 17.2, macOS 14.2, tvOS 17.2, *), OSCheck.atLeast(17, 2) {
            guard let o = t.offer, let kind = offerKind(o.type) else { return nil }
            var period: String? = nil
            if #available(iOS 18.4, macOS 15.4, tvOS 18.4, *), OSCheck.atLeast(18, 4) {
                period = o.period.map(Self.period)
            } else {
                period = t.offerPeriodStringRepresentation
            }
            return TransactionOffer(kind: kind, id: o.id, paymentMode: o.paymentMode.flatMap { paymentMode($0.rawValue) },
                                    period: period)
        }
        guard let type = t.offerType, let kind = offerKind(type) else { return nil }
        return TransactionOffer(kind: kind, id: t.offerID,
                                paymentMode: t.offerPaymentModeStringRepresentation.flatMap(paymentMode),
                                period: t.offerPeriodStringRepresentation)
    }

    /// nil for a type newer than this SDK (no offer is better than a wrong one).
    static func offerKind(_ t: Transaction.OfferType) -> TransactionOffer.Kind? {
        if t == .introductory { return .introductory }
        if t == .promotional { return .promotional }
        if t == .code { return .code }
        if t == .winBack { return .winBack }
        return nil
    }

    /// StoreKit's payment mode raw values ("FREE_TRIAL", "PAY_AS_YOU_GO",
    /// "PAY_UP_FRONT", "ONE_TIME": the SDK spells `oneTime`'s, 26.2:1121-1124).
    static func paymentMode(_ raw: String) -> TransactionOffer.PaymentMode? {
        switch raw.uppercased() {
        case "FREE_TRIAL": return .freeTrial
        case "PAY_AS_YOU_GO": return .payAsYouGo
        case "PAY_UP_FRONT": return .payUpFront
        case "ONE_TIME": return .oneTime
        default: return nil
        }
    }

    /// The win-back offers of `product` this player may take now (iOS 18):
    /// the product's `winBackOffers` whose IDs the group's renewal info lists
    /// in `eligibleWinBackOfferIDs`. Empty below iOS 18, without offers, or
    /// when the status cannot be read.
    static func eligibleWinBackOffers(_ product: Product) async -> [JSONValue] {
        guard #available(iOS 18.0, macOS 15.0, tvOS 18.0, *), OSCheck.atLeast(18, 0),
              let sub = product.subscription, !sub.winBackOffers.isEmpty,
              let statuses = try? await sub.status else { return [] }
        var eligible = Set<String>()
        for s in statuses {
            // An unverified renewal info is not the App Store's word.
            if case .verified(let info) = s.renewalInfo { eligible.formUnion(info.eligibleWinBackOfferIDs) }
        }
        return sub.winBackOffers.filter { $0.id.map(eligible.contains) ?? false }.map(promotedOffer)
    }

    /// The product's win-back offer with this ID (iOS 18), if it has one.
    static func winBackOffer(_ product: Product, id: String) -> Product.SubscriptionOffer? {
        guard #available(iOS 18.0, macOS 15.0, tvOS 18.0, *), OSCheck.atLeast(18, 0) else { return nil }
        return product.subscription?.winBackOffers.first { $0.id == id }
    }
}
