import Foundation
import IAPBridge
import IAPCore
import IAPTestSupport
import Testing

/// Property: any string a catalog or the store can carry comes out of every
/// message as exactly the same string (same Unicode scalars, not merely
/// canonically equivalent) after a JSON round trip: through the project's
/// JSONParser, and through python3's json module as an independent reader.
@Suite("JSON round trip")
struct JSONRoundTripTests {
    /// The hard cases, then random Unicode (surrogates cannot be a Unicode.Scalar).
    static let pieces: [String] = [
        "\"", "\\", "/", "\\u0000", "\\\"", "'", "<", "&", "{", "}",
        "\u{08}", "\u{0C}", "\n", "\r", "\t", "\u{7F}", "\u{85}", "\u{2028}", "\u{2029}", "\u{FEFF}",
        "😀", "🎮", "👍🏽", "👨‍👩‍👧", "🇫🇷", "עברית", "العربية", "\u{202E}txet\u{202C}", "\u{200F}", "\u{200E}",
        "e\u{301}", "é", "a\u{300}\u{316}\u{35C}", "ᄀ\u{1161}", "Å", "\u{10FFFF}", "\u{E000}", "\u{FFFD}", "中文", "日本語",
    ] + (0..<0x20).map { String(UnicodeScalar(UInt8($0))) }

    static func randomString(_ r: inout SplitMix64, maxPieces: Int = 8) -> String {
        var s = ""
        for _ in 0..<(1 + r.below(maxPieces)) {
            switch r.below(4) {
            case 0, 1: s += pieces[r.below(pieces.count)]
            case 2: s += String(UnicodeScalar(UInt8(0x20 + r.below(0x5F))))
            default:
                // Any scalar: BMP or supplementary, never a surrogate.
                var v = UInt32(r.below(0x110000))
                if (0xD800...0xDFFF).contains(v) { v -= 0x800 }
                s.unicodeScalars.append(Unicode.Scalar(v)!)
            }
        }
        return s
    }

    static func same(_ a: String?, _ b: String) -> Bool { a.map { Array($0.unicodeScalars) == Array(b.unicodeScalars) } ?? false }

    /// (message, field path, expected string) triples, also checked by python3.
    final class Ledger {
        var checks: [(message: [UInt8], path: [String], expected: String)] = []
        func add(_ message: [UInt8], _ path: [String], _ expected: String) { checks.append((message, path, expected)) }
    }

    static func value(_ v: JSONValue, _ path: [String]) -> JSONValue? {
        var cur: JSONValue? = v
        for p in path {
            if let i = Int(p), let a = cur?.arrayValue { cur = i < a.count ? a[i] : nil } else { cur = cur?[p] }
        }
        return cur
    }

    static func checkWithJSONParser(_ ledger: Ledger) {
        for c in ledger.checks {
            guard let v = try? JSONParser.parse(bytes: c.message) else {
                Issue.record("not JSON: \(String(decoding: c.message, as: UTF8.self))")
                continue
            }
            let got = value(v, c.path)?.stringValue
            #expect(same(got, c.expected), "\(c.path): \(String(reflecting: got)) != \(String(reflecting: c.expected))")
        }
    }

    // MARK: The messages, end to end through the C ABI

    @Test("\"999\" titles, descriptions and IDs, \"invalid\" IDs and \"7\" product IDs survive, seeds 1...6")
    func throughTheBridge() throws {
        let ledger = Ledger()
        for seed in UInt64(1)...6 {
            try Self.bridgeRound(seed: seed, ledger: ledger)
        }
        Self.checkWithJSONParser(ledger)
        print("JSON round trip: \(ledger.checks.count) strings checked through the bridge")
    }

