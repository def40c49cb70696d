import IAPCore

/// Why a call failed: the C ABI's error codes (include/iap_bridge.h), typed.
public struct IAPKitError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The C ABI's codes themselves (IAPCore's `IAPCode`: one list, the
    /// header's numbers); a thrown error never has `.ok`.
    public typealias Code = IAPCode

    public let code: Code
    /// A sentence for logs.
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    init(_ e: IAPError) {
        self.init(e.code, e.message)
    }

    /// The C ABI's name of the code, e.g. `IAP_E_UNKNOWN_KEY`.
    public var codeName: String { code.name }

    public var description: String { "\(codeName): \(message)" }
}
