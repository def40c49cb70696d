#if !canImport(StoreKit)  // the module is empty where StoreKit exists (StandIn.swift)
import Foundation

// Subscription status and renewal info, mirrored from the iPhoneOS18.1 SDK
// interface (xybp888/iOS-SDKs, iPhoneOS18.1.sdk/.../StoreKit.swiftmodule/
// arm64e-apple-ios.swiftinterface; "18.1:N" is line N of that file). All
// iOS 15, status(for:) and Status.updates included (18.1:1443, 1674).
// Scripted through `StandIn.setRenewal` and `StandIn.statusError`.

@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, *)
extension Product.SubscriptionInfo {
    /// 18.1:1445-1455. A struct of static values, not an enum: a switch
    /// over it needs a default. Raw values are the stand-in's.
    public struct RenewalState: RawRepresentable, Equatable, Hashable, Sendable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        public static let subscribed = RenewalState(rawValue: 1)
        public static let expired = RenewalState(rawValue: 2)
        public static let inBillingRetryPeriod = RenewalState(rawValue: 3)
        public static let inGracePeriod = RenewalState(rawValue: 4)
        public static let revoked = RenewalState(rawValue: 5)
    }

    /// 18.1:1456-1490 and the computed members after it.
    public struct RenewalInfo: Equatable, Hashable, Sendable {
        /// 18.1:1457-1467.
        public struct ExpirationReason: RawRepresentable, Equatable, Hashable, Sendable {
            public let rawValue: Int
            public init(rawValue: Int) { self.rawValue = rawValue }
            public static let autoRenewDisabled = ExpirationReason(rawValue: 1)
            public static let billingError = ExpirationReason(rawValue: 2)
            public static let didNotConsentToPriceIncrease = ExpirationReason(rawValue: 3)
            public static let productUnavailable = ExpirationReason(rawValue: 4)
            public static let unknown = ExpirationReason(rawValue: 5)
        }
        /// 18.1:1468-1472 (`@frozen`).
        @frozen public enum PriceIncreaseStatus: Equatable, Hashable, Sendable {
            case noIncreasePending
            case pending
            case agreed
        }
        public let originalTransactionID: UInt64
        public let currentProductID: String
        /// 18.1:1485.
        public let willAutoRenew: Bool
        /// 18.1:1486: the product the next renewal buys.
        public let autoRenewPreference: String?
        /// 18.1:1487.
        public let expirationReason: ExpirationReason?
        /// 18.1:1488.
        public let priceIncreaseStatus: PriceIncreaseStatus
        /// 18.1:1489.
        public let isInBillingRetry: Bool
        /// 18.1:1490.
        public let gracePeriodExpirationDate: Date?
        /// 18.1:1576 (iOS 15, back-deployed before 17).
        public let renewalDate: Date?
        /// 18.1:1595 (iOS 15, back-deployed before 18).
        public let renewalPrice: Decimal?
        let currencyCode: String?
        /// 26.2:2237-2238 (iOS 18): the win-back offers this player may take
        /// now. Default: every win-back offer of the product while the
        /// group's subscription has expired, less those the player took.
        @available(iOS 18.0, macOS 15.0, tvOS 18.0, watchOS 11.0, *)
        public var eligibleWinBackOfferIDs: [String] { storedEligibleWinBack }
        var storedEligibleWinBack: [String] = []
        /// 18.1:1617 (iOS 16).
        @available(iOS 16.0, macOS 13.0, tvOS 16.0, watchOS 9.0, *)
        public var currency: Locale.Currency? { currencyCode.map { Locale.Currency($0) } }
    }

    /// 18.1:1657-1661.
    public struct Status: Sendable {
        public let state: RenewalState
        public let transaction: VerificationResult<Transaction>
        public let renewalInfo: VerificationResult<RenewalInfo>
    }

    /// 18.1:1667: the statuses of this product's group.
    public var status: [Status] {
        get async throws { try await Product.SubscriptionInfo.status(for: subscriptionGroupID) }
    }

    /// 18.1:1672: one status per subscription the player has in the group
    /// (their own and a family member's); empty when never subscribed.
    public static func status(for groupID: String) async throws -> [Status] {
        try World.shared.statuses(group: groupID)
    }
}

