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
    /// The bytes of a NUL-terminated UTF-8 string of at most `limit` bytes.
    /// Invalid UTF-8 is IAP_E_INVALID_ARG for every string argument, JSON ones
    /// included, as the header's code table says (the bad-input matrix found
    /// JSON arguments answering IAP_E_BAD_JSON instead).
    static func bytes(_ p: UnsafePointer<CChar>?, name: String, limit: Int) throws(IAPError) -> [UInt8] {
        guard let p else { throw IAPError(.nullArgument, "\(name) is NULL") }
        let n = strnlen(p, limit + 1)
        guard n <= limit else { throw IAPError(.invalidArgument, "\(name) is longer than \(limit) bytes") }
        let b = p.withMemoryRebound(to: UInt8.self, capacity: n) { Array(UnsafeBufferPointer(start: $0, count: n)) }
        guard isValidUTF8(b) else { throw IAPError(.invalidArgument, "\(name) is not valid UTF-8") }
        return b
    }

    static func isValidUTF8(_ b: [UInt8]) -> Bool {
        var it = b.makeIterator()
        var decoder = UTF8()
        while true {
            switch decoder.decode(&it) {
            case .scalarValue: continue
            case .emptyInput: return true
            case .error: return false
            }
        }
    }

    /// A NUL-terminated UTF-8 string of at most `limit` bytes.
    static func string(_ p: UnsafePointer<CChar>?, name: String, limit: Int) throws(IAPError) -> String {
        String(decoding: try bytes(p, name: name, limit: limit), as: UTF8.self)  // validated by bytes()
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
