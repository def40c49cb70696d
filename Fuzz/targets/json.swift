import IAPCore

// Target "json": the strict JSON parser every outside input goes through.
// Oracle: never traps; whatever parses serializes back to text that parses
// to the same value, and serializing is a fixed point after one round.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSON(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = bytes(data, size)
    guard let v = try? JSONParser.parse(bytes: input) else { return 0 }
    let text = Array(v.serialized.utf8)
    let again: JSONValue
    do { again = try JSONParser.parse(bytes: text) } catch {
        check(false, "serialized value does not parse: \(error)")
        return 0
    }
    check(again == v, "round trip changed the value")
    check(again.serialized == v.serialized, "serialization is not stable")
    // Strings re-emitted through the writer the messages use come back intact.
    var strings: [String] = []
    allStrings(v, into: &strings)
    for s in strings.prefix(64) {
        var w = JSONObjectWriter()
        w.string("type", s)
        let m = checkMessage(w.finish(), "JSONObjectWriter")
        check(m["type"]?.stringValue == s, "string did not survive the writer")
    }
    return 0
}
