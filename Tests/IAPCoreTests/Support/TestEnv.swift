import Foundation
import IAPCore
import IAPSimulator
import IAPTestSupport
import Testing

/// A fresh directory with a game's dataDir and the simulated store's stateDir,
/// and helpers to open bridges on it the way iap_open does.
final class TestEnv: @unchecked Sendable {
    let root: String
    let catalog: String
    var dataDir: String { root + "/data" }
    var stateDir: String { root + "/appstore" }
    var extraConfig: String = ""
    /// The simulator's answer delay (0: at once, on the SDK thread's next turn).
    var purchaseDelayMs = 0
    /// When set, bridges opened here keep the outbox's and the simulated
    /// store's logs on it (fault plans, the power-loss journal); otherwise on
    /// real storage, as a game does.
    var disk: SimulatedDisk? = nil

    init(catalog: String = MessageSchemas.repoRoot + "/samples/catalog/Game.storekit") {
        let template = NSTemporaryDirectory() + "iap-test-XXXXXX"
        var buf = Array(template.utf8CString)
        let made = buf.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(made != nil, "mkdtemp failed")
        root = String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        self.catalog = catalog
    }

    deinit { try? FileManager.default.removeItem(atPath: root) }

    var configJSON: String {
        "{\"store\":\"simulator\",\"dataDir\":\"\(dataDir)\",\"catalog\":\"\(catalog)\",\"simulator\":{\"stateDir\":\"\(stateDir)\",\"tickMs\":0,\"purchaseDelayMs\":\(purchaseDelayMs)}\(extraConfig)}"
    }

    func open() throws -> Bridge {
        let config = try BridgeConfig.parse(Array(configJSON.utf8))
        let storage: any LogStorage = disk ?? POSIXStorage()
        let store = try SimulatedStore.open(config: config, storage: storage)
        do {
            return Bridge(try Coordinator.open(config: config, store: store, storage: storage), disk: disk)
        } catch {
            store.stop()
            throw error
        }
    }

    /// Creates the game's data directory (for tests that open an outbox
    /// without a bridge) and returns its path.
    @discardableResult
    func makeDataDir() throws -> String {
        try FileManager.default.createDirectory(atPath: dataDir, withIntermediateDirectories: true)
        return dataDir
    }

    /// Deletes the game's data: a reinstall (the store keeps its state).
    func reinstall() { try? FileManager.default.removeItem(atPath: dataDir) }
}

/// A coordinator with test helpers: every message taken is checked against
/// its JSON Schema.
final class Bridge: @unchecked Sendable {
    let c: Coordinator
    /// The simulated disk its logs are on, if any.
    let disk: SimulatedDisk?
    init(_ c: Coordinator, disk: SimulatedDisk? = nil) {
        self.c = c
        self.disk = disk
    }

    /// Everything queued now, parsed; each message validated against its schema.
    func drain() -> [JSONValue] {
        // Results come from the SDK thread: wait until it has handled
        // everything posted so far.
        c.settle()
        var out: [JSONValue] = []
        while let m = c.queue.pop() {
            let text = String(decoding: m, as: UTF8.self)
            let errors = MessageSchemas.validate(text)
            #expect(errors.isEmpty, "schema: \(errors)")
            if let v = try? JSONParser.parse(bytes: m) { out.append(v) }
        }
        return out
    }

    /// Everything queued now, as the C ABI hands it out (exact bytes); each
    /// message validated against its schema.
    func drainRaw() -> [[UInt8]] {
        c.settle()
        var out: [[UInt8]] = []
        while let m = c.queue.pop() {
            let errors = MessageSchemas.validate(String(decoding: m, as: UTF8.self))
            #expect(errors.isEmpty, "schema: \(errors)")
            out.append(m)
        }
        return out
    }

    func results(_ messages: [JSONValue]) -> [JSONValue] { messages.filter { $0["type"]?.stringValue == "7" } }
    func drainResults() -> [JSONValue] { results(drain()) }

    func buy(_ product: String, _ click: Int64) throws -> Int64 { try c.buy(productID: product, clickMs: click) }
    func confirm(_ key: Int64) throws { try c.confirm(key: key) }
    func sim(_ json: String) throws -> JSONValue { try c.simulate(try JSONParser.parse(json)) }
    func transactions() throws -> [JSONValue] { try sim("{\"op\":\"transactions\"}")["transactions"]?.arrayValue ?? [] }
    func close() { c.close() }

    /// Confirms every "7" and "revoked" in `messages`.
    func confirmAll(_ messages: [JSONValue]) throws {
        for m in messages where ["7", "revoked"].contains(m["type"]?.stringValue ?? "") {
            if let k = m["key"]?.stringValue.flatMap({ Int64($0) }) { try c.confirm(key: k) }
        }
        c.flush()
    }
}

extension JSONValue {
    var keyValue: Int64? { self["key"]?.stringValue.flatMap { Int64($0) } }
}

extension ResultFacts {
    /// A stored success for tests of the outbox itself (format 2 stores facts, not text).
    static func sample(_ i: Int, product: String = "coins_100") -> ResultFacts {
        .purchase(StoreTransaction(id: String(2_000_000 + i), originalID: String(2_000_000 + i), productID: product,
                                   kind: .consumable, purchaseDateMs: 1_700_000_000_000 + Int64(i), price: "0.99",
                                   currency: "USD", environment: "test"),
                  origin: .game, alreadyOwned: false, clickKey: nil)
    }
}
