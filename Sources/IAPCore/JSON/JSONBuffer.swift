/// Writes JSON text into a byte buffer. Every string goes through
/// `appendString`, which escapes quotes, backslashes and all control
/// characters, and passes any other Unicode (emoji, right-to-left) as UTF-8.
///
/// The bytes go into a `ByteBuffer`: each append is one capacity check and
/// one copy (a `"7"` is about 40 appends, and one is rendered per purchase
/// and per result at an open).
public struct JSONBuffer {
    private var out: ByteBuffer

    public init(capacity: Int = 256) { out = ByteBuffer(capacity: capacity) }

    /// The JSON text written so far.
    public var bytes: [UInt8] { out.bytes }

    /// The JSON text; the buffer is left empty.
    public mutating func take() -> [UInt8] {
        defer { out.removeAll() }
        return out.bytes
    }

    public var string: String { out.withBytes { String(decoding: $0, as: UTF8.self) } }

    private mutating func write(_ p: UnsafeRawPointer, _ n: Int) { out.append(p, n) }

    private mutating func write(_ byte: UInt8) { out.append(byte) }

    public mutating func appendRaw(_ s: StaticString) { write(s.utf8Start, s.utf8CodeUnitCount) }

    mutating func bytesAppend(_ b: [UInt8]) { b.withUnsafeBytes { if let p = $0.baseAddress { write(p, $0.count) } } }

    /// `{"k":` (or `,"k":` when not `first`) in one copy: a message has
    /// about 25 field names.
    mutating func appendFieldName(_ k: StaticString, first: Bool) {
        let n = k.utf8CodeUnitCount + 4
        JSONBuffer.writeFieldName(k, first: first, at: out.reserve(n))
        out.advance(by: n)
    }

    /// Writes `{"k":` or `,"k":` at `p` (room reserved by the caller:
    /// `k`'s length + 4 bytes).
    @inline(__always)
    private static func writeFieldName(_ k: StaticString, first: Bool, at p: UnsafeMutablePointer<UInt8>) {
        let n = k.utf8CodeUnitCount
        p[0] = first ? UInt8(ascii: "{") : UInt8(ascii: ",")
        p[1] = 0x22
        ByteBuffer.copy(p + 2, k.utf8Start, n)
        p[n + 2] = 0x22
        p[n + 3] = UInt8(ascii: ":")
    }

    /// `,"k":"v"` (`{` first) or, `quoted` false, `,"k":v`, in one
    /// reservation: a field whose value the SDK itself names (a result code,
    /// a kind, an origin, `true`, `null`), with no `String` and no escape scan.
    mutating func appendField(_ k: StaticString, first: Bool, _ v: StaticString, quoted: Bool) {
        let n = k.utf8CodeUnitCount + 4
        let m = v.utf8CodeUnitCount
        let q = quoted ? 1 : 0
        let total = n + m + 2 * q
        let p = out.reserve(total)
        JSONBuffer.writeFieldName(k, first: first, at: p)
        if quoted { p[n] = 0x22; p[total - 1] = 0x22 }
        ByteBuffer.copy(p + n + q, v.utf8Start, m)
        out.advance(by: total)
    }

    /// `,"k":"s"` (`{` first) in one reservation when `s` needs no escape
    /// (nearly every value: IDs, prices, codes); otherwise the field name,
    /// then `appendString`.
    mutating func appendField(_ k: StaticString, first: Bool, string s: String) {
        let done = s.utf8.withContiguousStorageIfAvailable { u -> Bool in
            if JSONBuffer.needsEscape(u) { return false }
            let n = k.utf8CodeUnitCount + 4
            let m = u.count
            let total = n + m + 2
            let p = out.reserve(total)
            JSONBuffer.writeFieldName(k, first: first, at: p)
            p[n] = 0x22
            if m > 0 { ByteBuffer.copy(p + n + 1, u.baseAddress!, m) }
            p[total - 1] = 0x22
            out.advance(by: total)
            return true
        }
        if done != true {
            appendFieldName(k, first: first)
            appendString(s)
        }
    }

    public mutating func appendString(_ s: String) {
        // Native and small strings are contiguous UTF-8; a bridged string
        // (an NSString on Apple platforms) is copied once to be.
        if s.utf8.withContiguousStorageIfAvailable({ appendUTF8($0) }) == nil {
            var copy = s
            copy.withUTF8 { appendUTF8($0) }
        }
    }

