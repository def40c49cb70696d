#if canImport(StoreKit)
import StoreKit
#else
import StoreKitStandIn
#endif
import Foundation
import IAPCore

/// StoreKit values into the SDK's store-neutral ones. Pure functions.
///
/// Matching uses `if case` and `==` rather than exhaustive switches: StoreKit's
/// enums are not frozen (Apple adds cases), while the stand-in's are, and a
/// switch cannot be warning-free against both.
enum StoreKitMapping {
    // MARK: Errors

    /// Every error a purchase can throw, as the same `PurchaseFailure` the
    /// simulator reports for the same situation (docs/PROTOCOL.md result codes).
    static func failure(for error: any Error) -> PurchaseFailure {
        if let e = error as? StoreKitError {
            if case .userCancelled = e { return .cancelled }
            if case .networkError = e { return .networkError }
            if case .notAvailableInStorefront = e { return .productUnavailable }
            if #available(iOS 15.4, macOS 12.3, tvOS 15.4, *), case .notEntitled = e { return .notAllowed }
            // iOS 18.4: the device or OS does not support what was asked
            // (26.2:2386-2387): the player cannot buy it here, as "4" says.
            if #available(iOS 18.4, macOS 15.4, tvOS 18.4, *), case .unsupported = e { return .notAllowed }
            return .unknown  // .unknown, .systemError, and cases newer than this SDK
        }
        if let e = error as? Product.PurchaseError {
            if e == .productUnavailable { return .productUnavailable }
            if e == .purchaseNotAllowed { return .notAllowed }
            // The offer is no longer this player's (a win-back offer taken or
            // expired): the product cannot be bought on those terms.
            if e == .ineligibleForOffer { return .productUnavailable }
            return .unknown  // invalidQuantity and the promotional-offer errors
        }
        if error is URLError { return .networkError }
        return .unknown
    }

    static func describe(_ error: any Error) -> String {
        if let l = error as? LocalizedError, let d = l.errorDescription { return d }
        return String(describing: error)
    }

    // MARK: Products

    static func kind(_ t: Product.ProductType) -> ProductKind {
        if t == .consumable { return .consumable }
        if t == .nonConsumable { return .nonConsumable }
        if t == .nonRenewable { return .nonRenewingSubscription }
        if t == .autoRenewable { return .autoRenewableSubscription }
        return .consumable  // a type newer than this SDK: never reported as owned
    }

    /// "0.99": `Decimal`'s description is locale-independent.
    static func decimal(_ d: Decimal) -> String { "\(d)" }

    /// ISO 8601, as in `.storekit` files: "P1W", "P3M", "P1Y".
    static func period(_ p: Product.SubscriptionPeriod) -> String {
        let unit: String
        if p.unit == .day { unit = "D" } else if p.unit == .week { unit = "W" } else if p.unit == .month { unit = "M" } else { unit = "Y" }
        return "P\(p.value)\(unit)"
    }

    /// `{"paymentMode","period","periods","price"}`, the simulator's shape
    /// (paymentMode as in `.storekit` files: free, payAsYouGo, payUpFront).
    static func offer(_ o: Product.SubscriptionOffer) -> JSONValue {
        let mode: String
        if o.paymentMode == .freeTrial { mode = "free" }
        else if o.paymentMode == .payAsYouGo { mode = "payAsYouGo" }
        else if o.paymentMode == .payUpFront { mode = "payUpFront" }
        else { mode = o.paymentMode.rawValue }
        return .object(["paymentMode": .string(mode), "period": .string(period(o.period)),
                        "periods": .number(String(o.periodCount)), "price": .string(decimal(o.price))])
    }

    static func currency(_ p: Product) -> String { p.priceFormatStyle.currencyCode }

    static func product(_ p: Product) -> ProductInfo {
        let k = kind(p.type)
        let sub = k == .autoRenewableSubscription ? p.subscription : nil
        return ProductInfo(id: p.id, title: p.displayName, description: p.description, price: decimal(p.price),
                           displayPrice: p.displayPrice, currency: currency(p), kind: k,
                           subscriptionPeriod: sub.map { period($0.subscriptionPeriod) },
                           subscriptionGroupID: sub?.subscriptionGroupID,
                           introductoryOffer: sub?.introductoryOffer.map(offer), familyShareable: p.isFamilyShareable)
    }

    // MARK: Transactions