    static func bridgeRound(seed: UInt64, ledger: Ledger) throws {
        var r = SplitMix64(seed: seed)
        let s = Scratch("roundtrip")
        var products: [(id: String, title: String, description: String)] = []
        var ids = Set<String>()
        while products.count < 12 {
            var id = randomString(&r, maxPieces: 5)
            while id.utf8.count > 200 { id.removeLast() }
            guard !id.isEmpty, ids.insert(id).inserted else { continue }
            products.append((id, randomString(&r, maxPieces: 12), randomString(&r, maxPieces: 20)))
        }
        let catalog = s.path + "/random.storekit"
        write(catalog, catalogJSON(products))
        let b = try CBridge.open(s.config(catalog: catalog))
        defer { b.close() }
        _ = b.drain()
        let unknown = (0..<4).map { _ in "x" + randomString(&r, maxPieces: 4) }.filter { !ids.contains($0) }
        let request = JSONValue.array((products.map(\.id) + unknown).map { .string($0) }).serialized
        #expect(request.withCString { iap_request_products(b.handle, $0) } == 0, "\(lastError())")
        let raw999 = b.drainRaw().map { Array($0.utf8) }.filter { (try? JSONParser.parse(bytes: $0))?["type"]?.stringValue == "999" }
        try #require(raw999.count == 1, "seed \(seed): one 999 answer")
        let m = raw999[0]
        let items = try JSONParser.parse(bytes: m)["items"]?.arrayValue ?? []
        #expect(items.count == products.count, "seed \(seed)")
        for (i, item) in items.enumerated() {
            guard let p = products.first(where: { same(item["id"]?.stringValue, $0.id) }) else {
                Issue.record("seed \(seed): an item whose id is not a catalog ID: \(String(reflecting: item["id"]?.stringValue))")
                continue
            }
            ledger.add(m, ["items", String(i), "id"], p.id)
            ledger.add(m, ["items", String(i), "title"], p.title)
            ledger.add(m, ["items", String(i), "description"], p.description)
        }
        for (i, u) in unknown.enumerated() { ledger.add(m, ["invalid", String(i)], u) }
        // "products": product ID -> price, the IDs as object keys.
        let keys = try JSONParser.parse(bytes: m)["products"]?.objectValue?.keys.map { $0 } ?? []
        #expect(Set(keys.map { Array($0.unicodeScalars).map(\.value) }) == Set(products.map { Array($0.id.unicodeScalars).map(\.value) }),
                "seed \(seed): \"products\" keys")

