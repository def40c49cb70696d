import Testing
@testable import IAPCore

/// The names messages write with no `String` made (`jsonName`,
/// `resultText`) are the enums' raw values, which the parser, the docs and
/// the schemas use: a case renamed in one place and not the other fails here.
@Suite struct VocabularyTests {
    @Test func productKindNames() {
        for k in ProductKind.allCases { #expect(k.jsonName.description == k.rawValue) }
    }

    @Test func originNames() {
        for o in PurchaseOrigin.allCases { #expect(o.jsonName.description == o.rawValue) }
    }

    @Test func failureNamesAndCodes() {
        var codes: Set<String> = []
        for f in PurchaseFailure.allCases {
            #expect(f.resultText.name.description == f.rawValue)
            #expect(f.resultCode == f.resultText.code.description)
            codes.insert(f.resultCode)
        }
        // One code each, and none is success's ("0") or unverified's ("6").
        #expect(codes.count == PurchaseFailure.allCases.count)
        #expect(!codes.contains("0") && !codes.contains("6"))
    }

    /// A literal field renders as the general writer renders the same value.
    @Test func literalFieldsMatchStrings() {
        var a = JSONObjectWriter()
        a.text("type", "7")
        a.bool("t", true)
        a.bool("f", false)
        a.null("n")
        a.string("s", nil)
        a.int("i", nil)
        var b = JSONObjectWriter()
        b.string("type", "7")
        b.value("t", .bool(true))
        b.value("f", .bool(false))
        b.value("n", .null)
        b.value("s", .null)
        b.value("i", .null)
        #expect(String(decoding: a.finish(), as: UTF8.self) == #"{"type":"7","t":true,"f":false,"n":null,"s":null,"i":null}"#)
        #expect(String(decoding: b.finish(), as: UTF8.self) == #"{"type":"7","t":true,"f":false,"n":null,"s":null,"i":null}"#)
    }

    /// A string field is the same bytes whether it takes the one-copy path
    /// (no escape) or the escaping one: empty, plain, quotes, controls,
    /// DEL, non-ASCII, long.
    @Test func stringFieldsExactBytes() {
        let cases: [(String, String)] = [
            ("", #"{"s":""}"#),
            ("abc", #"{"s":"abc"}"#),
            ("a\"b\\c", #"{"s":"a\"b\\c"}"#),
            ("l\ni\tn\re\u{1}\u{7F}", #"{"s":"l\ni\tn\re\u0001\u007f"}"#),
            ("é🙂", #"{"s":"é🙂"}"#),
            (String(repeating: "x", count: 300), #"{"s":""# + String(repeating: "x", count: 300) + #""}"#),
        ]
        for (value, expected) in cases {
            var w = JSONObjectWriter()
            w.string("s", value)
            #expect(String(decoding: w.finish(), as: UTF8.self) == expected)
        }
        var w = JSONObjectWriter()
        w.string("a", "1")
        w.string("b", "\"")
        w.string("c", Optional<String>.none)
        w.string("d", Optional("x"))
        #expect(String(decoding: w.finish(), as: UTF8.self) == #"{"a":"1","b":"\"","c":null,"d":"x"}"#)
    }
}
