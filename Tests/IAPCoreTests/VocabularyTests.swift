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
}
