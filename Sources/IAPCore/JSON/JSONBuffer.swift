/// Writes JSON text into a byte buffer. Every string goes through
/// `appendString`, which escapes quotes, backslashes and all control
/// characters, and passes any other Unicode (emoji, right-to-left) as UTF-8.
public struct JSONBuffer {
    /// The bytes written, then zeros up to the allocated size: each append
    /// is one capacity check and one copy into the array's own memory
    /// (`Array.append(contentsOf:)` costs about a hundred instructions a
    /// call, and a message is tens of calls; thousands are built at an open).
    private var storage: [UInt8]
    private var length = 0

    public init(capacity: Int = 256) { storage = [UInt8](repeating: 0, count: max(capacity, 16)) }

    /// The JSON text written so far.
    public var bytes: [UInt8] { Array(storage[0..<length]) }

    /// The JSON text, without a copy; the buffer is left empty.
    public mutating func take() -> [UInt8] {
        storage.removeSubrange(length...)
        defer { storage = []; length = 0 }
        return storage
    }

    public var string: String { storage.withUnsafeBufferPointer { String(decoding: $0[0..<length], as: UTF8.self) } }

    /// Room for `n` more bytes (doubling, so appends stay linear).
    private mutating func reserve(_ n: Int) {
        guard length + n > storage.count else { return }
        storage.append(contentsOf: repeatElement(0, count: max(storage.count, length + n - storage.count)))
    }

    private mutating func write(_ p: UnsafeRawPointer, _ n: Int) {
        guard n > 0 else { return }
        reserve(n)
        let at = length
        storage.withUnsafeMutableBytes { dst in dst.baseAddress!.advanced(by: at).copyMemory(from: p, byteCount: n) }
        length += n
    }

    private mutating func write(_ byte: UInt8) {
        reserve(1)
        let at = length
        storage.withUnsafeMutableBufferPointer { $0[at] = byte }
        length += 1
    }

    public mutating func appendRaw(_ s: StaticString) { write(s.utf8Start, s.utf8CodeUnitCount) }

    mutating func bytesAppend(_ b: [UInt8]) { b.withUnsafeBytes { if let p = $0.baseAddress { write(p, $0.count) } } }

    /// `"` + `u` + `"` in one copy: what most strings need.
    private mutating func writeQuoted(_ u: UnsafeBufferPointer<UInt8>) {
        let n = u.count
        reserve(n + 2)
        let at = length
        storage.withUnsafeMutableBufferPointer { b in
            let p = b.baseAddress! + at
            p[0] = 0x22
            if n > 0 { (p + 1).update(from: u.baseAddress!, count: n) }
            p[n + 1] = 0x22
        }
        length += n + 2
    }

    /// `{"k":` (or `,"k":` when not `first`) in one copy: a message has
    /// about 25 field names.
    mutating func appendFieldName(_ k: StaticString, first: Bool) {
        let n = k.utf8CodeUnitCount
        reserve(n + 4)
        let at = length
        storage.withUnsafeMutableBufferPointer { b in
            let p = b.baseAddress! + at
            p[0] = first ? UInt8(ascii: "{") : UInt8(ascii: ",")
            p[1] = 0x22
            (p + 2).update(from: k.utf8Start, count: n)
            p[n + 2] = 0x22
            p[n + 3] = UInt8(ascii: ":")
        }
        length += n + 4
    }

    public mutating func appendString(_ s: String) {
        var s = s
        s.withUTF8 { u in
            if !u.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C || $0 == 0x7F }) {
                writeQuoted(u)
                return
            }
            write(0x22)
            // The runs between escapes are copied whole.
            var run = 0
            for i in 0..<u.count {
                let c = u[i]
                if c >= 0x20 && c != 0x22 && c != 0x5C && c != 0x7F { continue }
                if i > run { write(u.baseAddress! + run, i - run) }
                appendEscape(c)
                run = i + 1
            }
            if u.count > run { write(u.baseAddress! + run, u.count - run) }
            write(0x22)
        }
    }

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
    /// 5,000 of them).
    public mutating func appendInt(_ v: Int64) {
        // 20 bytes hold Int64.min's "-9223372036854775808".
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
        let n = withUnsafeMutableBytes(of: &digits) { d -> Int in
            var m = v.magnitude
            var i = 24
            repeat {
                i -= 1
                d[i] = UInt8(truncatingIfNeeded: m % 10) &+ 0x30
                m /= 10
            } while m > 0
            if v < 0 {
                i -= 1
                d[i] = UInt8(ascii: "-")
            }
            // Moved to the front, so the caller copies from offset 0.
            let count = 24 - i
            for j in 0..<count { d[j] = d[i + j] }
            return count
        }
        withUnsafeBytes(of: &digits) { write($0.baseAddress!, n) }
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
    private mutating func key(_ k: StaticString) {
        assert(JSONObjectWriter.needsNoEscape(k), "JSON field name \(k) needs escaping")
        buf.appendFieldName(k, first: first)
        first = false
    }

    private static func needsNoEscape(_ k: StaticString) -> Bool {
        UnsafeBufferPointer(start: k.utf8Start, count: k.utf8CodeUnitCount).allSatisfy { $0 >= 0x20 && $0 != 0x22 && $0 != 0x5C && $0 != 0x7F }
    }

    public mutating func string(_ k: StaticString, _ v: String) { key(k); buf.appendString(v) }
    /// A field whose name is data (a product ID): escaped like any string.
    public mutating func string(named k: String, _ v: String) {
        buf.appendRaw(first ? "{" : ",")
        first = false
        buf.appendString(k)
        buf.appendRaw(":")
        buf.appendString(v)
    }
    public mutating func string(_ k: StaticString, _ v: String?) {
        key(k)
        if let v { buf.appendString(v) } else { buf.appendRaw("null") }
    }
    public mutating func int(_ k: StaticString, _ v: Int64) { key(k); buf.appendInt(v) }
    public mutating func int(_ k: StaticString, _ v: Int64?) {
        key(k)
        if let v { buf.appendInt(v) } else { buf.appendRaw("null") }
    }
    public mutating func bool(_ k: StaticString, _ v: Bool) { key(k); if v { buf.appendRaw("true") } else { buf.appendRaw("false") } }
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

