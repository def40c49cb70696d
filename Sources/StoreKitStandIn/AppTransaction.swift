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
    /// 26.2:952-954: iOS 16, back-deployed before 18.4.
    public let appTransactionID: String
    /// 26.2:974-975 (iOS 18.4).
    @available(iOS 18.4, macOS 15.4, tvOS 18.4, watchOS 11.4, *)
    public var originalPlatform: AppStore.Platform { AppStore.Platform(rawValue: platform) }
    /// 26.2:976-982: iOS 16, deprecated from 18.4.
    @available(iOS, introduced: 16.0, deprecated: 18.4, message: "Use the originalPlatform property instead.")
    @available(macOS, introduced: 13.0, deprecated: 15.4, message: "Use the originalPlatform property instead.")
    @available(tvOS, introduced: 16.0, deprecated: 18.4, message: "Use the originalPlatform property instead.")
    public var originalPlatformStringRepresentation: String { platform }
    /// 26.2:996.
    public let preorderDate: Date?

    let platform: String

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
        public var appTransactionID: String
        public var originalPlatform: String
        public var preorderDate: Date?
        public init(originalAppVersion: String = "1", originalPurchaseDate: Date = Date(timeIntervalSince1970: 1_600_000_000),
                    appVersion: String = "1", verified: Bool = true, error: (any Error)? = nil,
                    appTransactionID: String = "704289663512345678", originalPlatform: String = "iOS", preorderDate: Date? = nil) {
            self.originalAppVersion = originalAppVersion
            self.originalPurchaseDate = originalPurchaseDate
            self.appVersion = appVersion
            self.verified = verified
            self.error = error
            self.appTransactionID = appTransactionID
            self.originalPlatform = originalPlatform
            self.preorderDate = preorderDate
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
                                   originalAppVersion: a.originalAppVersion, originalPurchaseDate: a.originalPurchaseDate,
                                   appTransactionID: a.appTransactionID, preorderDate: a.preorderDate, platform: a.originalPlatform)
            return a.verified ? .verified(t) : .unverified(t, .invalidSignature)
        }
    }
}
#endif
