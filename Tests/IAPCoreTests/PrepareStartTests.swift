import IAPCore
@testable import IAPSimulator
import Testing

/// The simulated store's start made ready ahead (`prepareStart`, on the SDK
/// thread while the bridge reads its outbox) reports what a start alone
/// reports: the same unfinished transactions in the same order, the same
/// list, the same kinds of events after them.
@Suite struct PrepareStartTests {
    static func summary(_ e: StoreEvent) -> String {
        switch e {
        case .transaction(let t, _): return "transaction \(t.id) \(t.productID) \(t.quantity) \(t.price)"
        case .unfinished(let ids): return "unfinished \(ids)"
        default: return String(String(describing: e).prefix { $0 != "(" })
        }
    }

    static func events(_ env: TestEnv, prepared: Bool) throws -> [String] {
        let config = try BridgeConfig.parse(Array(env.configJSON.utf8))
        let store = try SimulatedStore.open(config: config)
        defer { store.stop() }
        if prepared { store.prepareStart() }
        let seen = Locked<[String]>([])
        store.start { e in seen.withLock { $0.append(PrepareStartTests.summary(e)) } }
        return seen.withLock { $0 }
    }

    @Test func preparedStartReportsWhatStartReports() throws {
        let env = TestEnv()
        let b = try env.open()
        for _ in 0..<3 { _ = try b.c.buy(productID: "coins_100", clickMs: 0) }
        _ = try b.c.buy(productID: "remove_ads", clickMs: 0)
        let sevens = b.drain().filter { $0["type"]?.stringValue == "7" }
        #expect(sevens.count == 4)
        b.c.close()  // nothing confirmed: four unfinished transactions

        let alone = try Self.events(env, prepared: false)
        let ahead = try Self.events(env, prepared: true)
        #expect(alone.filter { $0.hasPrefix("transaction ") }.count == 4, "\(alone)")
        #expect(alone.contains { $0.hasPrefix("unfinished ") })
        #expect(ahead == alone)
        // A second prepare, or one after start, changes nothing.
        let config = try BridgeConfig.parse(Array(env.configJSON.utf8))
        let store = try SimulatedStore.open(config: config)
        store.prepareStart()
        store.prepareStart()
        let seen = Locked<[String]>([])
        store.start { e in seen.withLock { $0.append(PrepareStartTests.summary(e)) } }
        store.prepareStart()
        store.stop()
        #expect(seen.withLock { $0 } == alone)
    }
}
