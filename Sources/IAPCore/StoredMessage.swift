#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The few fields of a stored result the SDK needs at open (C11): read in
/// one pass over the top level of the bytes its own writer produced
/// (JSONObjectWriter: compact, `"name":value`), without building a JSON tree
/// for each of thousands of records. Reading stops at the first byte that is
/// not what the writer makes; the fields not read by then stay empty, and
/// the record fails the store's checks like any edited record.
struct StoredMessage {
    private(set) var productID = ""
    private(set) var originalTransactionID: String? = nil
    private(set) var kind: String? = nil
    private(set) var origin = "game"
    private(set) var alreadyOwned = false
    private(set) var clickKey: Int64? = nil

    init(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { read($0) }
    }

    private mutating func read(_ b: UnsafeBufferPointer<UInt8>) {
        guard b.count >= 2, b[0] == UInt8(ascii: "{") else { return }
        var i = 1
        while i < b.count, b[i] == UInt8(ascii: "\"") {
            guard let nameEnd = StoredMessage.closingQuote(b, after: i) else { return }
            let name = UnsafeBufferPointer(rebasing: b[(i + 1)..<nameEnd])
            i = nameEnd + 1
            guard i < b.count, b[i] == UInt8(ascii: ":") else { return }
            i += 1
            guard i < b.count else { return }
            if b[i] == UInt8(ascii: "\"") {
                guard let valueEnd = StoredMessage.closingQuote(b, after: i) else { return }
                let quoted = UnsafeBufferPointer(rebasing: b[i...valueEnd])
                i = valueEnd + 1
                if StoredMessage.same(name, "productID") {
                    productID = StoredMessage.text(quoted)
                } else if StoredMessage.same(name, "originalTransactionID") {
                    originalTransactionID = StoredMessage.text(quoted)
                } else if StoredMessage.same(name, "kind") {
                    kind = StoredMessage.text(quoted)
                } else if StoredMessage.same(name, "origin") {
                    origin = StoredMessage.text(quoted)
                } else if StoredMessage.same(name, "clickKey") {
                    clickKey = Int64(StoredMessage.text(quoted))
                }
            } else {
                let start = i
                guard let end = StoredMessage.endOfValue(b, from: i) else { return }
                i = end
                if StoredMessage.same(name, "alreadyOwned") {
                    alreadyOwned = StoredMessage.same(UnsafeBufferPointer(rebasing: b[start..<end]), "true")
                }
            }
            guard i < b.count, b[i] == UInt8(ascii: ",") else { return }
            i += 1
        }
    }

    private static func same(_ bytes: UnsafeBufferPointer<UInt8>, _ word: StaticString) -> Bool {
        bytes.count == word.utf8CodeUnitCount && (bytes.isEmpty || memcmp(bytes.baseAddress!, word.utf8Start, bytes.count) == 0)
    }

    /// The index of the quote that closes the string opening at `open`.
    private static func closingQuote(_ b: UnsafeBufferPointer<UInt8>, after open: Int) -> Int? {
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

    /// The index just past a number, literal, object or array starting at `i`
    /// (strings inside it skipped whole), or nil if it never ends.
    private static func endOfValue(_ b: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
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
            case UInt8(ascii: ","):
                if depth == 0 { return i }
            default: break
            }
            i += 1
        }
        return nil
    }

    /// A quoted JSON string's text: straight from the bytes when it has no
    /// escape, through the parser when it has (empty if it is not valid).
    private static func text(_ quoted: UnsafeBufferPointer<UInt8>) -> String {
        let inner = UnsafeBufferPointer(rebasing: quoted[1..<(quoted.count - 1)])
        if !inner.contains(UInt8(ascii: "\\")) { return String(decoding: inner, as: UTF8.self) }
        guard case .string(let s)? = try? JSONParser.parse(bytes: quoted) else { return "" }
        return s
    }
}