    private mutating func appendUTF8(_ u: UnsafeBufferPointer<UInt8>) {
        let n = u.count
        if !JSONBuffer.needsEscape(u) {
            // `"` + `u` + `"` in one copy: what most strings need.
            let p = out.reserve(n + 2)
            p[0] = 0x22
            if n > 0 { ByteBuffer.copy(p + 1, u.baseAddress!, n) }
            p[n + 1] = 0x22
            out.advance(by: n + 2)
            return
        }
        write(0x22)
        // The runs between escapes are copied whole.
        var run = 0
        for i in 0..<n {
            let c = u[i]
            if !JSONBuffer.isEscaped(c) { continue }
            if i > run { write(u.baseAddress! + run, i - run) }
            appendEscape(c)
            run = i + 1
        }
        if n > run { write(u.baseAddress! + run, n - run) }
        write(0x22)
    }

    /// True when `u` holds a byte JSON must escape: a control character,
    /// `"`, `\` or DEL. Eight bytes at a time: a word has a byte below 0x20,
    /// or equal to `c`, when `(x - 0x20..)` / `(x ^ c.. ) - 0x01..` borrows
    /// into the top bit of a byte whose own top bit is clear (exact for
    /// "any such byte"; bytes of 0x80 and above, UTF-8's, never match).
    static func needsEscape(_ u: UnsafeBufferPointer<UInt8>) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let high: UInt64 = 0x8080_8080_8080_8080
        @inline(__always) func hasZeroByte(_ v: UInt64) -> Bool { (v &- ones) & ~v & high != 0 }
        guard let p = u.baseAddress else { return false }
        let n = u.count
        var i = 0
        while i + 8 <= n {
            let x = UInt64(littleEndian: UnsafeRawPointer(p + i).loadUnaligned(as: UInt64.self))
            if (x &- 0x20 &* ones) & ~x & high != 0 || hasZeroByte(x ^ (0x22 &* ones))
                || hasZeroByte(x ^ (0x5C &* ones)) || hasZeroByte(x ^ (0x7F &* ones)) {
                return true
            }
            i += 8
        }
        while i < n {
            if isEscaped(p[i]) { return true }
            i += 1
        }
        return false
    }

    /// The one byte test behind every escape: a control character, `"`,
    /// `\` or DEL.
    @inline(__always)
    static func isEscaped(_ c: UInt8) -> Bool { c < 0x20 || c == 0x22 || c == 0x5C || c == 0x7F }

    private mutating func appendEscape(_ c: UInt8) {
        switch c {
        case 0x22: write(0x5C); write(0x22)
        case 0x5C: write(0x5C); write(0x5C)
        case 0x0A: write(0x5C); write(UInt8(ascii: "n"))
        case 0x0D: write(0x5C); write(UInt8(ascii: "r"))
        case 0x09: write(0x5C); write(UInt8(ascii: "t"))
        default:
            // Other control characters and DEL: \u00XX.
            let hex: StaticString = "0123456789abcdef"
            appendRaw("\\u00")
            write(hex.utf8Start[Int(c >> 4)])
            write(hex.utf8Start[Int(c & 15)])
        }
    }

    /// Decimal digits, written straight into the buffer: no String is made
    /// (a "7" has five numbers, and an open with 1,000 results renders
    /// 5,000 of them). `quoted`: as a JSON string (`"123"`), the way keys
    /// are sent. Written backwards into 24 bytes of stack (20 digits, a
    /// sign, two quotes), then copied: no digit count first.
    public mutating func appendInt(_ v: Int64, quoted: Bool = false) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 24) { tmp in
            let last = tmp.baseAddress! + 24
            var end = last
            if quoted {
                end -= 1
                end.pointee = 0x22
            }
            var start = UTF8Text.writeDigits(v.magnitude, before: end)
            if v < 0 {
                start -= 1
                start.pointee = UInt8(ascii: "-")
            }
            if quoted {
                start -= 1
                start.pointee = 0x22
            }
            let n = last - start
            ByteBuffer.copy(out.reserve(n), start, n)
            out.advance(by: n)
        }
    }

    public mutating func appendValue(_ v: JSONValue) {
        switch v {
        case .null: appendRaw("null")
        case .bool(let x): if x { appendRaw("true") } else { appendRaw("false") }
        case .number(let text): var t = text; t.withUTF8 { if let p = $0.baseAddress { write(p, $0.count) } }
        case .string(let s): appendString(s)
        case .array(let a):
            write(UInt8(ascii: "["))
            for (i, e) in a.enumerated() {
                if i > 0 { write(UInt8(ascii: ",")) }
                appendValue(e)
            }
            write(UInt8(ascii: "]"))
        case .object(let o):
            write(UInt8(ascii: "{"))
            for (i, k) in o.keys.sorted().enumerated() {
                if i > 0 { write(UInt8(ascii: ",")) }
                appendString(k)
                write(UInt8(ascii: ":"))
                appendValue(o[k]!)
            }
            write(UInt8(ascii: "}"))
        }
    }
}

