#if !canImport(StoreKit)  // the module is empty where StoreKit exists (StandIn.swift)
import Foundation

/// 18.1:651-672 (iOS 16): the app's own signed transaction. Only the
/// members the backend reads. Scripted through `StandIn.appTransaction`.
@available(iOS 16.0, macOS 13.0, tvOS 16.0, watchOS 9.0, *)
public struct AppTransaction: Sendable {
    /// 18.1:658.
    public let appVersion: String
    /// 18.1:661.
    public let environment: AppStore.Environment
    /// 18.1:662.
    public let originalAppVersion: String
    /// 18.1:663.
    public let originalPurchaseDate: Date

    /// 18.1:668.
    public static var shared: VerificationResult<AppTransaction> {
        get async throws { try World.shared.appTransaction() }
    }
}

extension StandIn {
    /// What `AppTransaction.shared` answers: the original version and date,
    /// the running version, whether it verifies; `error` makes it throw.
    public struct AppInfo: Sendable {
        public var originalAppVersion: String
        public var originalPurchaseDate: Date
        public var appVersion: String
        public var verified: Bool
        public var error: (any Error)?
        public init(originalAppVersion: String = "1", originalPurchaseDate: Date = Date(timeIntervalSince1970: 1_600_000_000),
                    appVersion: String = "1", verified: Bool = true, error: (any Error)? = nil) {
            self.originalAppVersion = originalAppVersion
            self.originalPurchaseDate = originalPurchaseDate
            self.appVersion = appVersion
            self.verified = verified
            self.error = error
        }
    }

    public static var appTransaction: AppInfo {
        get { World.shared.locked { World.shared.extras.app } }
        set { World.shared.locked { World.shared.extras.app = newValue } }
    }
}

extension World {
    func appTransaction() throws -> VerificationResult<AppTransaction> {
        try locked {
            let a = extras.app
            if let e = a.error { throw e }
            let t = AppTransaction(appVersion: a.appVersion, environment: AppStore.Environment(rawValue: environment),
                                   originalAppVersion: a.originalAppVersion, originalPurchaseDate: a.originalPurchaseDate)
            return a.verified ? .verified(t) : .unverified(t, .invalidSignature)
        }
    }
}
#endif
