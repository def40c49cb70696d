/// A parsed JSON document. Numbers keep their literal text so that 64-bit
/// keys and decimal prices survive exactly (no trip through Double).
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case number(String)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public subscript(key: String) -> JSONValue? {
        if case .object(let o) = self { return o[key] }
        return nil
    }

    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    public var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    /// The value as an Int64 when it is an integer literal in range
    /// (also accepts an integral literal like `5.0` or `1e3`).
    public var int64Value: Int64? {
        guard case .number(let text) = self else { return nil }
        if let i = Int64(text) { return i }
        if let d = Double(text), d.rounded() == d, abs(d) < 9.0e15 { return Int64(d) }
        return nil
    }

    public var doubleValue: Double? {
        if case .number(let text) = self { return Double(text) }
        return nil
    }

    public var arrayValue: [JSONValue]? {
        if case .array(let a) = self { return a }
        return nil
    }

    public var objectValue: [String: JSONValue]? {
        if case .object(let o) = self { return o }
        return nil
    }

    public var isNull: Bool { self == .null }

    /// Compact JSON text, object keys sorted (deterministic output).
    public var serialized: String {
        var w = JSONBuffer()
        w.appendValue(self)
        return w.string
    }
}

/// Why a JSON text was refused, with the byte offset.
public struct JSONParseError: Error, Sendable, CustomStringConvertible {
    public let offset: Int
    public let reason: String
    public var description: String { "\(reason) at byte \(offset)" }
}
