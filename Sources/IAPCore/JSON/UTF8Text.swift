/// Strings from bytes that must be valid UTF-8, on every OS the package
/// supports.
///
/// The standard library's `String(validating:as:)` is Swift 6.0 API that
/// Apple platforms have only from iOS 18 / macOS 15, and the package runs on
/// iOS 15 / macOS 12 (issue 20); Foundation is not linked on Linux. So the
/// check is ours: Unicode's well-formed UTF-8 (Table 3-7 of the standard),
/// the same bytes `String(validating:)` accepts (a test compares the two on
/// Linux over generated and exhaustive inputs), then `String(decoding:)`,
/// which repairs nothing in bytes that are already valid.
public enum UTF8Text {
    /// The string the bytes spell, or nil when they are not well-formed UTF-8
    /// (an overlong form, a surrogate, a code point above U+10FFFF, a stray
    /// or missing continuation byte).
    public static func string(validating bytes: UnsafeBufferPointer<UInt8>) -> String? {
        guard isValid(bytes) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    public static func string(validating bytes: [UInt8]) -> String? {
        bytes.withUnsafeBufferPointer { string(validating: $0) }
    }

    public static func string(validating bytes: ArraySlice<UInt8>) -> String? {
        bytes.withUnsafeBufferPointer { string(validating: $0) }
    }

    /// Whether the bytes are well-formed UTF-8.
    public static func isValid(_ b: UnsafeBufferPointer<UInt8>) -> Bool {
        let n = b.count
        var i = 0
        while i < n {
            let c = b[i]
            if c < 0x80 { i += 1; continue }
            // The first continuation byte's range depends on the lead byte
            // (Table 3-7): it excludes overlong forms (E0, F0), surrogates
            // (ED) and code points above U+10FFFF (F4).
            let width: Int
            var low: UInt8 = 0x80, high: UInt8 = 0xBF
            switch c {
            case 0xC2...0xDF: width = 2
            case 0xE0: width = 3; low = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: width = 3
            case 0xED: width = 3; high = 0x9F
            case 0xF0: width = 4; low = 0x90
            case 0xF1...0xF3: width = 4
            case 0xF4: width = 4; high = 0x8F
            default: return false  // 80-C1 (a continuation, an overlong two-byte lead), F5-FF
            }
            guard n - i >= width else { return false }
            let c1 = b[i + 1]
            guard c1 >= low, c1 <= high else { return false }
            var k = 2
            while k < width {
                guard b[i + k] & 0xC0 == 0x80 else { return false }
                k += 1
            }
            i += width
        }
        return true
    }
}

extension UTF8Text {
    /// `String(n)`, without the standard library's generic formatting (a
    /// profile of the open read ~670 instructions a call, three calls a
    /// transaction the simulated store re-delivers): the digits are written
    /// backwards into a stack buffer, and a string of up to 15 bytes (every
    /// transaction ID below 10^15) is made inline, with no allocation.
    public static func decimal(_ n: Int64) -> String { decimal(n.magnitude, negative: n < 0) }

    public static func decimal(_ n: UInt64) -> String { decimal(n, negative: false) }

    private static func decimal(_ magnitude: UInt64, negative: Bool) -> String {
        // 20 digits at most (UInt64.max), or 19 and a sign (Int64.min).
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { buf in
            let end = buf.baseAddress! + 20
            var start = writeDigits(magnitude, before: end)
            if negative {
                start -= 1
                start.pointee = 0x2D  // "-"
            }
            return String(decoding: UnsafeBufferPointer(start: start, count: end - start), as: UTF8.self)
        }
    }

    /// Writes the decimal digits of `m` backwards, the last just before
    /// `end`; returns where the first went. The room is the caller's (20
    /// bytes hold any UInt64). Shared by `decimal` and the JSON writer's
    /// `appendInt`.
    static func writeDigits(_ m: UInt64, before end: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
        // Two digits a division, from a table of the pairs "00" to "99": a
        // 13-digit millisecond date is 7 steps, not 13.
        let pairs = digitPairs.utf8Start
        var q = end
        var v = m
        while v >= 100 {
            let r = Int(v % 100) &* 2
            v /= 100
            q -= 2
            q[0] = pairs[r]
            q[1] = pairs[r &+ 1]
        }
        if v >= 10 {
            let r = Int(v) &* 2
            q -= 2
            q[0] = pairs[r]
            q[1] = pairs[r &+ 1]
        } else {
            q -= 1
            q.pointee = UInt8(truncatingIfNeeded: v) &+ 0x30
        }
        return q
    }

    private static var digitPairs: StaticString {
        "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899"
    }
}
