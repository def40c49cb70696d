import IAPCore

/// Why a call failed: the C ABI's error codes (include/iap_bridge.h), typed.
public struct IAPKitError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: Int32, Sendable, CaseIterable {
        case nullArgument = -1
        case invalidArgument = -2
        case badJSON = -3
        case badConfig = -4
        case catalog = -5
        case io = -6
        case invalidHandle = -7
        case closed = -8
        case busy = -9
        case unknownProduct = -10
        case duplicateKey = -11
        case unknownKey = -12
        case notSupported = -13
        case unknownOp = -14
        case notFound = -15
        case internalError = -16
        case notDelivered = -17
        case resource = -18
        case store = -19
    }

    public let code: Code
    /// A sentence for logs.
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    init(_ e: IAPError) {
        self.init(Code(rawValue: e.code.rawValue) ?? .internalError, e.message)
    }

    /// The C ABI's name of the code, e.g. `IAP_E_UNKNOWN_KEY`.
    public var codeName: String { IAPCode(rawValue: code.rawValue)?.name ?? "IAP_E_UNKNOWN_CODE" }

    public var description: String { "\(codeName): \(message)" }
}
