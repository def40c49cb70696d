#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The top-level fields of a JSON object that JSONObjectWriter wrote
/// (compact: `{"name":value,...}`, no spaces), found in one pass over the
/// bytes without building a tree. For records written as JSON and read
/// back by the thousand: the simulated store's log (its events, and the
/// charges it wrote before it wrote them in binary), and the results
/// outbox format 1 stored as text (`OutboxV1Migration`, once per old file;
/// format 2 stores facts and parses nothing at open). Kept in the core for
/// that migration; the simulator uses it too.
///
/// Reading stops at the first byte that is not what the writer makes; the
/// fields before it are kept and `isComplete` is false. A nested object or
/// array is skipped whole (strings inside it included) and read on demand
/// by the full parser (`JSONField.value`).
public struct JSONFields {
    private let bytes: [UInt8]
    private var fields: [(name: Range<Int>, value: Range<Int>)] = []
    /// True when the bytes were one whole object of the writer's shape.
    public private(set) var isComplete = false

    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
        fields.reserveCapacity(16)
        bytes.withUnsafeBufferPointer { read($0) }
    }

    private mutating func read(_ b: UnsafeBufferPointer<UInt8>) {
        guard b.count >= 2, b[0] == UInt8(ascii: "{") else { return }
        if b.count == 2 { isComplete = b[1] == UInt8(ascii: "}"); return }
        var i = 1
        while i < b.count, b[i] == UInt8(ascii: "\"") {
            guard let nameEnd = JSONFields.closingQuote(b, after: i) else { return }
            let name = (i + 1)..<nameEnd
            i = nameEnd + 1
            guard i < b.count, b[i] == UInt8(ascii: ":") else { return }
            i += 1
            guard i < b.count else { return }
            let start = i
            if b[i] == UInt8(ascii: "\"") {
                guard let valueEnd = JSONFields.closingQuote(b, after: i) else { return }
                i = valueEnd + 1
            } else {
                guard let end = JSONFields.endOfValue(b, from: i), end > start else { return }
                i = end
            }
            fields.append((name, start..<i))
            guard i < b.count else { return }
            if b[i] == UInt8(ascii: "}") { isComplete = i == b.count - 1; return }
            guard b[i] == UInt8(ascii: ",") else { return }
            i += 1
        }
    }

    /// The first field with this name, or nil.
    public subscript(_ name: StaticString) -> JSONField? {
        let n = name.utf8CodeUnitCount
        let found: Range<Int>? = bytes.withUnsafeBufferPointer { b in
            for f in fields where f.name.count == n {
                if JSONFields.sameBytes(b.baseAddress! + f.name.lowerBound, name.utf8Start, n) { return f.value }
            }
            return nil
        }
        return found.map { JSONField(raw: bytes[$0]) }
    }

    /// The `n` bytes at `a` and at `b` are the same. Byte by byte: the
    /// names and literals compared here are a few bytes long, and differ in
    /// the first byte more often than not (memcmp is a call through the PLT).
    static func sameBytes(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, _ n: Int) -> Bool {
        var i = 0
        while i < n && a[i] == b[i] { i += 1 }
        return i == n
    }

    /// The index of the quote that closes the string opening at `open`.
    static func closingQuote(_ b: UnsafeBufferPointer<UInt8>, after open: Int) -> Int? {
        var i = open + 1
        while i < b.count {
            switch b[i] {
            case UInt8(ascii: "\""): return i
            case UInt8(ascii: "\\"): i += 2
            default: i += 1
            }
        }
        return nil
    }

    /// The index just past a number, literal, object or array starting at
    /// `start` (strings inside it skipped whole), or nil if it never ends.
    static func endOfValue(_ b: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        var depth = 0
        var i = start
        while i < b.count {
            switch b[i] {
            case UInt8(ascii: "\""):
                guard let q = closingQuote(b, after: i) else { return nil }
                i = q
            case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                if depth == 0 { return i }
                depth -= 1
                if depth == 0 { return i + 1 }
            case UInt8(ascii: ","):
                if depth == 0 { return i }
            default: break
            }
            i += 1
        }
        return depth == 0 ? i : nil
    }
}

/// One field's value, as the bytes that spell it.
public struct JSONField {
    /// The value's JSON text (a string keeps its quotes).
    public let raw: ArraySlice<UInt8>

    /// A string's text: straight from the bytes when it has no escape,
    /// through the parser when it has; nil for any other value (or an
    /// invalid string).
    public var stringValue: String? {
        guard raw.count >= 2, raw.first == UInt8(ascii: "\""), raw.last == UInt8(ascii: "\"") else { return nil }
        // Without an escape the text is the bytes between the quotes; with
        // one (nil here), the parser undoes it.
        let plain = raw.withUnsafeBufferPointer { b -> String? in
            let inner = UnsafeBufferPointer(rebasing: b[1..<(b.count - 1)])
            guard let p = inner.baseAddress else { return "" }
            return memchr(p, Int32(UInt8(ascii: "\\")), inner.count) == nil ? String(decoding: inner, as: UTF8.self) : nil
        }
        return plain ?? value?.stringValue
    }

    /// An integer literal in range, as `JSONValue.int64Value` reads it.
    public var int64Value: Int64? {
        // Only a number can be one: it starts with a minus or a digit.
        guard let first = raw.first, first == UInt8(ascii: "-") || (first >= 0x30 && first <= 0x39) else { return nil }
        // Up to 18 plain digits are read here (no overflow possible); 5.0,
        // 1e3 and longer numbers (nil here) go to the parser.
        let plain = raw.withUnsafeBufferPointer { b -> Int64? in
            let negative = b[0] == UInt8(ascii: "-")
            var i = negative ? 1 : 0
            guard b.count - i > 0, b.count - i <= 18 else { return nil }
            var v: Int64 = 0
            while i < b.count {
                let c = b[i]
                guard c >= 0x30 && c <= 0x39 else { return nil }
                v = v * 10 + Int64(c - 0x30)
                i += 1
            }
            return negative ? -v : v
        }
        return plain ?? value?.int64Value
    }

    public var boolValue: Bool? {
        if isLiteral("true") { return true }
        if isLiteral("false") { return false }
        return nil
    }

    public var isNull: Bool { isLiteral("null") }

    /// The value is exactly `word` (compared byte by byte: comparing with a
    /// String's UTF-8 view goes through generic iteration, ten times slower).
    private func isLiteral(_ word: StaticString) -> Bool {
        let n = word.utf8CodeUnitCount
        guard raw.count == n else { return false }
        return raw.withUnsafeBufferPointer { b in n == 0 || JSONFields.sameBytes(b.baseAddress!, word.utf8Start, n) }
    }

    /// The value parsed in full (for arrays and objects), nil if invalid.
    public var value: JSONValue? { try? JSONParser.parse(bytes: Array(raw)) }
}
