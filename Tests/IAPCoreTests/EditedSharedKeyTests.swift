@testable import IAPCore
import Foundation
import Testing

/// An edited outbox can hold two live records under one key (C9 says a
/// key has one result; the file is the player's). A confirm of that key
/// must take the record the game was shown, never one still held for the
/// store's word (unshown: confirming it would finish a paid purchase the
/// game never saw), and must not stop a debug build.
@Suite struct EditedSharedKeyTests {
    @Test("a failure written under a held purchase's key: the game confirms the failure it was shown; the purchase is still delivered, once")
    func confirmTakesTheShownRecord() throws {
        let env = TestEnv()
        let config = try BridgeConfig.parse(Array(env.configJSON.utf8))

        // Session 1: a purchase, shown and not confirmed.
        var store = KeyHandStore()
        var b = Bridge(try Coordinator.open(config: config, store: store))
        _ = b.drain()
        let key = try b.buy("coins_100", 0)
        let t = KeyTests.coins("T1", token: PurchaseToken(key: key, install: b.c.install))
        store.send(.transaction(t, .purchase(key: key)))
        #expect(b.drainResults().map(\.keyValue) == [key])
        b.close()

        // The file edited: a failure under the purchase's key, after it.
        var (box, _) = try Outbox.open(directory: env.dataDir)
        _ = try box.put(key: key, kind: .failure, transactionID: "",
                        facts: .failure(productID: "coins_100", failure: .declined, detail: "edited in"))
        box.close()

        // Session 2: the failure is shown at once, the purchase held until
        // the store lists its unfinished transactions; the game confirms
        // the key it was shown before the store has spoken.
        store = KeyHandStore()
        b = Bridge(try Coordinator.open(config: config, store: store))
        let shown = b.drainResults()
        #expect(shown.map(\.keyValue) == [key] && shown.first?["result"]?.stringValue == PurchaseFailure.declined.resultCode, "\(shown)")
        try b.confirm(key)
        _ = b.c.flush()
        store.send(.transaction(t, .update))
        store.send(.unfinished(["T1"]))
        let late = b.drainResults()
        #expect(late.count == 1 && late.first?["result"]?.stringValue == "0" && late.first?["transactionID"]?.stringValue == "T1",
                "the paid purchase is delivered: \(late)")
        if let k = late.first?.keyValue { try b.confirm(k) }
        b.close()

        // Nothing is left, and the transaction was never lost unshown.
        (box, _) = try Outbox.open(directory: env.dataDir)
        #expect(box.liveCount == 0, "\(box.liveRecords)")
        box.close()
    }

    @Test("a failure edited in under an unverified result's key: the unverified result comes under a key of its own; the key's confirm takes the failure")
    func unverifiedUnderFailureKey() throws {
        let env = TestEnv()
        let config = try BridgeConfig.parse(Array(env.configJSON.utf8))
        var store = KeyHandStore()
        var b = Bridge(try Coordinator.open(config: config, store: store))
        _ = b.drain()
        let key = try b.buy("coins_100", 0)
        var t = KeyTests.coins("T1", token: PurchaseToken(key: key, install: b.c.install))
        t.verified = false
        store.send(.transaction(t, .purchase(key: key)))
        #expect(b.drainResults().map(\.keyValue) == [key])
        b.close()

        var (box, _) = try Outbox.open(directory: env.dataDir)
        _ = try box.put(key: key, kind: .failure, transactionID: "",
                        facts: .failure(productID: "coins_100", failure: .declined, detail: "edited in"))
        box.close()

        store = KeyHandStore()
        b = Bridge(try Coordinator.open(config: config, store: store))
        let shown = b.drainResults()
        #expect(shown.map(\.keyValue) == [key] && shown.first?["result"]?.stringValue == PurchaseFailure.declined.resultCode, "\(shown)")
        store.send(.transaction(t, .update))
        store.send(.unfinished(["T1"]))
        let late = b.drainResults()
        #expect(late.count == 1 && late.first?["transactionID"]?.stringValue == "T1", "\(late)")
        let lateKey = try #require(late.first?.keyValue)
        #expect(lateKey != key, "a second result under key \(key)")
        // Each key has one live record: the confirms take what the game was shown.
        try b.confirm(key)
        try b.confirm(lateKey)
        _ = b.c.flush()
        b.close()
        (box, _) = try Outbox.open(directory: env.dataDir)
        #expect(box.liveCount == 0, "\(box.liveRecords)")
        box.close()
    }

    @Test("a failure record copied under its own key: shown once, the copy dropped (no second result of the key, no debug stop)")
    func failureCopiedUnderItsKey() throws {
        let env = TestEnv()
        let config = try BridgeConfig.parse(Array(env.configJSON.utf8))
        var store = KeyHandStore()
        var b = Bridge(try Coordinator.open(config: config, store: store))
        _ = b.drain()
        let key = try b.buy("coins_100", 0)
        store.send(.purchaseFailed(key: key, productID: "coins_100", failure: .declined))
        #expect(b.drainResults().map(\.keyValue) == [key])
        b.close()

        var (box, _) = try Outbox.open(directory: env.dataDir)
        _ = try box.put(key: key, kind: .failure, transactionID: "",
                        facts: .failure(productID: "coins_100", failure: .declined, detail: "copied"))
        box.close()

        store = KeyHandStore()
        b = Bridge(try Coordinator.open(config: config, store: store))
        let all = b.drain()
        let results = b.results(all)
        #expect(results.map(\.keyValue) == [key], "\(results)")
        #expect(all.contains { $0["type"]?.stringValue == "unvouched" && $0.keyValue == key }, "the copy is reported: \(all)")
        try b.confirm(key)
        _ = b.c.flush()
        b.close()
        (box, _) = try Outbox.open(directory: env.dataDir)
        #expect(box.liveCount == 0, "\(box.liveRecords)")
        box.close()
    }
}
