#if canImport(StoreKit)
import StoreKit
#else
import StoreKitStandIn
#endif
import Foundation
import IAPCore

/// StoreKit's subscription status and app transaction as IAPCore's values.
enum StoreKitStatusMapping {
    /// One group's `Product.SubscriptionInfo.Status`. `verified` only when
    /// both the transaction and the renewal info verify.
    static func status(_ s: Product.SubscriptionInfo.Status, groupID: String) -> SubscriptionGroupStatus {
        let t = s.transaction.unsafePayloadValue
        let r = s.renewalInfo.unsafePayloadValue
        var verified = false
        if case .verified = s.transaction, case .verified = s.renewalInfo { verified = true }
        var out = SubscriptionGroupStatus(groupID: groupID, state: state(s.state), productID: t.productID,
                                     transactionID: String(t.id), originalTransactionID: String(t.originalID),
                                     expiresDateMs: t.expirationDate.map(StoreKitMapping.ms),
                                     willAutoRenew: r.willAutoRenew, verified: verified)
        out.expirationReason = r.expirationReason.map(expirationReason)
        if out.expirationReason == nil && !r.willAutoRenew { out.expirationReason = "autoRenewDisabled" }
        out.gracePeriodExpiresDateMs = r.gracePeriodExpirationDate.map(StoreKitMapping.ms)
        if r.willAutoRenew {
            out.renewalDateMs = r.renewalDate.map(StoreKitMapping.ms)
            out.renewalProductID = r.autoRenewPreference ?? t.productID
            out.renewalPrice = r.renewalPrice.map(StoreKitMapping.decimal)
        }
        var currency: String? = nil
        if #available(iOS 16.0, macOS 13.0, tvOS 16.0, *), OSCheck.atLeast(16, 0) { currency = r.currency?.identifier }
        out.currency = currency ?? StoreKitMapping.paidCurrency(t, product: nil)
        switch r.priceIncreaseStatus {
        case .noIncreasePending: out.priceIncreaseStatus = "noIncreasePending"
        case .pending: out.priceIncreaseStatus = "pending"
        case .agreed: out.priceIncreaseStatus = "agreed"
        }
        return out
    }

    /// The best of a group's statuses (the player's own and a family
    /// member's): the one that grants the most.
    static func best(_ list: [Product.SubscriptionInfo.Status], groupID: String) -> SubscriptionGroupStatus {
        let mapped = list.map { status($0, groupID: groupID) }
        // One that grants access first (verified, subscribed or in grace),
        // then by state, then verified over not.
        let rank = ["subscribed": 0, "inGracePeriod": 1, "inBillingRetryPeriod": 2, "expired": 3, "revoked": 4]
        func key(_ s: SubscriptionGroupStatus) -> (Int, Int, Int) { (s.grantsAccess ? 0 : 1, rank[s.state] ?? 5, s.verified ? 0 : 1) }
        return mapped.min { key($0) < key($1) } ?? SubscriptionGroupStatus(groupID: groupID, state: "none")
    }

    /// `RenewalState` is a struct of static values (18.1:1445), not an enum.
    static func state(_ s: Product.SubscriptionInfo.RenewalState) -> String {
        if s == .subscribed { return "subscribed" }
        if s == .expired { return "expired" }
        if s == .inBillingRetryPeriod { return "inBillingRetryPeriod" }
        if s == .inGracePeriod { return "inGracePeriod" }
        if s == .revoked { return "revoked" }
        return "expired"
    }

    static func expirationReason(_ r: Product.SubscriptionInfo.RenewalInfo.ExpirationReason) -> String {
        if r == .autoRenewDisabled { return "autoRenewDisabled" }
        if r == .billingError { return "billingError" }
        if r == .didNotConsentToPriceIncrease { return "didNotConsentToPriceIncrease" }
        if r == .productUnavailable { return "productUnavailable" }
        return "unknown"
    }

    @available(iOS 16.0, macOS 13.0, tvOS 16.0, *)
    static func app(_ result: VerificationResult<AppTransaction>) -> AppTransactionInfo {
        let a = result.unsafePayloadValue
        var verified = false
        if case .verified = result { verified = true }
        // originalPlatform from iOS 18.4; below it the string form, which
        // 18.4 deprecates (26.2:975-982). appTransactionID is back-deployed
        // to iOS 16 (26.2:952-954).
        let platform: String
        if #available(iOS 18.4, macOS 15.4, tvOS 18.4, *), OSCheck.atLeast(18, 4) {
            platform = a.originalPlatform.rawValue
        } else {
            platform = a.originalPlatformStringRepresentation
        }
        return AppTransactionInfo(originalAppVersion: a.originalAppVersion,
                                  originalPurchaseDateMs: StoreKitMapping.ms(a.originalPurchaseDate),
                                  appVersion: a.appVersion, environment: a.environment.rawValue.lowercased(), verified: verified,
                                  appTransactionID: a.appTransactionID, originalPlatform: platform,
                                  preorderDateMs: a.preorderDate.map(StoreKitMapping.ms))
    }
}