/// Builds one JSON object field by field, in the order written.
public struct JSONObjectWriter {
    // Most messages fit (a "7" without a JWS is under 500 bytes): no regrowth.
    private var buf = JSONBuffer(capacity: 512)
    private var first = true

    public init() {}

    /// A field name written in the source: copied as it is, with no escape
    /// scan (a "7" has about 25 of them). Checked once per name in debug
    /// builds: it must need no escape.
    private mutating func key(_ k: StaticString) { buf.appendFieldName(k, first: opening(k)) }

    /// Whether field `k` opens the object (it then starts with `{`); every
    /// field after it does not. Checks the name in debug builds.
    private mutating func opening(_ k: StaticString) -> Bool {
        assert(JSONObjectWriter.needsNoEscape(k), "JSON field name \(k) needs escaping")
        defer { first = false }
        return first
    }

    private static func needsNoEscape(_ k: StaticString) -> Bool {
        !JSONBuffer.needsEscape(UnsafeBufferPointer(start: k.utf8Start, count: k.utf8CodeUnitCount))
    }

    public mutating func string(_ k: StaticString, _ v: String) { buf.appendField(k, first: opening(k), string: v) }
    /// A string the SDK itself names (`"type":"7"`, a kind, an origin):
    /// name and value in one copy each, no escape scan (checked in debug).
    public mutating func text(_ k: StaticString, _ v: StaticString) { literal(k, v, quoted: true) }
    /// JSON text the SDK itself writes (`true`, `null`) as the value.
    private mutating func literal(_ k: StaticString, _ v: StaticString, quoted: Bool) {
        assert(JSONObjectWriter.needsNoEscape(v), "JSON literal \(k): \(v) needs escaping")
        buf.appendField(k, first: opening(k), v, quoted: quoted)
    }
    /// `"k":null`.
    public mutating func null(_ k: StaticString) { literal(k, "null", quoted: false) }
    /// A field whose name is data (a product ID): escaped like any string.
    public mutating func string(named k: String, _ v: String) {
        buf.appendRaw(first ? "{" : ",")
        first = false
        buf.appendString(k)
        buf.appendRaw(":")
        buf.appendString(v)
    }
    public mutating func string(_ k: StaticString, _ v: String?) {
        if let v { string(k, v) } else { null(k) }
    }
    public mutating func int(_ k: StaticString, _ v: Int64) { key(k); buf.appendInt(v) }
    /// An integer sent as a JSON string (`"key":"123"`, as keys are), with
    /// no String made for it.
    public mutating func intString(_ k: StaticString, _ v: Int64) { key(k); buf.appendInt(v, quoted: true) }
    public mutating func int(_ k: StaticString, _ v: Int64?) {
        if let v { key(k); buf.appendInt(v) } else { null(k) }
    }
    public mutating func bool(_ k: StaticString, _ v: Bool) { literal(k, v ? "true" : "false", quoted: false) }
    public mutating func value(_ k: StaticString, _ v: JSONValue) { key(k); buf.appendValue(v) }
    /// Inserts JSON text the caller already built (must be valid JSON).
    public mutating func raw(_ k: StaticString, _ json: [UInt8]) { key(k); buf.bytesAppend(json) }

    public mutating func finish() -> [UInt8] {
        if first { buf.appendRaw("{") }
        first = false
        buf.appendRaw("}")
        return buf.take()
    }
}

