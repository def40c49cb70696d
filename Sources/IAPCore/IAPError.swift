/// The SDK's error codes. The numbers are ABI: they are the `IAP_E_*`
/// constants of include/iap_bridge.h and never change meaning.
public enum IAPCode: Int32, Sendable, CaseIterable {
    case ok = 0
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

    /// The header's constant name, used in messages and docs.
    public var name: String { staticName.description }

    /// The same, as static storage (what `iap_error_name` returns).
    public var staticName: StaticString {
        switch self {
        case .ok: return "IAP_OK"
        case .nullArgument: return "IAP_E_NULL_ARG"
        case .invalidArgument: return "IAP_E_INVALID_ARG"
        case .badJSON: return "IAP_E_BAD_JSON"
        case .badConfig: return "IAP_E_BAD_CONFIG"
        case .catalog: return "IAP_E_CATALOG"
        case .io: return "IAP_E_IO"
        case .invalidHandle: return "IAP_E_INVALID_HANDLE"
        case .closed: return "IAP_E_CLOSED"
        case .busy: return "IAP_E_BUSY"
        case .unknownProduct: return "IAP_E_UNKNOWN_PRODUCT"
        case .duplicateKey: return "IAP_E_DUPLICATE_KEY"
        case .unknownKey: return "IAP_E_UNKNOWN_KEY"
        case .notSupported: return "IAP_E_NOT_SUPPORTED"
        case .unknownOp: return "IAP_E_UNKNOWN_OP"
        case .notFound: return "IAP_E_NOT_FOUND"
        case .internalError: return "IAP_E_INTERNAL"
        case .notDelivered: return "IAP_E_NOT_DELIVERED"
        case .resource: return "IAP_E_RESOURCE"
        case .store: return "IAP_E_STORE"
        }
    }
}

/// Every failure the SDK reports: a code from the header and a sentence.
public struct IAPError: Error, Sendable, CustomStringConvertible {
    public let code: IAPCode
    public let message: String
    public init(_ code: IAPCode, _ message: String) {
        self.code = code
        self.message = message
    }
    public var description: String { "\(code.name): \(message)" }
}
