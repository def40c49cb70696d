#if !canImport(StoreKit)  // the module is empty where StoreKit exists (StandIn.swift)
import Foundation

// AppStore and StoreKitError, mirrored from the iPhoneOS16.2 SDK interface
// ("16.2:N" is line N; see VerificationResult.swift).

/// 16.2:937-947, Sendable 16.2:991-993.
@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, *)
public enum AppStore: Sendable {
    /// 16.2:948-953: syncs transactions with the App Store (a sign-in prompt
    /// on a device). Scripted through `StandIn.syncError`.
    public static func sync() async throws {
        try World.shared.sync()
    }
}

@available(iOS 16.0, macOS 13.0, tvOS 16.0, watchOS 9.0, *)
extension AppStore {
    /// 16.2:980-990. Raw values are not in the interface; these are the stand-in's.
    public struct Environment: RawRepresentable, Equatable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public static let production = Environment(rawValue: "Production")
        public static let sandbox = Environment(rawValue: "Sandbox")
        public static let xcode = Environment(rawValue: "Xcode")
    }
}

/// 26.2:1879-1888 (iOS 18.4): the platform the player first got the app on.
@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, *)
extension AppStore {
    public struct Platform: RawRepresentable, Equatable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public static let iOS = Platform(rawValue: "iOS")
        public static let macOS = Platform(rawValue: "macOS")
        public static let tvOS = Platform(rawValue: "tvOS")
        public static let visionOS = Platform(rawValue: "visionOS")
    }
}

/// 16.2:1265-1274, Sendable 16.2:1275-1277. Not Equatable (associated values).
@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, *)
public enum StoreKitError: Error, Sendable {
    case unknown
    case userCancelled
    case networkError(URLError)
    case systemError(any Error)
    case notAvailableInStorefront
    @available(iOS 15.4, macOS 12.3, tvOS 15.4, watchOS 8.5, *)
    case notEntitled
    /// 26.2:2386-2387: the device or OS does not support the request.
    @available(iOS 18.4, macOS 15.4, tvOS 18.4, watchOS 11.4, *)
    case unsupported
}
#endif
