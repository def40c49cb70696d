import Foundation
import IAPCore
import IAPTestSupport
import Testing

/// C12 through the bridge: a failed write or sync is a failure. Faults are
/// injected with a `SimulatedDisk` (the outbox's own writes and syncs fail,
/// as on a full or failing disk). The storage model and the full
/// fault sweep are docs/DURABILITY.md's.
@Suite("Failed syncs (C12)")
struct FailedSyncTests {
    static func waitFor(_ b: Bridge, _ what: String, _ ok: ([JSONValue]) -> Bool) -> [JSONValue] {
        var seen: [JSONValue] = []
        for _ in 0..<400 {
            seen += b.drain()
            if ok(seen) { return seen }
            usleep(5_000)
        }
        Issue.record("never saw \(what): \(seen)")
        return seen
    }

    @Test("a result whose sync failed is not shown; the game is told its key and product; it arrives in the same session once the disk works")
    func resultDeliveredAfterRecovery() throws {
        let env = TestEnv()
        let disk = SimulatedDisk(faultyLog: Outbox.fileName)
        env.disk = disk
        let b = try env.open()
        _ = b.drain()
        disk.inject(.sync, count: 3)
        let key = try b.buy("coins_100", 0)
        let first = b.drain()
        #expect(b.results(first).isEmpty, "a result that is not durable is never shown (C2)")
        let error = try #require(first.first { $0["type"]?.stringValue == "error" })
        #expect(error["key"]?.stringValue == String(key) && error["productID"]?.stringValue == "coins_100")
        #expect(error["op"]?.stringValue == "outbox")
        // Two more failing syncs eat two retries; then the disk works.
        let later = Self.waitFor(b, "the result after the disk recovered") { b.results($0).contains { $0.keyValue == key } }
        #expect(b.results(later).filter { $0.keyValue == key }.count == 1)
        try b.confirm(key)
        #expect(b.c.flush() == nil)
        b.close()
        let again = try env.open()
        #expect(again.drainResults().isEmpty, "confirmed once the disk worked: not delivered again")
        again.close()
        disk.clear()
    }

    @Test("a confirm whose sync failed: iap_flush says so, nothing is finished; once the disk works the confirm lands on a fresh file")
    func confirmNotDurable() throws {
        let env = TestEnv()
        let disk = SimulatedDisk(faultyLog: Outbox.fileName)
        env.disk = disk
        let b = try env.open()
        _ = b.drain()
        let key = try b.buy("remove_ads", 0)
        let r = try #require(b.drainResults().first)
        let txn = try #require(r["transactionID"]?.stringValue)
        disk.inject(.sync, count: -1)
        try b.confirm(key)
        let failure = b.c.flush()
        #expect(failure?.code == .io, "iap_flush reports the confirm that could not be made durable")
        #expect(try b.transactions().first { $0["transactionID"]?.stringValue == txn }?["finished"] == .bool(false))
        #expect(b.c.flush()?.code == .io, "a second flush of the same broken disk is not trusted either")
        disk.clear()
        #expect(b.c.flush() == nil)
        #expect(try b.transactions().first { $0["transactionID"]?.stringValue == txn }?["finished"] == .bool(true))
        b.close()
        let again = try env.open()
        #expect(again.drainResults().isEmpty)
        again.close()
    }

