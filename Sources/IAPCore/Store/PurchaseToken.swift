/// The 16 bytes that travel with a purchase through the store (StoreKit 2's
/// `appAccountToken` UUID) and bring the game's click key back with the
/// transaction, even when the purchase completes after a crash or is approved
/// by a parent days later (C5).
///
/// StoreKit hands the token to every device of the Apple ID, so it also
/// names the install that made it: a transaction whose token another device
/// or another install made is not this game's click (C7), and arrives as
/// store-initiated.
///
/// Layout (version 2, since 1.2): a version-8 (custom) RFC 9562 UUID. Bytes
/// 0–1 are "IB"; the install identifier (26 bits) fills bytes 2–3, the low
/// nibble of byte 6 and the low six bits of byte 8, beside the version and
/// variant bits; the key (big-endian int64) fills bytes 4, 5, 7, 9–13; bytes
/// 14–15 are a checksum of the rest, so a token the SDK did not make is never
/// mistaken for one it did. Version 1 (1.0 and 1.1) had "IAPB" in bytes 0–3
/// and no install: still read, and taken as this install's (they predate the
/// install identifier).
public struct PurchaseToken: Sendable, Hashable {
    /// The 16 bytes in order, in two words (bytes 0-7, 8-15, in memory
    /// order): a token is a value, copied and decoded with every stored
    /// transaction, and an array of 16 bytes cost an allocation each time.
    private let raw: (UInt64, UInt64)

    public static func == (a: PurchaseToken, b: PurchaseToken) -> Bool { a.raw == b.raw }
    public func hash(into h: inout Hasher) {
        h.combine(raw.0)
        h.combine(raw.1)
    }

    /// The 16 bytes (a copy).
    public var bytes: [UInt8] { withBytes { Array($0) } }

    /// Runs `body` on the 16 bytes, in place.
    public func withBytes<T>(_ body: (UnsafeRawBufferPointer) -> T) -> T {
        withUnsafeBytes(of: raw) { body($0) }
    }

    public init?(bytes: [UInt8]) {
        guard bytes.count == 16 else { return nil }
        self.init(bytes: bytes, at: 0)
    }

    /// The token in `bytes[at..<at + 16]`, read in place (a record's codec).
    init(bytes: [UInt8], at: Int) {
        precondition(at >= 0 && at + 16 <= bytes.count, "a token past its bytes")
        raw = bytes.withUnsafeBytes { ($0.loadUnaligned(fromByteOffset: at, as: UInt64.self),
                                       $0.loadUnaligned(fromByteOffset: at + 8, as: UInt64.self)) }
    }

    private func byte(_ i: Int) -> UInt8 { withBytes { $0[i] } }

    private static let keySlots = [4, 5, 7, 9, 10, 11, 12, 13]
    /// Install identifiers are this many bits.
    public static let installBits = 26
    public static let installMask: UInt32 = (1 << 26) - 1

    /// A version-1 token (no install): what 1.0 and 1.1 wrote. Tests and old
    /// records only; purchases use `init(key:install:)`.
    public init(key: Int64) {
        var b = [UInt8](repeating: 0, count: 16)
        b[0] = 0x49; b[1] = 0x41; b[2] = 0x50; b[3] = 0x42
        b[6] = 0x80  // version 8
        b[8] = 0x80  // variant 10
        PurchaseToken.fill(&b, key: key)
        self.init(bytes: b, at: 0)
    }

    /// A version-2 token: the key and this install's identifier.
    public init(key: Int64, install: UInt32) {
        let i = install & PurchaseToken.installMask
        var b = [UInt8](repeating: 0, count: 16)
        b[0] = 0x49; b[1] = 0x42
        b[2] = UInt8((i >> 18) & 0xff)
        b[3] = UInt8((i >> 10) & 0xff)
        b[6] = 0x80 | UInt8((i >> 6) & 0x0f)  // version 8
        b[8] = 0x80 | UInt8(i & 0x3f)         // variant 10
        PurchaseToken.fill(&b, key: key)
        self.init(bytes: b, at: 0)
    }

