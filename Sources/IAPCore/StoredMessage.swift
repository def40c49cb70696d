#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The few fields of a stored result the SDK needs at open (C11): read
/// straight from the bytes its own writer produced (JSONObjectWriter: compact,
/// `"name":value`), without building a JSON tree for each of thousands of
/// records. A record whose bytes are not what the writer makes reads as
/// empty fields, and fails the store's checks like any edited record.
struct StoredMessage {
    let productID: String
    let originalTransactionID: String?
    let kind: String?
    let origin: String
    let alreadyOwned: Bool
    let clickKey: Int64?

    init(_ bytes: [UInt8]) {
        productID = StoredMessage.string(bytes, "productID") ?? ""
        originalTransactionID = StoredMessage.string(bytes, "originalTransactionID")
        kind = StoredMessage.string(bytes, "kind")
        origin = StoredMessage.string(bytes, "origin") ?? "game"
        alreadyOwned = StoredMessage.find(bytes, "\"alreadyOwned\":true") != nil
        clickKey = StoredMessage.string(bytes, "clickKey").flatMap { Int64($0) }
    }

    /// The position just past `needle`, or nil (memchr to each candidate,
    /// memcmp to check it: a few thousand records are scanned at every open).
    static func find(_ b: [UInt8], _ needle: String) -> Int? {
        var needle = needle
        return needle.withUTF8 { n -> Int? in
            b.withUnsafeBytes { hay -> Int? in
                guard let base = hay.baseAddress, n.count > 0, n.count <= hay.count else { return nil }
                var i = 0
                let last = hay.count - n.count
                while i <= last {
                    guard let hit = memchr(base + i, Int32(n[0]), last - i + 1) else { return nil }
                    let at = base.distance(to: UnsafeRawPointer(hit))
                    if memcmp(base + at, n.baseAddress!, n.count) == 0 { return at + n.count }
                    i = at + 1
                }
                return nil
            }
        }
    }

    /// A top-level string field's value (escapes undone for `\"` and `\\`).
    static func string(_ b: [UInt8], _ name: String) -> String? {
        guard var i = find(b, "\"\(name)\":\"") else { return nil }
        var out: [UInt8] = []
        while i < b.count && b[i] != UInt8(ascii: "\"") {
            if b[i] == UInt8(ascii: "\\"), i + 1 < b.count { i += 1 }
            out.append(b[i])
            i += 1
        }
        return String(decoding: out, as: UTF8.self)
    }
}
