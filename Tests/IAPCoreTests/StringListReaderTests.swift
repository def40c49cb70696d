import IAPCore
import IAPTestSupport
import Testing

/// `StringListReader`, the product request's reader of a plain list of
/// strings, never disagrees with the JSON parser it stands in for: whenever
/// it returns a list, the parser reads the same text as an array of exactly
/// those strings; when it returns nil the caller asks the parser, so what a
/// game gets for any other text is unchanged.
@Suite("Reading a plain list of strings")
struct StringListReaderTests {
    static func fast(_ b: [UInt8]) -> [String]? {
        b.withUnsafeBufferPointer { StringListReader.plainStrings($0) }
    }

    /// The parser's reading: the strings of an array of strings, or nil.
    static func parsed(_ b: [UInt8]) -> [String]? {
        guard let v = try? JSONParser.parse(bytes: b), let a = v.arrayValue else { return nil }
        var out: [String] = []
        for e in a {
            guard let s = e.stringValue else { return nil }
            out.append(s)
        }
        return out
    }

    @Test("the lists games pass are read without the parser, as the parser reads them")
    func plainLists() {
        let lists = [
            #"["coins_100","remove_ads","no_such_product"]"#, "[]", " [ ] ", "\n[\t\"a\" ,\r\n \"b\" ]\n",
            #"["com.example.game.gold_pack.10"]"#, #"[""]"#, #"["", " ", "a b"]"#,
            #"["!#$%&'()*+,-./:;<=>?@[]^_`{|}~"]"#,
        ]
        for text in lists {
            let b = Array(text.utf8)
            let got = StringListReaderTests.fast(b)
            #expect(got != nil, "read by the parser instead: \(text)")
            #expect(got == StringListReaderTests.parsed(b), "\(text)")
        }
    }

    @Test("escapes, UTF-8, DEL, control bytes, other values and damage go to the parser")
    func fallsBack() {
        let texts = [
            #"["a\"b"]"#, #"["\u0041"]"#, "[\"caf\u{e9}\"]", "[\"a\u{7f}\"]", "[\"a\tb\"]", "[\"a\u{1}\"]",
            "[1]", "[\"a\",]", "[,\"a\"]", "[\"a\" \"b\"]", "[\"a\"", "[\"a", "[", "", " ", "{}", "[\"a\"]x",
            "[[\"a\"]]", "[null]", "[\"a\"]]", "\u{feff}[\"a\"]", "[\"a\"] ,",
        ]
        for text in texts {
            #expect(StringListReaderTests.fast(Array(text.utf8)) == nil, "\(text)")
        }
    }

    @Test("on 200,000 generated texts the reader returns a list only when the parser reads that list")
    func agreesWithTheParser() {
        let alphabet: [[UInt8]] = [
            Array("[".utf8), Array("]".utf8), Array(",".utf8), Array("\"".utf8), Array("\\".utf8), Array(" ".utf8),
            Array("\n".utf8), Array("\t".utf8), Array("a".utf8), Array("Z".utf8), Array("0".utf8), Array("_".utf8),
            Array(".".utf8), [0x7F], [0x1F], [0x00], Array("\u{e9}".utf8), Array("u".utf8), Array("{".utf8),
            Array(":".utf8), Array("1".utf8), [0xFF],
        ]
        // Seeded: a failure names its text, and the same run replays it.
        var rng = SplitMix64(seed: 0x5EED_1157)
        var read = 0
        var disagreements = 0
        for i in 0..<200_000 {
            var b: [UInt8] = []
            if i % 2 == 0 {
                // A valid list, then mutated at up to two places.
                b = Array("[".utf8)
                let count = Int(rng.next() % 4)
                for k in 0..<count {
                    if k > 0 { b += Array(",".utf8) }
                    b += Array("\"".utf8)
                    for _ in 0..<Int(rng.next() % 6) { b += alphabet[8 + Int(rng.next() % 5)] }
                    b += Array("\"".utf8)
                }
                b += Array("]".utf8)
                for _ in 0..<Int(rng.next() % 3) {
                    let at = Int(rng.next() % UInt64(b.count + 1))
                    let piece = alphabet[Int(rng.next() % UInt64(alphabet.count))]
                    if rng.next() % 2 == 0 || at == b.count {
                        b.insert(contentsOf: piece, at: at)
                    } else {
                        b.remove(at: at)
                    }
                }
            } else {
                for _ in 0..<Int(rng.next() % 12) { b += alphabet[Int(rng.next() % UInt64(alphabet.count))] }
            }
            guard let got = StringListReaderTests.fast(b) else { continue }
            read += 1
            if got != StringListReaderTests.parsed(b) {
                disagreements += 1
                if disagreements <= 3 { Issue.record("\(b): reader \(got), parser \(String(describing: StringListReaderTests.parsed(b)))") }
            }
        }
        #expect(disagreements == 0)
        // The comparison means something only if many texts were read here.
        #expect(read > 20_000, "only \(read) texts read without the parser")
    }
}
