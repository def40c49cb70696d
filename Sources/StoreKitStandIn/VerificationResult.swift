#if !canImport(StoreKit)  // the module is empty where StoreKit exists (StandIn.swift)
// StoreKit's signature-check wrapper, mirrored from the iPhoneOS16.2 SDK
// interface (xybp888/iOS-SDKs, iPhoneOS16.2.sdk/.../StoreKit.swiftmodule/
// arm64-apple-ios.swiftinterface; "16.2:N" below is line N of that file).
// Test-only scaffolding: see StandIn.swift.

/// 16.2:437-449. `@frozen` as in the SDK: a switch over it needs no
/// `@unknown default` there either.
@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, *)
@frozen public enum VerificationResult<SignedType> {
    case unverified(SignedType, VerificationResult<SignedType>.VerificationError)
    case verified(SignedType)

    /// 16.2:442-444 (`get throws`): the payload when verified, else the error.
    public var payloadValue: SignedType {
        get throws {
            switch self {
            case .verified(let v): return v
            case .unverified(_, let e): throw e
            }
        }
    }

    /// 16.2:446-448.
    public var unsafePayloadValue: SignedType {
        switch self {
        case .verified(let v): return v
        case .unverified(let v, _): return v
        }
    }
}

@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, *)
extension VerificationResult {
    /// 16.2:452-464 (Equatable, Hashable: 16.2:1495-1497).
    public enum VerificationError: Error, Equatable, Hashable {
        case revokedCertificate
        case invalidCertificateChain
        case invalidDeviceVerification
        case invalidEncoding
        case invalidSignature
        case missingRequiredProperties
    }
}

/// 16.2:483-485.
@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, *)
extension VerificationResult: Sendable where SignedType: Sendable {}

/// 16.2:1205-1207: the JWS lives on the result, not on the transaction.
@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, *)
extension VerificationResult where SignedType == Transaction {
    public var jwsRepresentation: String { unsafePayloadValue.signedJWS }
}
#endif
