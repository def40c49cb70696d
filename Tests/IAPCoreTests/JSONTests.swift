import IAPCore
import Testing

@Suite("JSON parser and writer")
struct JSONTests {
    /// 0, ±1, Int64.min and .max and their neighbours, each power of ten and its neighbours.
    static let edgeIntegers: [Int64] = {
        var values: [Int64] = [0, 1, -1, .max, .min, .max - 1, .min + 1]
        var p: Int64 = 1
        for _ in 0..<18 {
            p *= 10
            values += [p - 1, p, p + 1, -(p - 1), -p, -(p + 1)]
        }
        return values
    }()

    @Test("accepts valid documents and keeps number literals exact")
    func accepts() throws {
        let v = try JSONParser.parse(#"{"a":[1,-2.5e3,true,false,null],"k":"9223372036854775807","n":9223372036854775807,"s":"\u00e9\ud83d\ude00"}"#)
        #expect(v["n"]?.int64Value == Int64.max)
        #expect(v["s"]?.stringValue == "é😀")
        #expect(v["a"]?.arrayValue?.count == 5)
        #expect(v["a"]?.arrayValue?[1].doubleValue == -2500)
    }

    @Test("refuses malformed input with an offset", arguments: [
        "", "{", "[1,]", "{\"a\" 1}", "tru", "01", "1.", "\"\\x\"", "\"a\u{01}\"", "{\"a\":1}x", "[\"\\ud800\"]",
        "{\"a\":1,\"a\":2}", "-", "1e", "\"\\u12\"",
    ])
    func refuses(_ text: String) {
        #expect(throws: JSONParseError.self) { try JSONParser.parse(text) }
    }

    @Test("refuses invalid UTF-8 and deep nesting")
    func refusesBytes() {
        #expect(throws: JSONParseError.self) { try JSONParser.parse(bytes: [0x22, 0xff, 0xfe, 0x22]) }
        #expect(throws: JSONParseError.self) { try JSONParser.parse(String(repeating: "[", count: 100) + String(repeating: "]", count: 100)) }
        #expect((try? JSONParser.parse(String(repeating: "[", count: 60) + String(repeating: "]", count: 60))) != nil)
    }

    @Test("every string survives a write and a parse", arguments: [
        "plain", "quote \" and backslash \\", "controls \u{00}\u{01}\u{1f}\u{7f}\n\r\t", "emoji 👩‍👩‍👧‍👦💰",
        "right-to-left سجل تاريخ لمدة عام", "mixed ‏עברית‎ and e\u{301}", "/slash/", "",
    ])
    func roundTrip(_ s: String) throws {
        var w = JSONObjectWriter()
        w.string("s", s)
        let bytes = w.finish()
        #expect(!bytes.contains(0x00) && !bytes.contains(0x0a))
        #expect(try JSONParser.parse(bytes: bytes)["s"]?.stringValue == s)
    }

    @Test("integers are written as Swift writes them: 0, ±1, each power of ten and its neighbours, Int64.min and .max, 100,000 random values")
    func integers() throws {
        var values = JSONTests.edgeIntegers
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<100_000 { values.append(Int64(bitPattern: rng.next()) >> Int64(rng.next() % 63)) }
        for v in values {
            var w = JSONObjectWriter()
            w.int("n", v)
            let text = String(decoding: w.finish(), as: UTF8.self)
            guard text == "{\"n\":\(v)}" else {
                Issue.record("\(v) written as \(text)")
                return
            }
        }
    }
}