    @Test("iap_close whose last confirm cannot be made durable returns the error; the result is delivered again at the next open")
    func closeReportsFailure() throws {
        let env = TestEnv()
        let disk = SimulatedDisk(faultyLog: Outbox.fileName)
        env.disk = disk
        let b = try env.open()
        _ = b.drain()
        let key = try b.buy("coins_100", 0)
        _ = b.drainResults()
        disk.inject(.sync, count: -1)
        disk.inject(.write, count: -1, code: ENOSPC)
        try b.confirm(key)
        let failure = b.c.close()
        #expect(failure?.code == .io)
        disk.clear()
        let again = try env.open()
        #expect(again.drainResults().map(\.keyValue) == [key], "not confirmed durably: delivered again, not lost")
        again.close()
    }
    @Test("a confirm whose sync failed finishes nothing at the next open until that open's sync covers it; a result never synced is shown again only after one")
    func openSyncsWhatItReadBeforeActing() throws {
        let env = TestEnv()
        let disk = SimulatedDisk(faultyLog: Outbox.fileName)
        env.disk = disk
        var b = try env.open()
        _ = b.drain()
        let key = try b.buy("coins_100", 0)
        let txn = try #require(b.drainResults().first { $0.keyValue == key }?["transactionID"]?.stringValue)
        // The confirm's frame reaches the file (the page cache) but its sync
        // fails, at the flush and at the close.
        disk.inject(.sync, count: -1)
        try b.confirm(key)
        #expect(b.c.flush()?.code == .io)
        #expect(b.c.close()?.code == .io)
        disk.clear()
        disk.count()
        b = try env.open()
        // The store delivers the unfinished transaction again; the confirm
        // read at open finishes it, but only after a sync in this process
        // made what was read durable (else a power cut would leave the
        // record live and the store's transaction finished: "unvouched").
        var finished = false
        for _ in 0..<400 where !finished {
            _ = b.drain()
            finished = try b.transactions().first { $0["transactionID"]?.stringValue == txn }?["finished"] == .bool(true)
            if !finished { usleep(5_000) }
        }
        #expect(finished)
        #expect(disk.counted(.sync) >= 1, "the open finished a transaction on the strength of bytes no sync covered")
        b.close()

        // A result whose sync failed stays in the file unsynced; the next
        // open shows it again only after syncing it.
        disk.clear()
        b = try env.open()
        _ = b.drain()
        disk.inject(.sync, count: -1)
        let key2 = try b.buy("coins_100", 0)
        usleep(50_000)
        #expect(b.drainResults().isEmpty, "C2: not shown before it is durable")
        _ = b.c.close()
        disk.clear()
        disk.count()
        b = try env.open()
        let shown = b.drainResults()
        #expect(shown.contains { $0.keyValue == key2 }, "the purchase comes at the next open: \(shown)")
        #expect(disk.counted(.sync) >= 1, "a result read at open was shown again before any sync covered it")
        b.close()
    }
    @Test("the open's sync of what it read fails: nothing is finished, and the next try goes to a fresh file, never a second sync of the same pages")
    func openSyncFailureTrustsNoSecondSync() throws {
        let env = TestEnv()
        let (opened, openedStore, disk, config) = try Self.handBridge(env)
        var b = opened, store = openedStore
        let key = try b.buy("coins_100", 0)
        let t = KeyTests.coins("T1", token: PurchaseToken(key: key, install: b.c.install))
        store.send(.transaction(t, .purchase(key: key)))
        #expect(b.drainResults().map(\.keyValue) == [key])
        // The confirm reaches the file, its sync fails.
        disk.inject(.sync, count: -1)
        try b.confirm(key)
        #expect(b.c.flush()?.code == .io)
        _ = b.c.close()
        disk.clear()

        store = KeyHandStore()
        b = Bridge(try Coordinator.open(config: config, store: store, storage: disk), disk: disk)
        _ = b.drain()
        // The store delivers T1 again; the sync that would make the confirm
        // read at open durable fails.
        disk.inject(.sync, count: 1)
        store.send(.transaction(t, .update))
        let first = b.drain()
        #expect(first.contains { $0["type"]?.stringValue == "error" && $0["op"]?.stringValue == "outbox" }, "\(first)")
        #expect(store.finished.withLock { $0 }.isEmpty, "finished on bytes no sync covered")
        // Delivered again: after a failed sync the pages may be gone while a
        // second sync succeeds; the state goes to a fresh file first.
        disk.count()
        store.send(.transaction(t, .update))
        _ = b.drain()
        #expect(store.finished.withLock { $0 } == ["T1"])
        #expect(disk.counted(.rename) >= 1, "finished after a second sync of the file whose sync failed, not a fresh file")
        b.close()
    }
}


extension FailedSyncTests {
    /// A bridge on `env`, its outbox on a simulated disk, its store driven by hand.
    static func handBridge(_ env: TestEnv) throws -> (Bridge, KeyHandStore, SimulatedDisk, BridgeConfig) {
        let disk = SimulatedDisk(faultyLog: Outbox.fileName)
        env.disk = disk
        let config = try BridgeConfig.parse(Array(env.configJSON.utf8))
        let store = KeyHandStore()
        let b = Bridge(try Coordinator.open(config: config, store: store, storage: disk), disk: disk)
        _ = b.drain()
        return (b, store, disk, config)
    }

    @Test("a charge that waited for its click's failure to be confirmed, whose write then fails: retried in the session like any result (C12), under the click's key")
    func waitingChargeRetried() throws {
        let env = TestEnv()  // kept: its deinit deletes the directories
        let (b, store, disk, _) = try Self.handBridge(env)
        let key = try b.buy("coins_100", 0)
        store.send(.purchaseFailed(key: key, productID: "coins_100", failure: .networkError))
        #expect(b.drainResults().map(\.keyValue) == [key])
        store.send(.transaction(KeyTests.coins("T1", token: PurchaseToken(key: key, install: b.c.install)), .update))
        #expect(b.drainResults().isEmpty, "the charge waits for the failure's confirm")
        disk.inject(.write, count: 1, code: ENOSPC)
        try b.confirm(key)
        let seen = Self.waitFor(b, "the charge, once the disk works") { b.results($0).contains { $0["transactionID"]?.stringValue == "T1" } }
        #expect(seen.contains { $0["type"]?.stringValue == "error" && $0["op"]?.stringValue == "outbox" }, "the failed write is reported")
        #expect(b.results(seen).filter { $0["transactionID"]?.stringValue == "T1" }.map(\.keyValue) == [key])
        b.close()
    }
}

extension FailedSyncTests {
    @Test("a purchase's intent that could not be written: the purchase is not started (the game is told), and the next write goes to a fresh file, not after a cut the disk may not have made")
    func failedIntentWriteIsSuspect() throws {
        let env = TestEnv()
        let disk = SimulatedDisk(faultyLog: Outbox.fileName)
        env.disk = disk
        let b = try env.open()
        _ = b.drain()
        disk.inject(.write, count: 1, code: ENOSPC)
        let key = try b.buy("coins_100", 0)
        let first = b.drain()
        #expect(b.results(first).isEmpty)
        #expect(first.contains { $0["type"]?.stringValue == "error" && $0["op"]?.stringValue == "buy" && $0.keyValue == key }, "\(first)")
        disk.count()
        let next = try b.buy("coins_100", 0)
        #expect(b.drainResults().map(\.keyValue) == [next])
        #expect(disk.counted(.rename) >= 1, "the next write went to the file whose write failed")
        b.close()
    }
}
