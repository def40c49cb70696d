@testable import IAPCore
import Foundation
import Testing

/// An edited outbox can hold two live records under one key (C9 says a
/// key has one result; the file is the player's). The game must get one
/// result per key, a confirm must take the record the game was shown, never
/// one still held for the store's word (unshown: confirming it would finish
/// a paid purchase the game never saw), and a debug build must not stop.
@Suite struct EditedSharedKeyTests {
    /// Session 1: one click on coins_100, answered by `answer(key, install)`,
    /// its message taken and not confirmed. Then a failure record is edited
    /// in under the click's key, after it. Returns the key and the install.
    static func editedUnderOneKey(_ env: TestEnv, _ config: BridgeConfig,
                                  answer: (Int64, UInt32) -> StoreEvent) throws -> (key: Int64, install: UInt32) {
        let store = KeyHandStore()
        let b = Bridge(try Coordinator.open(config: config, store: store))
        _ = b.drain()
        let key = try b.buy("coins_100", 0)
        store.send(answer(key, b.c.install))
        #expect(b.drainResults().map(\.keyValue) == [key])
        let install = b.c.install
        b.close()
        let (box, _) = try Outbox.open(directory: env.dataDir)
        _ = try box.put(key: key, kind: .failure, transactionID: "",
                        facts: .failure(productID: "coins_100", failure: .declined, detail: "edited in"))
        box.close()
        return (key, install)
    }

    /// `editedUnderOneKey` with the click answered by transaction T1, its
    /// token naming the click (`verified` as given). Returns the key and T1.
    static func purchaseUnderEditedKey(_ env: TestEnv, _ config: BridgeConfig,
                                       verified: Bool) throws -> (key: Int64, transaction: StoreTransaction) {
        var t = KeyTests.coins("T1", token: nil)
        let (key, _) = try editedUnderOneKey(env, config) { key, install in
            t = KeyTests.coins("T1", token: PurchaseToken(key: key, install: install))
            t.verified = verified
            return .transaction(t, .purchase(key: key))
        }
        return (key, t)
    }

    /// Session 2's first messages: the failure under `key`, shown at once.
    static func expectFailureShown(_ b: Bridge, _ key: Int64) -> [JSONValue] {
        let all = b.drain()
        let shown = b.results(all)
        #expect(shown.map(\.keyValue) == [key] && shown.first?["result"]?.stringValue == PurchaseFailure.declined.resultCode, "\(shown)")
        return all
    }

    /// Commits and closes `b`; nothing is left live in the outbox.
    static func expectNothingLeft(_ env: TestEnv, _ b: Bridge) throws {
        _ = b.c.flush()
        b.close()
        let (box, _) = try Outbox.open(directory: env.dataDir)
        #expect(box.liveCount == 0, "\(box.liveRecords)")
        box.close()
    }

    @Test("a failure edited in under a held purchase's key: the game confirms the failure it was shown; the purchase is still delivered, once")
    func confirmTakesTheShownRecord() throws {
        let env = TestEnv()
        let config = try BridgeConfig.parse(Array(env.configJSON.utf8))
        let (key, t) = try Self.purchaseUnderEditedKey(env, config, verified: true)
        // The failure is shown at once, the purchase held until the store
        // lists its unfinished transactions; the game confirms the key it
        // was shown before the store has spoken.
        let store = KeyHandStore()
        let b = Bridge(try Coordinator.open(config: config, store: store))
        _ = Self.expectFailureShown(b, key)
        try b.confirm(key)
        _ = b.c.flush()
        store.send(.transaction(t, .update))
        store.send(.unfinished(["T1"]))
        let late = b.drainResults()
        #expect(late.count == 1 && late.first?["result"]?.stringValue == "0" && late.first?["transactionID"]?.stringValue == "T1",
                "the paid purchase is delivered: \(late)")
        if let k = late.first?.keyValue { try b.confirm(k) }
        try Self.expectNothingLeft(env, b)
    }

    @Test("a failure edited in under an unverified result's key: the unverified result waits until the failure the game was shown is confirmed (one live result per key), then comes under the key")
    func unverifiedUnderFailureKey() throws {
        let env = TestEnv()
        let config = try BridgeConfig.parse(Array(env.configJSON.utf8))
        let (key, t) = try Self.purchaseUnderEditedKey(env, config, verified: false)
        let store = KeyHandStore()
        let b = Bridge(try Coordinator.open(config: config, store: store))
        _ = Self.expectFailureShown(b, key)
        store.send(.transaction(t, .update))
        store.send(.unfinished(["T1"]))
        #expect(b.drainResults().isEmpty, "a second live result under key \(key)")
        // The confirm takes what the game was shown: the failure.
        try b.confirm(key)
        let late = b.drainResults()
        #expect(late.count == 1 && late.first?["transactionID"]?.stringValue == "T1" && late.first?.keyValue == key, "\(late)")
        try b.confirm(key)
        try Self.expectNothingLeft(env, b)
    }

    @Test("a failure record copied under its own key: shown once, the copy dropped (no second result of the key, no debug stop)")
    func failureCopiedUnderItsKey() throws {
        let env = TestEnv()
        let config = try BridgeConfig.parse(Array(env.configJSON.utf8))
        let (key, _) = try Self.editedUnderOneKey(env, config) { key, _ in
            .purchaseFailed(key: key, productID: "coins_100", failure: .declined)
        }
        let b = Bridge(try Coordinator.open(config: config, store: KeyHandStore()))
        let all = Self.expectFailureShown(b, key)
        #expect(all.contains { $0["type"]?.stringValue == "unvouched" && $0.keyValue == key }, "the copy is reported: \(all)")
        try b.confirm(key)
        try Self.expectNothingLeft(env, b)
    }
}