        // "7": product IDs (a C string cannot hold NUL: those are bought through JSON only).
        for p in products where !p.id.utf8.contains(0) {
            let key = try b.buy(p.id)
            let sevens = b.drainRaw().filter { $0.contains(#""type":"7""#) }
            #expect(sevens.count == 1, "seed \(seed): one \"7\" for \(String(reflecting: p.id)), got \(sevens.count)")
            for text in sevens {
                let bytes = Array(text.utf8)
                let v = try JSONParser.parse(bytes: bytes)
                #expect(v["key"]?.stringValue == String(key))
                ledger.add(bytes, ["productID"], p.id)
                _ = b.confirm(key)
            }
        }
        // A failed purchase carries the product ID too.
        if let p = products.first(where: { !$0.id.utf8.contains(0) }) {
            _ = try b.simulator(#"{"op":"cancel_next"}"#)
            _ = try b.buy(p.id)
            let sevens = b.drainRaw().filter { $0.contains(#""type":"7""#) }
            #expect(sevens.count == 1, "seed \(seed): one \"7\" for the cancelled purchase, got \(sevens.count)")
            for text in sevens { ledger.add(Array(text.utf8), ["productID"], p.id) }
        }
    }

    // MARK: Every message builder, directly

    @Test("every message builder: 2,000 random strings in every string field")
    func everyBuilder() throws {
        let ledger = try Self.builderLedger()
        Self.checkWithJSONParser(ledger)
        #expect(ledger.checks.count >= 2000)
    }

    @Test("python3's json module reads every message builder's output the same way",
          .enabled(if: JSONRoundTripTests.python != nil, "python3 is not installed: the independent reader is skipped (JSONParser checks still ran)"))
    func pythonReadsEveryBuilder() throws {
        try Self.checkWithPython(try Self.builderLedger().checks.map { ($0.message, $0.path, $0.expected) }, name: "builders")
    }

    /// Every builder's message with random strings in every string field,
    /// and what each field must read back as.
    static func builderLedger() throws -> Ledger {
        var r = SplitMix64(seed: 0xC0FFEE)
        let ledger = Ledger()
        for _ in 0..<100 {
            let s = (0..<12).map { _ in Self.randomString(&r) }
            let t = StoreTransaction(id: s[0], originalID: s[1], productID: s[2], kind: .consumable, purchaseDateMs: 1,
                                     revocationDateMs: 2, revocationReason: s[3], price: s[4], currency: s[5],
                                     verified: r.below(2) == 0, jws: s[6], environment: s[7])
            let seven = Messages.purchase(key: 5, transaction: t, origin: .game, alreadyOwned: false)
            for (f, e) in [("transactionID", s[0]), ("originalTransactionID", s[1]), ("productID", s[2]), ("price", s[4]),
                           ("currency", s[5]), ("jws", s[6]), ("environment", s[7])] { ledger.add(seven, [f], e) }
            let failed = Messages.purchaseFailed(key: 6, productID: s[8], failure: .cancelled, detail: s[9])
            ledger.add(failed, ["productID"], s[8])
            ledger.add(failed, ["message"], s[9])
            let revoked = Messages.revoked(key: 7, transaction: t, origin: .store)
            ledger.add(revoked, ["productID"], s[2])
            ledger.add(revoked, ["reason"], s[3])
            let error = Messages.error(op: s[10], code: .io, message: s[11])
            ledger.add(error, ["op"], s[10])
            ledger.add(error, ["message"], s[11])
            let pending = Messages.pending(key: 8, productID: s[2], reason: .askToBuy)
            ledger.add(pending, ["productID"], s[2])
            let info = ProductInfo(id: s[2], title: s[9], description: s[10], price: s[4], displayPrice: s[5], currency: s[6],
                                   kind: .consumable, subscriptionPeriod: s[7], subscriptionGroupID: s[8])
            let products = Messages.products(ProductsAnswer(products: [info], invalid: [s[11]], error: s[1]))
            for (path, e) in [(["items", "0", "id"], s[2]), (["items", "0", "title"], s[9]), (["items", "0", "description"], s[10]),
                              (["items", "0", "displayPrice"], s[5]), (["invalid", "0"], s[11]), (["error"], s[1]),
                              (["products", s[2]], s[4])] { ledger.add(products, path, e) }
            let ent = Messages.entitlements([t], reason: .restore, nowMs: 9)
            ledger.add(ent, ["reason"], "restore")
            ledger.add(ent, ["items", "0", "productID"], s[2])
        }
        return ledger
    }

    @Test("python3's json module reads the bridge's messages the same way",
          .enabled(if: JSONRoundTripTests.python != nil, "python3 is not installed: the independent reader is skipped (JSONParser checks still ran)"))
    func pythonReadsBridgeMessages() throws {
        let ledger = Ledger()
        for seed in UInt64(11)...14 { try Self.bridgeRound(seed: seed, ledger: ledger) }
        try Self.checkWithPython(ledger.checks.map { ($0.message, $0.path, $0.expected) }, name: "bridge")
    }

    // MARK: python3

    static let python: String? = ["/usr/bin/python3", "/usr/local/bin/python3", "/root/.pyenv/shims/python3"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }

    /// Writes one line per check: message, path and expected string, the latter
    /// two hex-encoded so they never pass through the project's JSON writer;
    /// python3 parses the message with json.loads and compares.
    static func checkWithPython(_ checks: [([UInt8], [String], String)], name: String) throws {
        let python = try #require(python, "python3 is not installed")
        let s = Scratch("py")
        var lines: [UInt8] = []
        func hex(_ b: [UInt8]) -> [UInt8] { Array(b.map { String(format: "%02x", $0) }.joined().utf8) }
        for (m, path, expected) in checks {
            let p = path.map { String(decoding: hex(Array($0.utf8)), as: UTF8.self) }.joined(separator: ".")
            lines += hex(m) + [0x20] + Array(("k" + p).utf8) + [0x20, UInt8(ascii: "e")] + hex(Array(expected.utf8)) + [0x0A]
        }
        write(s.path + "/checks.txt", bytes: lines)
        let script = """
        import json, sys
        bad = 0; n = 0
        for line in open(sys.argv[1], 'rb'):
            m, p, e = line.split()
            msg = json.loads(bytes.fromhex(m.decode()).decode('utf-8'))
            v = msg
            for h in p.decode()[1:].split('.'):
                k = bytes.fromhex(h).decode('utf-8')
                v = v[int(k)] if isinstance(v, list) else v[k]
            n += 1
            want = bytes.fromhex(e.decode()[1:]).decode('utf-8')
            if v != want:
                bad += 1
                if bad < 5: print('MISMATCH', repr(v), repr(want))
        print('python3 json: %d strings, %d mismatches' % (n, bad))
        sys.exit(1 if bad else 0)
        """
        write(s.path + "/check.py", script)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: python)
        p.arguments = [s.path + "/check.py", s.path + "/checks.txt"]
        let pipe = Pipe()
        p.standardOutput = pipe
        p.standardError = pipe
        try p.run()
        let out = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        print("JSON round trip (\(name)): \(out.trimmingCharacters(in: .whitespacesAndNewlines))")
        #expect(p.terminationStatus == 0, "\(out)")
        #expect(out.contains("python3 json: \(checks.count) strings, 0 mismatches"), "\(out)")
    }
}
