/// Writes JSON text into a byte buffer. Every string goes through
/// `appendString`, which escapes quotes, backslashes and all control
/// characters, and passes any other Unicode (emoji, right-to-left) as UTF-8.
public struct JSONBuffer {
    public private(set) var bytes: [UInt8] = []

    public init(capacity: Int = 256) { bytes.reserveCapacity(capacity) }

    public var string: String { String(decoding: bytes, as: UTF8.self) }

    public mutating func appendRaw(_ s: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: s.utf8Start, count: s.utf8CodeUnitCount))
    }

    public mutating func appendString(_ s: String) {
        var s = s
        s.withUTF8 { u in
            bytes.append(0x22)
            // Runs that need no escape are copied whole (most strings are one run).
            var run = 0
            for i in 0..<u.count {
                let c = u[i]
                if c >= 0x20 && c != 0x22 && c != 0x5C && c != 0x7F { continue }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: u[run..<i]))
                appendEscape(c)
                run = i + 1
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: u[run...]))
            bytes.append(0x22)
        }
    }

    private mutating func appendEscape(_ c: UInt8) {
        switch c {
        case 0x22: bytes.append(0x5C); bytes.append(0x22)
        case 0x5C: bytes.append(0x5C); bytes.append(0x5C)
        case 0x0A: bytes.append(0x5C); bytes.append(UInt8(ascii: "n"))
        case 0x0D: bytes.append(0x5C); bytes.append(UInt8(ascii: "r"))
        case 0x09: bytes.append(0x5C); bytes.append(UInt8(ascii: "t"))
        default:
            // Other control characters and DEL: \u00XX.
            let hex: StaticString = "0123456789abcdef"
            bytes.append(contentsOf: [0x5C, UInt8(ascii: "u"), 0x30, 0x30, hex.utf8Start[Int(c >> 4)], hex.utf8Start[Int(c & 15)]])
        }
    }

    public mutating func appendInt(_ v: Int64) { bytes.append(contentsOf: String(v).utf8) }

    public mutating func appendValue(_ v: JSONValue) {
        switch v {
        case .null: appendRaw("null")
        case .bool(let x): if x { appendRaw("true") } else { appendRaw("false") }
        case .number(let text): bytes.append(contentsOf: text.utf8)
        case .string(let s): appendString(s)
        case .array(let a):
            bytes.append(UInt8(ascii: "["))
            for (i, e) in a.enumerated() {
                if i > 0 { bytes.append(UInt8(ascii: ",")) }
                appendValue(e)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let o):
            bytes.append(UInt8(ascii: "{"))
            for (i, k) in o.keys.sorted().enumerated() {
                if i > 0 { bytes.append(UInt8(ascii: ",")) }
                appendString(k)
                bytes.append(UInt8(ascii: ":"))
                appendValue(o[k]!)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }
}

/// Builds one JSON object field by field, in the order written.
public struct JSONObjectWriter {
    // Most messages fit (a "7" without a JWS is under 500 bytes): no regrowth.
    private var buf = JSONBuffer(capacity: 512)
    private var first = true

    public init() { buf.appendRaw("{") }

    private mutating func key(_ k: String) {
        if !first { buf.appendRaw(",") }
        first = false
        buf.appendString(k)
        buf.appendRaw(":")
    }

    public mutating func string(_ k: String, _ v: String) { key(k); buf.appendString(v) }
    public mutating func string(_ k: String, _ v: String?) {
        key(k)
        if let v { buf.appendString(v) } else { buf.appendRaw("null") }
    }
    public mutating func int(_ k: String, _ v: Int64) { key(k); buf.appendInt(v) }
    public mutating func int(_ k: String, _ v: Int64?) {
        key(k)
        if let v { buf.appendInt(v) } else { buf.appendRaw("null") }
    }
    public mutating func bool(_ k: String, _ v: Bool) { key(k); if v { buf.appendRaw("true") } else { buf.appendRaw("false") } }
    public mutating func value(_ k: String, _ v: JSONValue) { key(k); buf.appendValue(v) }
    /// Inserts JSON text the caller already built (must be valid JSON).
    public mutating func raw(_ k: String, _ json: [UInt8]) { key(k); buf.bytesAppend(json) }

    public mutating func finish() -> [UInt8] {
        buf.appendRaw("}")
        return buf.bytes
    }
}

extension JSONBuffer {
    mutating func bytesAppend(_ b: [UInt8]) { bytes.append(contentsOf: b) }
}