    private static func fill(_ b: inout [UInt8], key: Int64) {
        let u = UInt64(bitPattern: key)
        for (i, slot) in keySlots.enumerated() { b[slot] = UInt8((u >> (56 - 8 * UInt64(i))) & 0xff) }
        let sum = checksum(b)
        b[14] = UInt8(sum >> 8)
        b[15] = UInt8(sum & 0xff)
    }

    private var isVersion1: Bool {
        withBytes { b in b[0] == 0x49 && b[1] == 0x41 && b[2] == 0x50 && b[3] == 0x42 && b[6] == 0x80 && b[8] == 0x80 }
    }

    private var isVersion2: Bool {
        withBytes { b in b[0] == 0x49 && b[1] == 0x42 && b[6] & 0xf0 == 0x80 && b[8] & 0xc0 == 0x80 }
    }

    private var checksumMatches: Bool {
        withBytes { b in UInt16(b[14]) << 8 | UInt16(b[15]) == PurchaseToken.checksum(b) }
    }

    /// The game's key, when the SDK made this token (either version).
    public var key: Int64? {
        guard isVersion1 || isVersion2, checksumMatches else { return nil }
        return withBytes { b in
            var u: UInt64 = 0
            for slot in PurchaseToken.keySlots { u = u << 8 | UInt64(b[slot]) }
            return Int64(bitPattern: u)
        }
    }

    /// The install that made this token; nil for version 1 and for tokens the
    /// SDK did not make.
    public var install: UInt32? {
        guard isVersion2, checksumMatches else { return nil }
        return withBytes { b in UInt32(b[2]) << 18 | UInt32(b[3]) << 10 | UInt32(b[6] & 0x0f) << 6 | UInt32(b[8] & 0x3f) }
    }

    /// The key when this install made the token (or a version-1 token, which
    /// predates install identifiers); nil for another install's or device's.
    public func key(forInstall install: UInt32) -> Int64? {
        guard let k = key else { return nil }
        if let i = self.install, i != install & PurchaseToken.installMask { return nil }
        return k
    }

    private static func checksum<B: RandomAccessCollection>(_ b: B) -> UInt16 where B.Element == UInt8, B.Index == Int {
        var h: UInt32 = 0x811C9DC5
        for i in 0..<14 { h = (h ^ UInt32(b[i])) &* 0x01000193 }
        return UInt16(truncatingIfNeeded: h ^ (h >> 16))
    }

    /// Canonical UUID text, "XXXXXXXX-XXXX-XXXX-XXXX-XXXXXXXXXXXX".
    /// Written into the string's own 36 bytes (the simulator writes one
    /// per charge: growing an array byte by byte cost 3,000 instructions).
    public var uuidString: String {
        let hex: StaticString = "0123456789ABCDEF"
        return String(unsafeUninitializedCapacity: 36) { out in
            var at = 0
            for i in 0..<16 {
                let byte = self.byte(i)
                if i == 4 || i == 6 || i == 8 || i == 10 { out[at] = UInt8(ascii: "-"); at += 1 }
                out[at] = hex.utf8Start[Int(byte >> 4)]
                out[at + 1] = hex.utf8Start[Int(byte & 15)]
                at += 2
            }
            return at
        }
    }

    /// Hex digits of either case, with dashes anywhere: exactly 16 bytes,
    /// or nil. Read in place into a fixed buffer: the simulator reads one per
    /// transaction it replays at open (an array grown digit by digit cost
    /// 2,800 instructions).
    public init?(uuidString: String) {
        var text = uuidString
        var raw: (UInt64, UInt64) = (0, 0)
        let ok: Bool = text.withUTF8 { u in
            withUnsafeMutableBytes(of: &raw) { out in
                var n = 0
                var hi: UInt8? = nil
                for c in u {
                    if c == UInt8(ascii: "-") { continue }
                    let v: UInt8
                    switch c {
                    case 0x30...0x39: v = c - 0x30
                    case 0x41...0x46: v = c - 0x41 + 10
                    case 0x61...0x66: v = c - 0x61 + 10
                    default: return false
                    }
                    if let h = hi {
                        guard n < 16 else { return false }
                        out[n] = h << 4 | v
                        n += 1
                        hi = nil
                    } else {
                        hi = v
                    }
                }
                return hi == nil && n == 16
            }
        }
        guard ok else { return nil }
        self.raw = raw
    }
}
