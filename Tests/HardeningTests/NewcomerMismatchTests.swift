import Foundation
import CIAPFrame
import IAPBridge
import IAPCore
import Testing

/// Issue 14, "docs a newcomer needs": each mismatch a new user hit by trying,
/// checked the way they hit it, through the C ABI.
@Suite("Newcomer mismatches")
struct NewcomerMismatchTests {
    static func open(_ config: String) -> (Int32, String, OpaquePointer?) {
        var h: OpaquePointer? = nil
        let rc = config.withCString { iap_open($0, &h) }
        return (rc, rc == 0 ? "" : lastError(), h)
    }

    static func key(_ m: JSONValue) -> Int64? { m["key"]?.stringValue.flatMap { Int64($0) } }

    /// A simulator config with no "simulator" object: stateDir is derived.
    static func plainConfig(dataDir: String) -> String {
        JSONValue.object(["store": .string("simulator"), "dataDir": .string(dataDir), "catalog": .string(sampleCatalog)]).serialized
    }

    @Test("a relative dataDir is reported as dataDir, not as the stateDir derived from it")
    func relativeDataDirNamesDataDir() {
        for dir in ["relative/data", "data", "./data/", "~/data"] {
            let (rc, msg, h) = Self.open(Self.plainConfig(dataDir: dir))
            #expect(rc == -4 && h == nil, "\(dir): \(String(cString: iap_error_name(rc))): \(msg)")
            #expect(msg.contains("dataDir must be an absolute path") && !msg.contains("stateDir"), "\(dir): \"\(msg)\"")
        }
        let (rc, msg, _) = Self.open(Self.plainConfig(dataDir: ""))
        #expect(rc == -4 && msg.contains("dataDir is empty"), "\(msg)")
        #expect(!FileManager.default.fileExists(atPath: "relative") && !FileManager.default.fileExists(atPath: "data.appstore"),
                "nothing created relative to the working directory")
    }

    /// A config with an explicit stateDir and app version.
    static func config(dataDir: String, stateDir: String? = nil, catalog: String = sampleCatalog, appVersion: String = "1.0") -> String {
        var sim: [String: JSONValue] = ["appVersion": .string(appVersion)]
        if let stateDir { sim["stateDir"] = .string(stateDir) }
        return JSONValue.object(["store": .string("simulator"), "dataDir": .string(dataDir), "catalog": .string(catalog),
                                 "simulator": .object(sim)]).serialized
    }

    @Test("an open refused for its dataDir creates no store directory: the failed call's app version is not the player's original one")
    func refusedDataDirCreatesNothing() throws {
        let s = Scratch("newcomer-refused")
        let file = s.path + "/afile"
        _ = FileManager.default.createFile(atPath: file, contents: Data("x".utf8))
        let (rc, msg, _) = Self.open(Self.config(dataDir: file, appVersion: "0.9"))
        #expect(rc == -6 && msg.contains("dataDir \(file) exists and is not a directory"), "\(msg)")
        #expect(!FileManager.default.fileExists(atPath: file + ".appstore"), "the failed open created the store's directory")
        let (rc2, msg2, _) = Self.open(Self.config(dataDir: s.path + "/nope/game", stateDir: s.path + "/st"))
        #expect(rc2 == -6 && msg2.contains("its parent \(s.path)/nope does not exist"), "\(msg2)")
        #expect(!FileManager.default.fileExists(atPath: s.path + "/st"), "the failed open created stateDir")

        // Fixed, the game opens with its real version: that is the original one.
        try FileManager.default.removeItem(atPath: file)
        var h: OpaquePointer? = nil
        #expect(Self.config(dataDir: file, appVersion: "2.0").withCString { iap_open($0, &h) } == 0)
        let b = CBridge(handle: h)
        #expect(iap_app_transaction(h) == 0)
        var app: JSONValue? = nil
        for _ in 0..<200 where app == nil {
            app = b.drain().first { $0["type"]?.stringValue == "app" }
            if app == nil { usleep(10_000) }
        }
        #expect(app?["originalAppVersion"]?.stringValue == "2.0", "\(String(describing: app))")
        b.close()
    }

    @Test("dataDir and stateDir naming one directory in two spellings: IAP_E_BAD_CONFIG, not busy; a stateDir inside a dataDir not made yet opens")
    func sameDirectoryTwoSpellings() throws {
        let s = Scratch("newcomer-same")
        for (data, state) in [(s.path + "//d1", s.path + "/d1"), (s.path + "/d1", s.path + "/d1/."), (s.path + "/./d1/", s.path + "/d1")] {
            let (rc, msg, h) = Self.open(Self.config(dataDir: data, stateDir: state))
            #expect(rc == -4 && h == nil && msg.contains("must differ"), "\(data) / \(state): \(String(cString: iap_error_name(rc))): \(msg)")
        }
        // Each inside the other before either exists, spelled as naive path
        // joins make them ("//", "/./"): both open.
        for (data, state) in [(s.path + "/game", s.path + "/game/store"), (s.path + "/st2//data", s.path + "/st2"),
                              (s.path + "/g3/", s.path + "/g3/./store")] {
            var h: OpaquePointer? = nil
            let rc = Self.config(dataDir: data, stateDir: state).withCString { iap_open($0, &h) }
            #expect(rc == 0, "\(data) / \(state): \(lastError())")
            if rc == 0 { #expect(iap_close(h) == 0) }
        }
    }

    @Test("a relative catalog that is not there: the message names the working directory it was looked for in")
    func relativeCatalogNamesWorkingDirectory() {
        let s = Scratch("newcomer-catalog")
        let (rc, msg, _) = Self.open(Self.config(dataDir: s.dataDir, catalog: "NoSuchGame.storekit"))
        #expect(rc == -5 && msg.contains("working directory \(FileManager.default.currentDirectoryPath)"), "\(msg)")
    }

    @Test("a relative simulator.stateDir given by the game is reported under that name")
    func relativeStateDirNamesStateDir() {
        let s = Scratch("newcomer-state")
        let config = JSONValue.object([
            "store": .string("simulator"), "dataDir": .string(s.dataDir), "catalog": .string(sampleCatalog),
            "simulator": .object(["stateDir": .string("state")]),
        ]).serialized
        let (rc, msg, _) = Self.open(config)
        #expect(rc == -4 && msg.contains("\"simulator\".\"stateDir\" must be an absolute path"), "\(msg)")
        #expect(!FileManager.default.fileExists(atPath: s.dataDir), "dataDir not created for a refused config")
    }

    @Test("a new dataDir with trailing slashes is created; its derived stateDir is a sibling, not inside it")
    func trailingSlashDataDir() throws {
        let s = Scratch("newcomer-slash")
        for suffix in ["/", "//"] {
            let dir = s.path + "/data" + suffix
            let (rc, msg, h) = Self.open(Self.plainConfig(dataDir: dir))
            #expect(rc == 0, "\(dir): \(msg)")
            guard rc == 0 else { continue }
            let b = CBridge(handle: h)
            let key = try b.buy("coins_100", 4242)
            // The simulator answers 10 ms after the buy (its default purchaseDelayMs).
            var seen = false
            for _ in 0..<200 where !seen {
                seen = b.drain().contains { $0["type"]?.stringValue == "7" && Self.key($0) == key }
                if !seen { usleep(10_000) }
            }
            #expect(seen, "the purchase's \"7\" arrives")
            // The same directory without the slash is the same bridge's: busy.
            let (rc2, msg2, h2) = Self.open(Self.plainConfig(dataDir: s.path + "/data"))
            #expect(rc2 == -9 && h2 == nil, "\(String(cString: iap_error_name(rc2))): \(msg2)")
            b.close()
            #expect(FileManager.default.fileExists(atPath: s.path + "/data/" + Outbox.fileName))
            #expect(FileManager.default.fileExists(atPath: s.path + "/data.appstore"), "default stateDir is <dataDir>.appstore")
            #expect(!FileManager.default.fileExists(atPath: s.path + "/data/.appstore"), "not inside dataDir")
        }
        // A missing parent is named as such (the parent, not the directory itself).
        let (rc, msg, _) = Self.open(Self.plainConfig(dataDir: s.path + "/no/such/"))
        #expect(rc == -6 && msg.contains("its parent \(s.path)/no does not exist"), "\(msg)")
        #expect(POSIX.parent(of: "/a/b/") == "/a" && POSIX.parent(of: "/a//") == "/" && POSIX.parent(of: "/") == "/")
    }

    @Test("a game that set only dataDir is told about dataDir, not about a stateDir it never wrote (issue 23, item 4)")
    func derivedStateDirErrorsNameDataDir() throws {
        let s = Scratch("newcomer-derived")
        let dataDir = s.path + "/data"
        // <dataDir>.appstore taken by a file: the error names dataDir and says the directory was derived.
        _ = FileManager.default.createFile(atPath: dataDir + ".appstore", contents: Data())
        let (rc, msg, h) = Self.open(Self.plainConfig(dataDir: dataDir))
        #expect(rc == -6 && h == nil, "\(String(cString: iap_error_name(rc))): \(msg)")
        #expect(msg.contains("derived from dataDir \(dataDir)") && msg.contains(dataDir + ".appstore exists and is not a directory"), "\(msg)")
        #expect(!msg.contains("simulator.stateDir"), "\(msg)")
        try FileManager.default.removeItem(atPath: dataDir + ".appstore")
        // The same dataDir opened twice: busy, and the message names dataDir.
        let (rc1, msg1, h1) = Self.open(Self.plainConfig(dataDir: dataDir))
        #expect(rc1 == 0, "\(msg1)")
        let (rc2, msg2, h2) = Self.open(Self.plainConfig(dataDir: dataDir))
        #expect(rc2 == -9 && h2 == nil, "\(String(cString: iap_error_name(rc2))): \(msg2)")
        #expect(msg2.hasPrefix("iap_open: dataDir \(dataDir) is in use by another open bridge"), "\(msg2)")
        if rc1 == 0 { CBridge(handle: h1).close() }
        // A stateDir the game set is named as the game wrote it.
        let state = s.path + "/state"
        _ = FileManager.default.createFile(atPath: state, contents: Data())
        let config = JSONValue.object([
            "store": .string("simulator"), "dataDir": .string(dataDir), "catalog": .string(sampleCatalog),
            "simulator": .object(["stateDir": .string(state)]),
        ]).serialized
        let (rc3, msg3, _) = Self.open(config)
        #expect(rc3 == -6 && msg3.contains("\"simulator\".\"stateDir\" \(state) exists and is not a directory"), "\(msg3)")
    }

    /// Every function taking a bridge, answering its code for `h`.
    static func calls(_ h: OpaquePointer?) -> [(String, Int32)] {
        var k: Int64 = 0
        var o: UnsafeMutablePointer<CChar>? = nil
        // A call that fails with a text of its own first: the poll's code is
        // read from the text the poll itself left, not from an earlier call's.
        _ = iap_request_products(nil, nil)
        let polled = iap_poll(h)
        let pollCode: Int32 = polled == nil && lastError().contains("not a bridge returned by iap_open") ? -7
            : polled == nil && lastError().contains("the bridge was closed") ? -8 : 0
        if let polled { iap_free(polled) }
        return [
            ("iap_confirm", iap_confirm(h, 1)), ("iap_buy", iap_buy(h, "coins_100", 1, &k)),
            ("iap_request_products", iap_request_products(h, "[]")), ("iap_restore", iap_restore(h)),
            ("iap_flush", iap_flush(h)), ("iap_set_callback", iap_set_callback(h, nil, nil)),
            ("iap_simulator", iap_simulator(h, #"{"op":"clock"}"#, &o)), ("iap_poll", pollCode), ("iap_close", iap_close(h)),
        ]
    }

    @Test("small integers, stray pointers and altered handles are IAP_E_INVALID_HANDLE; a closed handle stays IAP_E_CLOSED")
    func garbageHandles() throws {
        // Open and close a few bridges first, so generations 1... were issued.
        let s = Scratch("newcomer-handles")
        var closed: [OpaquePointer?] = []
        for i in 0..<3 {
            let b = try CBridge.open(s.config().replacingOccurrences(of: "/data\"", with: "/data\(i)\""))
            closed.append(b.handle)
            b.close()
        }
        let live = try CBridge.open(s.config())
        defer { live.close() }
        let v = UInt(bitPattern: live.handle)
        var garbage: [UInt] = [1, 5, 7, 42, 0xFFF, 0x1000, 0x1001, 0x2000, 0x3005, 0x10000, 0x12345, 1 << 20, UInt.max]
        garbage += (0..<64).map { v ^ (UInt(1) << UInt($0)) }  // every single-bit change of a live handle
        garbage += closed.map { UInt(bitPattern: $0) ^ 1 }
        for g in garbage {
            for (name, code) in Self.calls(OpaquePointer(bitPattern: g)) {
                #expect(code == -7, "\(name)((iap_bridge *)0x\(String(g, radix: 16))) gave \(String(cString: iap_error_name(code)))")
            }
        }
        for h in closed {
            for (name, code) in Self.calls(h) {
                #expect(code == -8, "\(name)(closed handle) gave \(String(cString: iap_error_name(code)))")
            }
        }
        // The live bridge still works, with poll's fast path (nothing queued).
        _ = live.drain()
        #expect(iap_poll(live.handle) == nil && iap_flush(live.handle) == 0)
        _ = try live.buy("coins_100", 77)
        #expect(live.drain().contains { $0["type"]?.stringValue == "7" })
    }

    @Test("\"entitlements\".now is the clock the store judged the list by: the simulator's, after advance")
    func entitlementsNowIsTheStoreClock() throws {
        let s = Scratch("newcomer-now")
        let b = try CBridge.open(s.config())
        defer { b.close() }
        _ = try b.buy("vip_monthly", 1000)
        for m in b.drain() where m["type"]?.stringValue == "7" { _ = b.confirm(try #require(Self.key(m))) }
        let tenDays: Int64 = 10 * 86_400_000
        _ = try b.simulator(#"{"op":"advance","seconds":864000}"#)
        let before = POSIX.nowMs()
        #expect(iap_restore(b.handle) == 0)
        let ent = try #require(b.drain().last { $0["type"]?.stringValue == "entitlements" })
        let now = try #require(ent["now"]?.int64Value)
        #expect(now >= before + tenDays - 1_000, "now \(now) is not the store's clock (device \(before), store 10 days ahead)")
        let vip = try #require(ent["items"]?.arrayValue?.first { $0["productID"]?.stringValue == "vip_monthly" })
        let expires = try #require(vip["expiresDate"]?.int64Value)
        #expect(expires > now, "an item the list holds has not expired by its own now")
    }

    /// The rows of the first table after `heading` in docs/PROTOCOL.md: the
    /// backticked names in each row's first cell.
    static func documentedFields(after heading: String) throws -> Set<String> {
        let text = try String(contentsOfFile: repoRoot + "/docs/PROTOCOL.md", encoding: .utf8)
        let lines = text.components(separatedBy: "\n")
        guard let start = lines.firstIndex(where: { $0.hasPrefix(heading) }) else { return [] }
        var out = Set<String>()
        var inTable = false
        for line in lines[(start + 1)...] {
            if line.hasPrefix("| field") { inTable = true; continue }
            if inTable && !line.hasPrefix("|") { break }
            guard inTable, let cell = line.split(separator: "|").first else { continue }
            let parts = cell.split(separator: "`")
            for (i, p) in parts.enumerated() where i % 2 == 1 { out.insert(String(p)) }
        }
        return out
    }

    @Test("PROTOCOL.md's \"7\" field table lists every field of 7.schema.json")
    func protocolTableCoversSchema() throws {
        let schema = try JSONParser.parse(String(contentsOfFile: repoRoot + "/docs/schemas/7.schema.json", encoding: .utf8))
        let fields = Set(try #require(schema["properties"]?.objectValue).keys).subtracting(["type"])
        let documented = try Self.documentedFields(after: "## \"7\"")
        #expect(fields.subtracting(documented).isEmpty, "missing from PROTOCOL.md's table: \(fields.subtracting(documented).sorted())")
    }
}
