/// The 16 bytes that travel with a purchase through the store (StoreKit 2's
/// `appAccountToken` UUID) and bring the game's click key back with the
/// transaction, even when the purchase completes after a crash or is approved
/// by a parent days later (C5).
///
/// Layout: a version-8 (custom) RFC 9562 UUID. Bytes 0–3 are "IAPB"; the key
/// (big-endian int64) fills bytes 4, 5, 7, 9–13 around the version and variant
/// bits; bytes 14–15 are a checksum of the rest, so a token the SDK did not
/// make is never mistaken for one it did.
public struct PurchaseToken: Sendable, Hashable {
    public let bytes: [UInt8]

    public init?(bytes: [UInt8]) {
        guard bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    private static let keySlots = [4, 5, 7, 9, 10, 11, 12, 13]

    public init(key: Int64) {
        var b = [UInt8](repeating: 0, count: 16)
        b[0] = 0x49; b[1] = 0x41; b[2] = 0x50; b[3] = 0x42
        b[6] = 0x80  // version 8
        b[8] = 0x80  // variant 10
        let u = UInt64(bitPattern: key)
        for (i, slot) in PurchaseToken.keySlots.enumerated() { b[slot] = UInt8((u >> (56 - 8 * UInt64(i))) & 0xff) }
        let sum = PurchaseToken.checksum(b)
        b[14] = UInt8(sum >> 8)
        b[15] = UInt8(sum & 0xff)
        self.bytes = b
    }

    /// The game's key, when this token was made by `init(key:)`.
    public var key: Int64? {
        guard bytes[0] == 0x49, bytes[1] == 0x41, bytes[2] == 0x50, bytes[3] == 0x42,
              bytes[6] == 0x80, bytes[8] == 0x80,
              UInt16(bytes[14]) << 8 | UInt16(bytes[15]) == PurchaseToken.checksum(bytes)
        else { return nil }
        var u: UInt64 = 0
        for slot in PurchaseToken.keySlots { u = u << 8 | UInt64(bytes[slot]) }
        return Int64(bitPattern: u)
    }

    private static func checksum(_ b: [UInt8]) -> UInt16 {
        var h: UInt32 = 0x811C9DC5
        for i in 0..<14 { h = (h ^ UInt32(b[i])) &* 0x01000193 }
        return UInt16(truncatingIfNeeded: h ^ (h >> 16))
    }

    /// Canonical UUID text, "XXXXXXXX-XXXX-XXXX-XXXX-XXXXXXXXXXXX".
    public var uuidString: String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        for (i, byte) in bytes.enumerated() {
            if i == 4 || i == 6 || i == 8 || i == 10 { out.append(UInt8(ascii: "-")) }
            out.append(hex[Int(byte >> 4)])
            out.append(hex[Int(byte & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    public init?(uuidString: String) {
        var out: [UInt8] = []
        var hi: UInt8? = nil
        for c in uuidString.utf8 {
            if c == UInt8(ascii: "-") { continue }
            let v: UInt8
            switch c {
            case 0x30...0x39: v = c - 0x30
            case 0x41...0x46: v = c - 0x41 + 10
            case 0x61...0x66: v = c - 0x61 + 10
            default: return nil
            }
            if let h = hi { out.append(h << 4 | v); hi = nil } else { hi = v }
        }
        guard hi == nil, out.count == 16 else { return nil }
        self.bytes = out
    }
}