@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, *)
extension Product.SubscriptionInfo.Status {
    /// 18.1:1699: each status change from now on.
    public static var updates: Statuses { World.shared.subscribeStatuses() }

    /// 18.1:1675-1699 (a named AsyncSequence in StoreKit).
    public typealias Statuses = StandInSequence<Product.SubscriptionInfo.Status>
}

extension StandIn {
    /// How a group's renewal stands, as `setRenewal` scripts it. Without a
    /// script a group is `subscribed` while its latest transaction runs,
    /// `expired` after, `revoked` once refunded, and will renew unless
    /// `setAutoRenew` turned that off (renewals themselves: `renew`).
    public struct Renewal: Sendable {
        public var state: Product.SubscriptionInfo.RenewalState
        public var willAutoRenew: Bool
        public var expirationReason: Product.SubscriptionInfo.RenewalInfo.ExpirationReason?
        public var priceIncreaseStatus: Product.SubscriptionInfo.RenewalInfo.PriceIncreaseStatus
        public var isInBillingRetry: Bool
        public var gracePeriodExpirationDate: Date?
        public var renewalPrice: Decimal?
        /// False: the renewal info's signature does not verify.
        public var verified: Bool
        public init(state: Product.SubscriptionInfo.RenewalState, willAutoRenew: Bool = true,
                    expirationReason: Product.SubscriptionInfo.RenewalInfo.ExpirationReason? = nil,
                    priceIncreaseStatus: Product.SubscriptionInfo.RenewalInfo.PriceIncreaseStatus = .noIncreasePending,
                    isInBillingRetry: Bool = false, gracePeriodExpirationDate: Date? = nil, renewalPrice: Decimal? = nil,
                    verified: Bool = true) {
            self.state = state
            self.willAutoRenew = willAutoRenew
            self.expirationReason = expirationReason
            self.priceIncreaseStatus = priceIncreaseStatus
            self.isInBillingRetry = isInBillingRetry
            self.gracePeriodExpirationDate = gracePeriodExpirationDate
            self.renewalPrice = renewalPrice
            self.verified = verified
        }
    }

    /// Sets how the group's renewal stands and announces the new status
    /// through `Status.updates` (nil: back to the default).
    public static func setRenewal(group: String, _ renewal: Renewal?) { World.shared.setRenewal(group: group, renewal) }

    /// The player turns auto-renew of the group's running subscription on
    /// or off; announced through `Status.updates`. After the subscription
    /// expired it changes nothing (the player buys it again).
    public static func setAutoRenew(group: String, _ on: Bool) { World.shared.setAutoRenew(group: group, on) }

    /// `status(for:)` throws this while set.
    public static var statusError: (any Error)? {
        get { World.shared.locked { World.shared.extras.statusError } }
        set { World.shared.locked { World.shared.extras.statusError = newValue } }
    }
}

extension World {
    func statuses(group: String) throws -> [Product.SubscriptionInfo.Status] {
        try locked {
            if let e = extras.statusError { throw e }
            return statusLocked(group: group).map { [$0] } ?? []
        }
    }

