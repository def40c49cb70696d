/// A strict RFC 8259 parser over UTF-8 bytes: rejects invalid UTF-8, raw
/// control characters in strings, lone surrogates, duplicate object keys,
/// trailing garbage and nesting deeper than `maxDepth`. It never traps:
/// every input yields a value or a `JSONParseError` (fuzzed, issue 7).
public struct JSONParser {
    public static let defaultMaxDepth = 64

    public static func parse(_ text: String, maxDepth: Int = defaultMaxDepth) throws(JSONParseError) -> JSONValue {
        try parse(bytes: Array(text.utf8), maxDepth: maxDepth)
    }

    public static func parse(bytes: [UInt8], maxDepth: Int = defaultMaxDepth) throws(JSONParseError) -> JSONValue {
        try bytes.withUnsafeBufferPointer { buf throws(JSONParseError) in try parse(bytes: buf, maxDepth: maxDepth) }
    }

    public static func parse(bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int = defaultMaxDepth) throws(JSONParseError) -> JSONValue {
        var p = JSONParser(bytes: bytes, maxDepth: maxDepth)
        // A UTF-8 byte order mark is tolerated at the start (some editors write one).
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { p.pos = 3 }
        p.skipSpace()
        let v = try p.value(depth: 0)
        p.skipSpace()
        if p.pos != bytes.count { throw p.fail("unexpected trailing characters") }
        return v
    }

    private let b: UnsafeBufferPointer<UInt8>
    private var pos = 0
    private let maxDepth: Int

    private init(bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
        self.b = bytes
        self.maxDepth = maxDepth
    }

    private func fail(_ reason: String) -> JSONParseError { JSONParseError(offset: pos, reason: reason) }

    private mutating func skipSpace() {
        while pos < b.count {
            let c = b[pos]
            if c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 { pos += 1 } else { break }
        }
    }

    private mutating func value(depth: Int) throws(JSONParseError) -> JSONValue {
        guard pos < b.count else { throw fail("unexpected end of input") }
        switch b[pos] {
        case UInt8(ascii: "{"): return try object(depth: depth + 1)
        case UInt8(ascii: "["): return try array(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw fail("unexpected character")
        }
    }

    private mutating func literal(_ word: StaticString) throws(JSONParseError) {
        let n = word.utf8CodeUnitCount
        guard pos + n <= b.count else { throw fail("unexpected end of input") }
        let w = word.utf8Start
        for i in 0..<n where b[pos + i] != w[i] { throw fail("invalid literal") }
        pos += n
    }

    private mutating func object(depth: Int) throws(JSONParseError) -> JSONValue {
        guard depth <= maxDepth else { throw fail("nesting deeper than \(maxDepth)") }
        pos += 1
        skipSpace()
        if pos < b.count, b[pos] == UInt8(ascii: "}") { pos += 1; return .object([:]) }
        // The members first, then a dictionary of exactly their number: no
        // rehashing as it grows (thousands of objects are read at an open).
        var members: [(String, JSONValue)] = []
        members.reserveCapacity(8)
        while true {
            skipSpace()
            guard pos < b.count, b[pos] == UInt8(ascii: "\"") else { throw fail("expected a string key") }
            let key = try string()
            skipSpace()
            guard pos < b.count, b[pos] == UInt8(ascii: ":") else { throw fail("expected ':'") }
            pos += 1
            skipSpace()
            members.append((key, try value(depth: depth)))
            skipSpace()
            guard pos < b.count else { throw fail("unexpected end of input") }
            if b[pos] == UInt8(ascii: ",") { pos += 1; continue }
            if b[pos] == UInt8(ascii: "}") {
                pos += 1
                var out = [String: JSONValue](minimumCapacity: members.count)
                for (k, v) in members where out.updateValue(v, forKey: k) != nil {
                    throw fail("duplicate key \"\(k)\"")
                }
                return .object(out)
            }
            throw fail("expected ',' or '}'")
        }
    }

    private mutating func array(depth: Int) throws(JSONParseError) -> JSONValue {
        guard depth <= maxDepth else { throw fail("nesting deeper than \(maxDepth)") }
        pos += 1
        var out: [JSONValue] = []
        skipSpace()
        if pos < b.count, b[pos] == UInt8(ascii: "]") { pos += 1; return .array(out) }
        while true {
            skipSpace()
            out.append(try value(depth: depth))
            skipSpace()
            guard pos < b.count else { throw fail("unexpected end of input") }
            if b[pos] == UInt8(ascii: ",") { pos += 1; continue }
            if b[pos] == UInt8(ascii: "]") { pos += 1; return .array(out) }
            throw fail("expected ',' or ']'")
        }
    }

    private mutating func number() throws(JSONParseError) -> JSONValue {
        let start = pos
        if b[pos] == UInt8(ascii: "-") { pos += 1 }
        guard pos < b.count, isDigit(b[pos]) else { throw fail("invalid number") }
        if b[pos] == UInt8(ascii: "0") { pos += 1 } else { while pos < b.count, isDigit(b[pos]) { pos += 1 } }
        if pos < b.count, b[pos] == UInt8(ascii: ".") {
            pos += 1
            guard pos < b.count, isDigit(b[pos]) else { throw fail("invalid number") }
            while pos < b.count, isDigit(b[pos]) { pos += 1 }
        }
        if pos < b.count, b[pos] == UInt8(ascii: "e") || b[pos] == UInt8(ascii: "E") {
            pos += 1
            if pos < b.count, b[pos] == UInt8(ascii: "+") || b[pos] == UInt8(ascii: "-") { pos += 1 }
            guard pos < b.count, isDigit(b[pos]) else { throw fail("invalid number") }
            while pos < b.count, isDigit(b[pos]) { pos += 1 }
        }
        guard pos - start <= 400 else { throw fail("number too long") }
        return .number(String(decoding: UnsafeBufferPointer(rebasing: b[start..<pos]), as: UTF8.self))
    }

    @inline(__always) private func isDigit(_ c: UInt8) -> Bool { c >= 0x30 && c <= 0x39 }

    private mutating func hex4() throws(JSONParseError) -> UInt32 {
        guard pos + 4 <= b.count else { throw fail("truncated \\u escape") }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let c = b[pos]
            let d: UInt32
            switch c {
            case 0x30...0x39: d = UInt32(c - 0x30)
            case 0x41...0x46: d = UInt32(c - 0x41 + 10)
            case 0x61...0x66: d = UInt32(c - 0x61 + 10)
            default: throw fail("invalid \\u escape")
            }
            v = v << 4 | d
            pos += 1
        }
        return v
    }

