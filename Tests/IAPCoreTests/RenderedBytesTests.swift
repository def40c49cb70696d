import Foundation
import IAPCore
import IAPSimulator
import Testing

/// The C ABI's JSON for a result is the same bytes whichever way it reaches
/// the game: live, rendered from the facts the outbox stored (format 2) at
/// the next open, or read from a format 1 record, whose stored text a game
/// was shown as it was.
@Suite("Rendered bytes of stored results")
struct RenderedBytesTests {
    /// The simulated store, except that at start it reports no transaction
    /// itself, only the list of unfinished ones: the coordinator then vouches
    /// for held purchases without the store's facts and shows them as stored.
    final class FactlessStartStore: Store, @unchecked Sendable {
        let inner: SimulatedStore
        init(_ inner: SimulatedStore) { self.inner = inner }
        var name: String { inner.name }
        func attach(scheduler: StoreScheduler) { inner.attach(scheduler: scheduler) }
        func validatePurchase(productID: String, quantity: Int) throws(IAPError) {
            try inner.validatePurchase(productID: productID, quantity: quantity)
        }
        func start(sink: @escaping @Sendable (StoreEvent) -> Void) {
            let listed = Lock()
            nonisolated(unsafe) var unfinishedSeen = false
            inner.start { event in
                switch event {
                case .transaction(_, .update) where !listed.withLock({ unfinishedSeen }): return
                case .unfinished: listed.withLock { unfinishedSeen = true }
                default: break
                }
                sink(event)
            }
        }
        func requestProducts(_ ids: [String]) { inner.requestProducts(ids) }
        func purchase(productID: String, key: Int64, token: PurchaseToken, quantity: Int) throws(IAPError) {
            try inner.purchase(productID: productID, key: key, token: token, quantity: quantity)
        }
        func finish(transactionID: String) { inner.finish(transactionID: transactionID) }
        func restore() { inner.restore() }
        func refreshEntitlements(reason: UpdateReason) { inner.refreshEntitlements(reason: reason) }
        func validate(_ request: StoreRequest) throws(IAPError) { try inner.validate(request) }
        func perform(_ request: StoreRequest) { inner.perform(request) }
        func simulate(_ command: JSONValue) throws(IAPError) -> JSONValue { try inner.simulate(command) }
        func stop() { inner.stop() }
    }

    static func openFactless(_ env: TestEnv) throws -> Bridge {
        let config = try BridgeConfig.parse(Array(env.configJSON.utf8))
        let store = try SimulatedStore.open(config: config)
        return Bridge(try Coordinator.open(config: config, store: FactlessStartStore(store)))
    }

    /// Results and revocations by key, as exact bytes.
    static func byKey(_ raw: [[UInt8]]) -> [Int64: [UInt8]] {
        var out: [Int64: [UInt8]] = [:]
        for m in raw {
            guard let v = try? JSONParser.parse(bytes: m), ["7", "revoked"].contains(v["type"]?.stringValue ?? ""),
                  let k = v.keyValue else { continue }
            #expect(out[k] == nil, "two results under key \(k)")
            out[k] = m
        }
        return out
    }