    /// The group's status from its latest transaction and the scripted renewal.
    func statusLocked(group: String) -> Product.SubscriptionInfo.Status? {
        guard let latest = latestLocked(group: group) else { return nil }
        let t = latest.transaction
        let now = Date().addingTimeInterval(clockOffsetLocked)
        let script = extras.renewals[group]
        var state = Product.SubscriptionInfo.RenewalState.subscribed
        if t.revocationDate != nil { state = .revoked } else if let exp = t.expirationDate, exp <= now { state = .expired }
        let off = extras.autoRenewOff.contains(group)
        let r = script ?? StandIn.Renewal(state: state, willAutoRenew: state == .subscribed && !off,
                                          expirationReason: off ? .autoRenewDisabled : nil)
        let product = productLocked(t.productID)
        var info = Product.SubscriptionInfo.RenewalInfo(
            originalTransactionID: t.originalID, currentProductID: t.productID, willAutoRenew: r.willAutoRenew,
            autoRenewPreference: t.productID, expirationReason: r.expirationReason, priceIncreaseStatus: r.priceIncreaseStatus,
            isInBillingRetry: r.isInBillingRetry, gracePeriodExpirationDate: r.gracePeriodExpirationDate,
            renewalDate: r.willAutoRenew ? t.expirationDate : nil, renewalPrice: r.willAutoRenew ? (r.renewalPrice ?? product?.price) : nil,
            currencyCode: product?.currencyCode)
        if r.state == .expired, let offers = product?.subscription?.storedWinBackOffers {
            let taken = winBackOffersTakenLocked(group: group)
            info.storedEligibleWinBack = offers.compactMap(\.id).filter { !taken.contains($0) }
        }
        let signed: VerificationResult<Product.SubscriptionInfo.RenewalInfo> =
            r.verified ? .verified(info) : .unverified(info, .invalidSignature)
        let txn: VerificationResult<Transaction> = latest.verified ? .verified(t) : .unverified(t, .invalidSignature)
        return Product.SubscriptionInfo.Status(state: r.state, transaction: txn, renewalInfo: signed)
    }

    func setRenewal(group: String, _ renewal: StandIn.Renewal?) {
        let (status, subs): (Product.SubscriptionInfo.Status?, [AsyncStream<Product.SubscriptionInfo.Status>.Continuation]) = locked {
            extras.renewals[group] = renewal
            return (statusLocked(group: group), Array(extras.statusSubscribers.values))
        }
        guard let status else { return }
        for s in subs { s.yield(status) }
    }

    func subscribeStatuses() -> Product.SubscriptionInfo.Status.Statuses { subscribe(\.extras.statusSubscribers) }

    /// Whether `currentEntitlements` lists `t`, the group's latest plan: as
    /// StoreKit does, while its status is subscribed (and the period runs)
    /// or in a billing grace period (until the grace ends); never expired,
    /// in billing retry or revoked.
    func entitledLocked(group: String, _ t: Transaction, now: Date) -> Bool {
        let running = t.expirationDate.map { $0 > now } ?? false
        guard let r = extras.renewals[group] else { return running }
        if r.state == .subscribed { return running }
        if r.state == .inGracePeriod { return r.gracePeriodExpirationDate.map { $0 > now } ?? true }
        return false
    }

    /// The player turns auto-renew of the group's subscription on or off
    /// (Settings, the manage sheet), announced through `Status.updates`.
    /// Only a subscription that still runs (subscribed, grace, billing
    /// retry) has a switch: an expired one is bought again, and turning
    /// auto-renew on after the end changes nothing.
    func setAutoRenew(group: String, _ on: Bool) {
        let (status, subs): (Product.SubscriptionInfo.Status?, [AsyncStream<Product.SubscriptionInfo.Status>.Continuation]) = locked {
            guard let before = statusLocked(group: group),
                  before.state == .subscribed || before.state == .inGracePeriod || before.state == .inBillingRetryPeriod,
                  extras.autoRenewOff.contains(group) == on else { return (nil, []) }
            if on { extras.autoRenewOff.remove(group) } else { extras.autoRenewOff.insert(group) }
            return (statusLocked(group: group), Array(extras.statusSubscribers.values))
        }
        guard let status else { return }
        for s in subs { s.yield(status) }
    }

    /// Two statuses say the same (state, transaction, renewal info).
    static func sameStatus(_ a: Product.SubscriptionInfo.Status, _ b: Product.SubscriptionInfo.Status) -> Bool {
        a.state == b.state && a.transaction.unsafePayloadValue == b.transaction.unsafePayloadValue
            && a.renewalInfo.unsafePayloadValue == b.renewalInfo.unsafePayloadValue
    }
}
#endif
