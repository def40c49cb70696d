import IAPCore
import Testing

/// JSONFields, the one-pass reader of the top-level fields of what
/// JSONObjectWriter wrote, against the full parser.
@Suite("JSON fields (one pass)")
struct JSONFieldsTests {
    @Test("a whole object: every field, every kind of value")
    func whole() throws {
        var w = JSONObjectWriter()
        w.string("s", "a \"q\" \\ é😀\n")
        w.int("i", -2_000_000_000_000_001)
        w.int("big", Int64.max)
        w.bool("t", true)
        w.bool("f", false)
        w.string("n", nil)
        w.value("o", .object(["s": .string("}"), "a": .array([.null, .string("]")])]))
        w.value("a", .array([.number("1"), .number("2")]))
        let f = JSONFields(w.finish())
        #expect(f.isComplete)
        #expect(f["s"]?.stringValue == "a \"q\" \\ é😀\n")
        #expect(f["i"]?.int64Value == -2_000_000_000_000_001)
        #expect(f["big"]?.int64Value == Int64.max)
        #expect(f["t"]?.boolValue == true && f["f"]?.boolValue == false)
        #expect(f["n"]?.isNull == true && f["n"]?.stringValue == nil)
        #expect(f["o"]?.value?["s"]?.stringValue == "}")
        #expect(f["a"]?.value?.arrayValue?.count == 2)
        #expect(f["missing"] == nil)
        #expect(f["i"]?.stringValue == nil && f["s"]?.int64Value == nil && f["s"]?.boolValue == nil)
    }

    @Test("integers as JSONValue reads them: 5.0 and 1e3 are integers, 1.5 and 1e300 are not")
    func integers() {
        for (text, expected) in [("5.0", Int64(5)), ("1e3", 1000), ("1.5", nil), ("1e300", nil), ("-0", 0), ("-", nil)] as [(String, Int64?)] {
            let f = JSONFields(Array(#"{"v":\#(text)}"#.utf8))
            #expect(f["v"]?.int64Value == expected, "\(text)")
        }
    }

    @Test("damage: the fields before it are kept and the object is not complete", arguments: [
        #"{"a":"x","b""#, #"{"a":"x","b":"#, #"{"a":"x" "b":1}"#, #"{"a":"x","b":{"#, #"{"a":"x","b":"y"#,
        #"{"a":"x","b":1"#, #"{"a":"x"}junk"#, #"{"a":"x",}"#,
    ])
    func damaged(_ text: String) {
        let f = JSONFields(Array(text.utf8))
        #expect(f["a"]?.stringValue == "x")
        #expect(!f.isComplete)
    }

    @Test("garbage never traps", arguments: ["", "{", "}", "[1]", #"{""#, #"{"a"#, "{\"\\", "{}", #"{"":1}"#])
    func garbage(_ text: String) {
        let f = JSONFields(Array(text.utf8))
        #expect(f["a"] == nil)
        #expect(f.isComplete == (text == "{}" || text == #"{"":1}"#))
    }

    /// A JSONObjectWriter object with some of `names` in random order, each
    /// a bool, an integer, null, a nested object or a string of awkward
    /// characters (quotes, backslashes, controls, emoji, JSON punctuation).
    static func randomObject(names: [String], using rng: inout SystemRandomNumberGenerator) -> [UInt8] {
        let alphabet: [String] = ["a", "Z", "0", "\"", "\\", "\n", "\u{01}", "é", "😀", ",", "}", ":", "{", "["]
        // The writer's field names are literals; a name that is data (and
        // may need escaping, as "k\"q") goes through `string(named:)`.
        let literal: [String: StaticString] = ["productID": "productID", "kind": "kind", "id": "id", "n": "n", "flag": "flag",
                                               "nested": "nested", "list": "list", "empty": "empty",
                                               "originalTransactionID": "originalTransactionID", "origin": "origin",
                                               "clickKey": "clickKey", "alreadyOwned": "alreadyOwned", "other": "other", "jws": "jws"]
        var w = JSONObjectWriter()
        for dataName in names.shuffled(using: &rng).prefix(Int.random(in: 0...names.count, using: &rng)) {
            guard let name = literal[dataName] else {
                w.string(named: dataName, (0..<3).map { _ in alphabet.randomElement(using: &rng)! }.joined())
                continue
            }
            switch Int.random(in: 0..<5, using: &rng) {
            case 0: w.bool(name, Bool.random(using: &rng))
            case 1: w.int(name, Int64.random(in: Int64.min...Int64.max, using: &rng))
            case 2: w.value(name, .object(["productID": .string("nested"), "l": .array([.null, .string("}")])]))
            case 3: w.string(name, nil)
            default:
                let n = Int.random(in: 0...6, using: &rng)
                w.string(name, (0..<n).map { _ in alphabet.randomElement(using: &rng)! }.joined())
            }
        }
        return w.finish()
    }

    @Test("agrees with the full parser on 3,000 generated objects")
    func agreesWithParser() throws {
        var rng = SystemRandomNumberGenerator()
        let names = ["productID", "kind", "id", "n", "flag", "nested", "list", "empty", "k\"q"]
        for _ in 0..<3_000 {
            let bytes = Self.randomObject(names: names, using: &rng)
            let full = try JSONParser.parse(bytes: bytes)
            let f = JSONFields(bytes)
            #expect(f.isComplete)
            for name in ["productID", "kind", "id", "n", "flag", "nested", "list", "empty"] as [StaticString] {
                let key = name.description
                #expect(f[name]?.stringValue == full[key]?.stringValue, "\(key) in \(String(decoding: bytes, as: UTF8.self))")
                #expect(f[name]?.int64Value == full[key]?.int64Value)
                #expect(f[name]?.boolValue == full[key]?.boolValue)
                #expect(f[name]?.value == full[key])
            }
        }
    }
}
