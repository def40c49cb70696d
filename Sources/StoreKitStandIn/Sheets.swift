#if !canImport(StoreKit)  // the module is empty where StoreKit exists (StandIn.swift)
import Foundation

// The system sheets, mirrored from the iPhoneOS18.1 SDK interface ("18.1:N"
// is line N; see SubscriptionStatus.swift). UIKit-only (unavailable on macOS,
// tvOS, watchOS); @MainActor as in the SDK. Scripted through StandIn.

@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, *)
extension AppStore {
    /// 18.1:1400: the App Store's subscription management over the app.
    @MainActor
    public static func showManageSubscriptions(in scene: UIWindowScene) async throws {
        try World.shared.openSheet("manageSubscriptions")
    }

    /// 26.2:1838-1842 (iOS 17): the same sheet, for one subscription group.
    @available(iOS 17.0, *)
    @MainActor
    public static func showManageSubscriptions(in scene: UIWindowScene, subscriptionGroupID: String) async throws {
        try World.shared.openSheet("manageSubscriptions:\(subscriptionGroupID)")
    }

    /// 18.1:1412 (iOS 16): the offer code redemption sheet. A redeemed code's
    /// purchase arrives through `Transaction.updates`.
    @available(iOS 16.0, *)
    @MainActor
    public static func presentOfferCodeRedeemSheet(in scene: UIWindowScene) async throws {
        try World.shared.openSheet("offerCode")
    }
}

@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, *)
extension Transaction {
    /// 18.1:1071-1073.
    public enum RefundRequestStatus: Equatable, Hashable, Sendable {
        case success
        case userCancelled
    }

    /// 18.1:1061-1063.
    public enum RefundRequestError: Error, Equatable, Hashable, Sendable {
        case duplicateRequest
        case failed
    }

    /// 18.1:1089: the refund request sheet for a transaction of this player.
    @MainActor
    public static func beginRefundRequest(for transactionID: UInt64, in scene: UIWindowScene) async throws -> RefundRequestStatus {
        try World.shared.refundRequest(transactionID)
    }
}

extension StandIn {
    /// How the player answers the next refund request sheet.
    public enum RefundAnswer: Sendable {
        /// Submitted; `grant` true: Apple refunds it at once (a revocation
        /// through `Transaction.updates`).
        case submit(grant: Bool)
        case userCancelled
        case error(Transaction.RefundRequestError)
    }

    /// Default: `.submit(grant: false)`.
    public static var nextRefundAnswer: RefundAnswer {
        get { World.shared.locked { World.shared.extras.refundAnswer } }
        set { World.shared.locked { World.shared.extras.refundAnswer = newValue } }
    }

    /// The offer code the player redeems in the next offer code sheet: the
    /// product it gives (delivered through `Transaction.updates`); nil: the
    /// player closes the sheet.
    public static var nextOfferCodeProduct: String? {
        get { World.shared.locked { World.shared.extras.offerCodeProduct } }
        set { World.shared.locked { World.shared.extras.offerCodeProduct = newValue } }
    }

    /// The sheets throw this while set (e.g. StoreKitError.unknown).
    public static var sheetError: (any Error)? {
        get { World.shared.locked { World.shared.extras.sheetError } }
        set { World.shared.locked { World.shared.extras.sheetError = newValue } }
    }

    /// The sheets the app opened, in order ("manageSubscriptions", "offerCode", "refund:<id>").
    public static var sheetsShown: [String] { World.shared.locked { World.shared.extras.sheets } }
}

extension World {
    func openSheet(_ name: String) throws {
        let redeem: String? = try locked {
            extras.sheets.append(name)
            if let e = extras.sheetError { throw e }
            guard name == "offerCode" else { return nil }
            defer { extras.offerCodeProduct = nil }
            return extras.offerCodeProduct
        }
        if let redeem { _ = charge(redeem, token: nil, verified: true, finished: false, deliver: true) }
    }

    func refundRequest(_ id: UInt64) throws -> Transaction.RefundRequestStatus {
        let answer: StandIn.RefundAnswer = try locked {
            extras.sheets.append("refund:\(id)")
            if let e = extras.sheetError { throw e }
            guard hasTransactionLocked(id) else { throw Transaction.RefundRequestError.failed }
            return extras.refundAnswer
        }
        switch answer {
        case .submit(let grant):
            if grant { refund(id, reason: .other) }
            return .success
        case .userCancelled:
            return .userCancelled
        case .error(let e):
            throw e
        }
    }
}
#endif