    static func ms(_ d: Date) -> Int64 { Int64((d.timeIntervalSince1970 * 1000).rounded()) }

    /// "production", "sandbox" or "xcode".
    static func environment(_ t: Transaction) -> String {
        if #available(iOS 16.0, macOS 13.0, tvOS 16.0, *) { return t.environment.rawValue.lowercased() }
        return t.environmentStringRepresentation.lowercased()
    }

    /// A renewal is made by the store, not by a click, even though it carries
    /// the first purchase's `appAccountToken`. iOS 17+: `reason`; before,
    /// `reasonStringRepresentation` (back-deployed to iOS 15). Not
    /// `id != originalID`: a re-subscription or an upgrade continues the
    /// chain too, and is the game's click.
    static func isRenewal(_ t: Transaction) -> Bool {
        if #available(iOS 17.0, macOS 14.0, tvOS 17.0, *), OSCheck.atLeast(17, 0) { return t.reason == .renewal }
        return isRenewal(reasonString: t.reasonStringRepresentation)
    }

    static func isRenewal(reasonString: String) -> Bool { reasonString.uppercased() == "RENEWAL" }

    /// What was paid (`Transaction.price`, offers included, the total for
    /// the quantity), else the list price times the quantity.
    static func paidPrice(_ t: Transaction, product: Product?) -> String {
        if let p = t.price { return decimal(p) }
        return product.map { decimal($0.price * Decimal(t.purchasedQuantity)) } ?? ""
    }

    static func paidCurrency(_ t: Transaction, product: Product?) -> String {
        var code: String? = nil
        if #available(iOS 16.0, macOS 13.0, tvOS 16.0, *), OSCheck.atLeast(16, 0) {
            code = t.currency?.identifier
        } else {
            code = t.currencyCode
        }
        if let code, !code.isEmpty { return code }
        return product.map(currency) ?? ""
    }

    /// `{"id","type","paymentMode","period","periods","price"}` of a promoted
    /// purchase's offer.
    static func promotedOffer(_ o: Product.SubscriptionOffer) -> JSONValue {
        guard case .object(var fields) = offer(o) else { return .null }
        fields["id"] = o.id.map(JSONValue.string) ?? .null
        fields["type"] = .string(o.type.rawValue)
        return .object(fields)
    }

    static func revocationReason(_ r: Transaction.RevocationReason?) -> String {
        guard let r else { return "revoked" }
        return r == .developerIssue ? "developerIssue" : "refunded"
    }

    /// The store-neutral transaction. Price and currency are what was paid
    /// (`Transaction.price`/`currency`); `product` (from a products request)
    /// supplies the list price where the transaction has none.
    static func transaction(_ t: Transaction, verified: Bool, jws: String?, product: Product?,
                            config: BridgeConfig) -> StoreTransaction {
        let k = kind(t.productType)
        var expires = t.expirationDate.map(ms)
        if k == .nonRenewingSubscription, expires == nil {
            // StoreKit gives non-renewing subscriptions no end; the game's term does.
            expires = config.nonRenewingTerm(t.productID).added(to: ms(t.purchaseDate))
        }
        return StoreTransaction(
            id: String(t.id), originalID: String(t.originalID), productID: t.productID, kind: k,
            purchaseDateMs: ms(t.purchaseDate), expiresDateMs: expires, revocationDateMs: t.revocationDate.map(ms),
            revocationReason: t.revocationDate == nil ? nil : revocationReason(t.revocationReason),
            price: paidPrice(t, product: product), currency: paidCurrency(t, product: product),
            quantity: Int64(t.purchasedQuantity),
            token: t.appAccountToken.flatMap { PurchaseToken(uuidString: $0.uuidString) },
            verified: verified, jws: jws, environment: environment(t), isUpgraded: t.isUpgraded,
            isRenewal: isRenewal(t), familyShared: t.ownershipType == .familyShared, storefront: storefront(t),
            offer: offer(of: t))
    }

    /// The storefront of the purchase: `storefront` from iOS 17, below it
    /// `storefrontCountryCode` (back-deployed; deprecated on macOS 14, tvOS
    /// 17 and Mac Catalyst 17, not on iOS: 26.2:1269-1275).
    static func storefront(_ t: Transaction) -> String {
        if #available(iOS 17.0, macOS 14.0, tvOS 17.0, *), OSCheck.atLeast(17, 0) { return t.storefront.countryCode }
        return t.storefrontCountryCode
    }
}
