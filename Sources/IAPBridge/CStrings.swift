#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import IAPCore

/// Reading strings from C safely: NULL, over-long and invalid UTF-8 input
/// become errors, never crashes.
enum CStrings {
    /// The bytes of a NUL-terminated string of at most `limit` bytes, lent
    /// to `body` where they lie (valid only inside it).
    static func withBytes<R>(_ p: UnsafePointer<CChar>?, name: String, limit: Int,
                             _ body: (UnsafeBufferPointer<UInt8>) throws(IAPError) -> R) throws(IAPError) -> R {
        guard let p else { throw IAPError(.nullArgument, "\(name) is NULL") }
        let n = strnlen(p, limit + 1)
        guard n <= limit else { throw IAPError(.invalidArgument, "\(name) is longer than \(limit) bytes") }
        let r = p.withMemoryRebound(to: UInt8.self, capacity: n) { q in
            Result { () throws(IAPError) -> R in try body(UnsafeBufferPointer(start: q, count: n)) }
        }
        return try r.get()
    }

    /// The bytes of a NUL-terminated string of at most `limit` bytes.
    static func bytes(_ p: UnsafePointer<CChar>?, name: String, limit: Int) throws(IAPError) -> [UInt8] {
        try withBytes(p, name: name, limit: limit) { Array($0) }
    }

    /// A NUL-terminated UTF-8 string of at most `limit` bytes.
    static func string(_ p: UnsafePointer<CChar>?, name: String, limit: Int) throws(IAPError) -> String {
        let b = try bytes(p, name: name, limit: limit)
        guard let s = UTF8Text.string(validating: b) else { throw IAPError(.invalidArgument, "\(name) is not valid UTF-8") }
        return s
    }

    /// Product IDs: a NUL-terminated JSON array of strings, such as
    /// `["coins_100","remove_ads"]` (`product_ids_json` of the header).
    static let maxProductListBytes = 256 * 1024
    static func productIDs(_ p: UnsafePointer<CChar>?, name: String = "product_ids_json") throws(IAPError) -> [String] {
        try withBytes(p, name: name, limit: maxProductListBytes) { (b) throws(IAPError) -> [String] in
            // The plain list every game passes, read where it lies; anything
            // else (escapes, UTF-8, errors) through the JSON parser.
            if let ids = StringListReader.plainStrings(b) { return ids }
            let v: JSONValue
            do { v = try JSONParser.parse(bytes: b) } catch {
                throw IAPError(.badJSON, "\(name) is not valid JSON: \(error)")
            }
            guard let array = v.arrayValue else { throw IAPError(.badJSON, "\(name) must be a JSON array of strings") }
            var ids: [String] = []
            for e in array {
                guard let s = e.stringValue else { throw IAPError(.badJSON, "\(name) must contain only strings") }
                ids.append(s)
            }
            return ids
        }
    }

    /// A malloc'd NUL-terminated copy, for the caller to free with iap_free.
    static func duplicate(_ bytes: [UInt8]) -> UnsafeMutablePointer<CChar>? {
        guard let raw = malloc(bytes.count + 1) else { return nil }
        let out = raw.bindMemory(to: CChar.self, capacity: bytes.count + 1)
        bytes.withUnsafeBytes { src in
            if let base = src.baseAddress { memcpy(raw, base, bytes.count) }
        }
        out[bytes.count] = 0
        return out
    }
}