    private mutating func string() throws(JSONParseError) -> String {
        pos += 1  // opening quote
        // Fast path, most strings: no escape. One String straight from the
        // input (no heap at all for keys of 15 bytes or less).
        var end = pos
        var high: UInt8 = 0  // any byte >= 0x80 sets its top bit
        while end < b.count, b[end] != UInt8(ascii: "\""), b[end] != UInt8(ascii: "\\"), b[end] >= 0x20 { high |= b[end]; end += 1 }
        if end < b.count, b[end] == UInt8(ascii: "\"") {
            if high < 0x80 {
                // ASCII is valid UTF-8: no validation pass.
                let s = String(decoding: UnsafeBufferPointer(rebasing: b[pos..<end]), as: UTF8.self)
                pos = end + 1
                return s
            }
            guard let s = UTF8Text.string(validating: UnsafeBufferPointer(rebasing: b[pos..<end])) else {
                pos = end
                throw fail("invalid UTF-8 in string")
            }
            pos = end + 1
            return s
        }
        var out: [UInt8] = []
        var runStart = pos
        while true {
            guard pos < b.count else { throw fail("unterminated string") }
            let c = b[pos]
            if c == UInt8(ascii: "\"") {
                out.append(contentsOf: UnsafeBufferPointer(rebasing: b[runStart..<pos]))
                pos += 1
                break
            }
            if c < 0x20 { throw fail("control character in string") }
            if c != UInt8(ascii: "\\") { pos += 1; continue }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: b[runStart..<pos]))
            pos += 1
            guard pos < b.count else { throw fail("unterminated escape") }
            let e = b[pos]
            pos += 1
            switch e {
            case UInt8(ascii: "\""): out.append(0x22)
            case UInt8(ascii: "\\"): out.append(0x5C)
            case UInt8(ascii: "/"): out.append(0x2F)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try hex4()
                if scalar >= 0xD800 && scalar < 0xDC00 {
                    guard pos + 2 <= b.count, b[pos] == UInt8(ascii: "\\"), b[pos + 1] == UInt8(ascii: "u") else {
                        throw fail("lone surrogate in \\u escape")
                    }
                    pos += 2
                    let low = try hex4()
                    guard low >= 0xDC00 && low < 0xE000 else { throw fail("invalid surrogate pair") }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else if scalar >= 0xDC00 && scalar < 0xE000 {
                    throw fail("lone surrogate in \\u escape")
                }
                guard let u = Unicode.Scalar(scalar) else { throw fail("invalid \\u escape") }
                out.append(contentsOf: UTF8.encode(u)!)
            default: throw fail("invalid escape")
            }
            runStart = pos
        }
        guard let s = UTF8Text.string(validating: out) else { throw fail("invalid UTF-8 in string") }
        return s
    }
}