    /// A game that leaves a result of every kind unconfirmed; their live bytes by key.
    static func everyKind(_ env: TestEnv) throws -> [Int64: [UInt8]] {
        let b = try env.open()
        var raw = b.drainRaw()
        for p in ["coins_100", "remove_ads", "vip_monthly", "season_pass", "remove_ads"] { _ = try b.buy(p, 0) }
        for e in ["networkError", "notAllowed", "productUnavailable", "unknown"] {
            _ = try b.sim(#"{"op":"fail_next","error":"\#(e)"}"#)
            _ = try b.buy("coins_100", 0)
        }
        _ = try b.sim(#"{"op":"cancel_next"}"#)
        _ = try b.buy("coins_100", 0)
        raw += b.drainRaw()
        _ = try b.sim(#"{"op":"forge","productID":"coins_100"}"#)
        _ = try b.sim(#"{"op":"external_purchase","productID":"coins_100"}"#)
        _ = try b.sim(#"{"op":"family_share","productID":"remove_ads"}"#)
        _ = try b.sim(#"{"op":"fail_next","error":"networkError","chargeLater":true}"#)
        _ = try b.buy("coins_100", 0)
        raw += b.drainRaw()
        let later = try #require(try b.sim(#"{"op":"pending"}"#)["pending"]?.arrayValue?.last?["id"])
        _ = try b.sim(#"{"op":"resolve","id":\#(later.serialized)}"#)
        let k = try b.buy("coins_100", 0)
        raw += b.drainRaw()
        let txn = try #require(byKey(raw)[k].flatMap { try? JSONParser.parse(bytes: $0) }?["transactionID"]?.stringValue)
        try b.confirm(k)
        b.c.flush()
        _ = try b.sim(#"{"op":"refund","transactionID":"\#(txn)"}"#)
        raw += b.drainRaw()
        b.close()
        var live = byKey(raw)
        live[k] = nil  // confirmed
        return live
    }

    @Test("every kind of result: the bytes shown at the next open, from the stored facts, are the bytes shown live",
          arguments: [false, true])
    func sameBytesAfterReopen(factless: Bool) throws {
        let env = TestEnv()
        let live = try Self.everyKind(env)
        let codes = Set(live.values.compactMap { try? JSONParser.parse(bytes: $0) }.map {
            $0["type"]?.stringValue == "revoked" ? "revoked" : $0["result"]?.stringValue ?? "?"
        })
        #expect(codes == ["0", "1", "3", "4", "5", "6", "8", "revoked"])
        let b = factless ? try Self.openFactless(env) : try env.open()
        let again = Self.byKey(b.drainRaw())
        b.close()
        #expect(Set(again.keys) == Set(live.keys))
        for (k, bytes) in live {
            #expect(again[k] == bytes, "key \(k): live \(String(decoding: bytes, as: UTF8.self)) then \(String(decoding: again[k] ?? [], as: UTF8.self))")
        }
    }

    @Test("a format 1 outbox shown without the store's facts: the game gets the text that version stored, byte for byte",
          arguments: ["every-kind", "compacted"])
    func v1StoredTextShownAsItWas(_ fixture: String) throws {
        let (env, _) = try V1FixtureTests.open(fixture)
        // The text format 1 stored for each live result, by key.
        var stored: [Int64: [UInt8]] = [:]
        var confirmed: Set<UInt64> = []
        var ids: [Int64: UInt64] = [:]
        for p in RecordFrame.scan(try POSIX.readFile(env.dataDir + "/" + Outbox.fileName) ?? []).records {
            if p.first == 1 {
                let key = Int64(bitPattern: (1...8).reduce(UInt64(0)) { $0 | UInt64(p[8 + $1]) << (8 * UInt64($1 - 1)) })
                let id = (1...8).reduce(UInt64(0)) { $0 | UInt64(p[$1]) << (8 * UInt64($1 - 1)) }
                let txnLen = Int(p[18]) | Int(p[19]) << 8
                stored[key] = Array(p[(20 + txnLen + 4)...])
                ids[key] = id
            } else if case .confirm(let c)? = OutboxEntry.decode(p) {
                confirmed.formUnion(c)
            }
        }
        for (k, id) in ids where confirmed.contains(id) { stored[k] = nil }
        #expect(stored.count >= 15, "\(stored.count) live results in the fixture")
        let b = try Self.openFactless(env)
        let shown = Self.byKey(b.drainRaw())
        #expect(b.c.openReport.upgradedRecords > 0)
        b.close()
        #expect(Set(shown.keys) == Set(stored.keys))
        for (k, text) in stored {
            #expect(shown[k] == text, "key \(k): stored \(String(decoding: text, as: UTF8.self)) shown \(String(decoding: shown[k] ?? [], as: UTF8.self))")
        }
        // And once more, from the file the open rewrote in format 2.
        let again = try Self.openFactless(env)
        #expect(Self.byKey(again.drainRaw()) == shown)
        #expect(again.c.openReport.upgradedRecords == 0)
        again.close()
    }
}
