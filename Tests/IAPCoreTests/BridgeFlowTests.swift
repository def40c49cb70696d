import Foundation
import IAPCore
import IAPSimulator
import Testing

/// The core flow (README) on the simulated store, driven from Swift.
/// Clicks a wall clock makes (C7: below 10^12 a click is an engine clock's,
/// and the key is past the wall clock instead): `wall + n` is its own key.
private let wall: Int64 = 1_700_000_000_000

@Suite("Bridge flow")
struct BridgeFlowTests {
    @Test("buy → durable \"7\" with the click key → redelivered until confirmed → finished only after confirm")
    func buyConfirmRedeliver() throws {
        let env = TestEnv()
        var b = try env.open()
        #expect(b.drainResults().isEmpty)
        let key = try b.buy("coins_100", 1_700_000_000_123)
        #expect(key == 1_700_000_000_123)
        let r = b.drainResults()
        #expect(r.count == 1)
        #expect(r.first?["key"]?.stringValue == "1700000000123")
        #expect(r.first?["result"]?.stringValue == "0")
        #expect(r.first?["origin"]?.stringValue == "game")
        #expect(r.first?["price"]?.stringValue == "0.99" && r.first?["currency"]?.stringValue == "USD")
        let txn = try #require(r.first?["transactionID"]?.stringValue)
        // C3: not finished before the game confirms.
        #expect(try b.transactions().first { $0["transactionID"]?.stringValue == txn }?["finished"] == .bool(false))
        b.close()

        b = try env.open()
        let again = b.drainResults()
        #expect(again.map { $0["transactionID"]?.stringValue } == [txn], "redelivered once after reopen")
        try b.confirm(key)
        b.c.flush()
        #expect(try b.transactions().first { $0["transactionID"]?.stringValue == txn }?["finished"] == .bool(true))
        #expect(throws: IAPError.self) { try b.confirm(key) }
        b.close()

        b = try env.open()
        #expect(b.drainResults().isEmpty, "nothing after confirm")
        // C7: a key is never handed out twice, not even once confirmed: the
        // same click time gets the next key above every key handed out.
        #expect(try b.buy("coins_100", key) > key)
        b.close()
    }

    @Test("C7: a used click key is replaced by a fresh one (past the last key and the wall clock); an SDK key is chosen for click <= 0; unknown products store nothing")
    func keys() throws {
        let env = TestEnv()
        let b = try env.open()
        let before = POSIX.nowMs()
        #expect(try b.buy("coins_100", wall + 42) == wall + 42)
        // Two taps in one millisecond (or a clock set back): a fresh key,
        // past the wall clock (a restored outbox may have forgotten keys).
        let fresh = try b.buy("remove_ads", wall + 42)
        #expect(fresh >= before)
        let lower = try b.buy("coins_100", wall + 40)
        #expect(lower > fresh, "a click key below the last one handed out is replaced too")
        let k1 = try b.buy("coins_100", 0)
        let k2 = try b.buy("coins_100", -1)
        #expect(k1 > lower && k2 > k1)
        do {
            _ = try b.buy("no_such_thing", 1_000_000_000_000_000)
            Issue.record("unknown product accepted")
        } catch let e as IAPError {
            #expect(e.code == .unknownProduct)
        }
        #expect(b.drainResults().map(\.keyValue) == [wall + 42, fresh, lower, k1, k2])
        #expect(b.c.liveRecordCount == 5)
        b.close()
        // After a restart (and with the clock anywhere) no key comes back.
        let b2 = try env.open()
        _ = b2.drain()
        for click in [wall + 42, fresh, k2, 0, -7] {
            let k = try b2.buy("coins_100", click)
            #expect(k > k2, "click \(click) got key \(k), at or below one handed out before the restart")
        }
        b2.close()
    }

    @Test("C3+C5: after a reinstall the store re-delivers unconfirmed purchases with the game's key; confirmed ones never")
    func reinstall() throws {
        let env = TestEnv()
        var b = try env.open()
        _ = try b.buy("coins_100", wall + 1001)
        _ = try b.buy("coins_100", wall + 1002)
        _ = b.drain()
        try b.confirm(wall + 1001)
        b.close()
        env.reinstall()

        b = try env.open()
        let r = b.drainResults()
        #expect(r.map(\.keyValue) == [wall + 1002], "only the unconfirmed one, with its click key")
        #expect(r.first?["origin"]?.stringValue == "store", "a reinstall is another install (C7); the key stays")
        try b.confirmAll(r)
        b.close()
        env.reinstall()
        b = try env.open()
        #expect(b.drainResults().isEmpty)
        b.close()
    }

    @Test("C4: a transaction the store lists again after confirm is not emitted again (tombstone), and is finished again")
    func tombstone() throws {
        let env = TestEnv()
        // A store that forgets to finish: as if the app died between confirm and finish.
        let config = try BridgeConfig.parse(Array(env.configJSON.utf8))
        let inner = try SimulatedStore.open(config: config)
        let forgetful = ForgetfulStore(inner)
        var c = try Coordinator.open(config: config, store: forgetful)
        let key = try c.buy(productID: "coins_100", clickMs: 77)
        var b = Bridge(c)
        #expect(b.drainResults().count == 1)
        try b.confirm(key)
        c.flush()
        #expect(c.tombstoneCount == 1)
        c.close()

        // The store still lists it as unfinished and re-delivers it at open.
        let inner2 = try SimulatedStore.open(config: config)
        c = try Coordinator.open(config: config, store: inner2)
        b = Bridge(c)
        #expect(b.drainResults().isEmpty, "C4: confirmed transaction emitted again")
        c.flush()
        #expect(try b.transactions().allSatisfy { $0["finished"] == .bool(true) }, "re-delivered tombstoned transaction finished again")
        c.close()

        // Next open: the store no longer lists it; the tombstone goes.
        let inner3 = try SimulatedStore.open(config: config)
        c = try Coordinator.open(config: config, store: inner3)
        #expect(c.tombstoneCount == 0)
        c.close()
    }

    @Test("C4: a transaction delivered twice in one session (purchase result and update stream) is one \"7\"")
    func duplicateDelivery() throws {
        let env = TestEnv()
        let b = try env.open()
        _ = try b.buy("coins_100", 5)
        // Replaying the same store events: re-delivery at open of the same session.
        b.c.store.restore()
        b.c.store.restore()
        let r = b.drainResults()
        #expect(r.count == 1)
        b.close()
    }

    @Test("C4: an owned product's purchase result arriving after its update-stream twin was confirmed is not a second \"7\"")
    func lateOwnedPurchaseResult() throws {
        let env = TestEnv()
        let config = try BridgeConfig.parse(Array(env.configJSON.utf8))
        let store = LaggingStore(try SimulatedStore.open(config: config))
        let c = try Coordinator.open(config: config, store: store)
        let b = Bridge(c)
        _ = b.drain()
        _ = try b.buy("remove_ads", wall + 4242)
        c.settle()
        // The update stream delivered it first; the game granted and confirmed.
        let first = b.drainResults()
        #expect(first.map(\.keyValue) == [wall + 4242])
        try b.confirm(wall + 4242)
        c.flush()
        // Now the purchase call's own result arrives.
        store.releaseHeld()
        #expect(b.drainResults().isEmpty, "key 4242 delivered twice in one session")
        // A real second click on the owned product still gets its answer.
        _ = try b.buy("remove_ads", wall + 4243)
        c.settle()
        store.releaseHeld()
        let again = b.drainResults()
        #expect(again.map(\.keyValue) == [wall + 4243] && again.first?["alreadyOwned"] == .bool(true))
        c.close()
    }

    @Test("Simulator op promote: a \"promoted\" message, nothing bought until the game's iap_buy")
    func promoted() throws {
        let env = TestEnv()
        let b = try env.open()
        _ = try b.sim(#"{"op":"promote","productID":"remove_ads"}"#)
        let ms = b.drain()
        let m = try #require(ms.first { $0["type"]?.stringValue == "promoted" })
        #expect(m["productID"]?.stringValue == "remove_ads" && m["offer"] == .null)
        #expect(b.results(ms).isEmpty, "nothing bought without the game")
        _ = try b.buy("remove_ads", wall + 5_001)
        let r = b.drainResults()
        #expect(r.map(\.keyValue) == [wall + 5_001] && r.first?["result"]?.stringValue == "0")
        #expect(throws: IAPError.self) { _ = try b.sim(#"{"op":"promote","productID":"no_such"}"#) }
        b.close()
    }

    @Test("C6: a forged transaction is reported unverified, never as success")
    func forged() throws {
        let env = TestEnv()
        var b = try env.open()
        _ = try b.sim(#"{"op":"forge","productID":"coins_100"}"#)
        let r = b.drainResults()
        #expect(r.count == 1)
        #expect(r.first?["result"]?.stringValue == "6" && r.first?["resultName"]?.stringValue == "unverified")
        #expect(r.first?["origin"]?.stringValue == "store")
        b.close()
        b = try env.open()
        let again = b.drainResults()
        #expect(again.count == 1 && again.allSatisfy { $0["result"]?.stringValue == "6" }, "delivered again, unverified, until confirmed: \(again)")
        try b.confirmAll(again)
        b.close()
    }

    @Test("C7: store-initiated purchases get a negative SDK key, stable across a reinstall")
    func storeInitiated() throws {
        let env = TestEnv()
        var b = try env.open()
        _ = try b.sim(#"{"op":"external_purchase","productID":"coins_100"}"#)
        let r = b.drainResults()
        let key = try #require(r.first?.keyValue)
        #expect(key < 0 && r.first?["origin"]?.stringValue == "store")
        b.close()
        env.reinstall()
        b = try env.open()
        #expect(b.drainResults().map(\.keyValue) == [key])
        b.close()
    }

    @Test("a message goes to the callback or to poll, never both; the callback runs on the SDK's thread")
    func callbackOrPoll() throws {
        let env = TestEnv()
        let b = try env.open()
        _ = b.drain()
        let seen = Locked<[String]>([])
        let mainThread = pthread_self()
        let offThread = Locked(0)
        b.c.queue.setListener { json in
            seen.withLock { $0.append(String(cString: json)) }
            if pthread_equal(pthread_self(), mainThread) == 0 { offThread.withLock { $0 += 1 } }
        }
        for i in 0..<20 { _ = try b.buy("coins_100", Int64(100 + i)) }
        var polled = 0
        // The poller starts once the callback has run (or after 1 s): on a
        // busy runner a callback thread that waits for a core would
        // otherwise find every message already polled.
        for i in 0..<3000 {
            if i >= 1000 || seen.withLock({ !$0.isEmpty }), b.c.queue.pop() != nil { polled += 1 }
            if seen.withLock({ $0.count }) + polled >= 20 { break }
            usleep(1000)
        }
        b.c.queue.setListener(nil)
        let viaCallback = seen.withLock { $0.count }
        #expect(viaCallback + polled == 20, "each of 20 messages exactly once: \(viaCallback) + \(polled)")
        #expect(viaCallback > 0, "the callback never ran: nothing below says on which thread it runs")
        #expect(offThread.withLock { $0 } == viaCallback)
        for m in seen.withLock({ $0 }) { #expect(MessageSchemas.validate(m).isEmpty) }
        b.close()
    }

    @Test("bad configs are named errors", arguments: [
        ("", IAPCode.badJSON), ("{", .badJSON), ("[]", .badConfig), ("{\"store\":\"itunes\",\"dataDir\":\"/tmp/x\"}", .badConfig),
        ("{\"store\":\"simulator\",\"dataDir\":\"/tmp/x\"}", .badConfig),
        ("{\"store\":\"simulator\",\"dataDir\":\"/tmp/x\",\"catalog\":\"c\",\"extra\":true}", .badConfig),
        ("{\"store\":\"simulator\",\"dataDir\":\"/tmp/x\",\"catalog\":\"c\",\"simulator\":{\"stateDirr\":\"/t\"}}", .badConfig),
        ("{\"store\":\"simulator\",\"dataDir\":\"/tmp/x\",\"catalog\":\"c\",\"nonRenewingTerms\":{\"a\":\"forever\"}}", .badConfig),
        ("{\"store\":\"storekit\",\"dataDir\":\"/tmp/x\",\"catalog\":\"c\"}", .badConfig),
    ])
    func badConfig(_ text: String, _ code: IAPCode) {
        do {
            let c = try BridgeConfig.parse(Array(text.utf8))
            _ = try SimulatorOptions.parse(c.simulator, dataDir: c.dataDir)
            Issue.record("accepted \(text)")
        } catch {
            #expect(error.code == code, "\(text): \(error)")
        }
    }

    @Test("data directories: created when the parent exists, refused otherwise, owner-only files")
    func directories() throws {
        let env = TestEnv()
        let b = try env.open()
        _ = try b.buy("coins_100", 9)
        var st = stat()
        #expect(stat(env.dataDir, &st) == 0 && (st.st_mode & 0o777) == 0o700)
        #expect(stat(env.dataDir + "/" + Outbox.fileName, &st) == 0 && (st.st_mode & 0o777) == 0o600)
        b.close()
        #expect(throws: IAPError.self) { try POSIX.prepareDirectory(env.root + "/a/b", role: "dataDir") }
        #expect(throws: IAPError.self) { try POSIX.prepareDirectory("relative", role: "dataDir") }
        _ = FileManager.default.createFile(atPath: env.root + "/file", contents: Data())
        #expect(throws: IAPError.self) { try POSIX.prepareDirectory(env.root + "/file", role: "dataDir") }
    }

    @Test("one bridge per dataDir at a time")
    func busy() throws {
        let env = TestEnv()
        let b = try env.open()
        do {
            _ = try env.open()
            Issue.record("second bridge opened on the same directories")
        } catch let e as IAPError {
            #expect(e.code == .busy)
        }
        b.close()
        try env.open().close()
    }

    @Test("the lock survives a deleted lock file: another process cannot open a dataDir whose .lock a \"clear cache\" removed")
    func lockSurvivesDeletedLockFile() throws {
        try Self.expectSecondProcessRefused { _ in }
    }

    @Test("the lock survives the holder listing its own dataDir: closing another descriptor of the directory releases nothing (issue 21, defect 2)")
    func lockSurvivesListingTheDirectory() throws {
        try Self.expectSecondProcessRefused { dir in
            // What a game's file browser or cache cleaner does: POSIX record
            // locks (fcntl) of this process on the directory went with
            // either close.
            let d = try #require(opendir(dir), "opendir \(dir)")
            var names = 0
            while readdir(d) != nil { names += 1 }
            closedir(d)
            #expect(names >= 3, "., .. and the outbox")
            let fd = open(dir, O_RDONLY | O_DIRECTORY)
            try #require(fd >= 0)
            close(fd)
        }
    }

    /// A bridge holds `dataDir`; `touch` does what the holder's process does
    /// to the directory, then its `.lock` is deleted, and a second process
    /// (its own store state: only the dataDir is shared, the store's lock
    /// would refuse it otherwise and prove nothing) must be refused.
    static func expectSecondProcessRefused(_ touch: (String) throws -> Void) throws {
        let env = TestEnv()
        let b = try env.open()
        _ = b.drain()
        _ = try b.buy("coins_100", 0)
        _ = b.drainResults()
        try touch(env.dataDir)
        #expect(unlink(env.dataDir + "/.lock") == 0)
        let exe = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().path + "/iap-hardening-driver"
        try #require(FileManager.default.isExecutableFile(atPath: exe), "build the package first: \(exe)")
        let p = Process()
        p.executableURL = URL(fileURLWithPath: exe)
        p.arguments = ["open", "--config", env.configJSON.replacingOccurrences(of: env.stateDir, with: env.root + "/other-store")]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = out
        try p.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        #expect(text.contains("IAP_E_BUSY") && p.terminationStatus == 1, "a second process opened the dataDir: \(text)")
        // The bridge that holds it goes on: its result is confirmable, its compaction safe.
        b.close()
        let again = try env.open()
        #expect(again.drainResults().count == 1, "the unconfirmed result is still there")
        again.close()
    }

    @Test("another process holding the data directory makes iap_open busy, and the directory is free once it lets go")
    func busyAcrossProcesses() throws {
        let env = TestEnv()
        try env.open().close()  // creates the directories and the lock file
        // A second process takes the lock (flock), as another game instance would.
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["python3", "-c", "import fcntl,sys,time; f=open(sys.argv[1],'r+'); fcntl.flock(f, fcntl.LOCK_EX|fcntl.LOCK_NB); print('locked', flush=True); time.sleep(30)",
                       env.dataDir + "/.lock"]
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        // SIGKILL: a test runner may ignore SIGTERM, and children inherit that.
        defer { if p.isRunning { kill(p.processIdentifier, SIGKILL); p.waitUntilExit() } }
        let line = out.fileHandleForReading.availableData
        try #require(String(decoding: line, as: UTF8.self).hasPrefix("locked"), "python3 could not take the lock")
        do {
            _ = try env.open()
            Issue.record("opened while another process holds the directory")
        } catch let e as IAPError {
            #expect(e.code == .busy)
        }
        kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
        try env.open().close()
    }
}

/// Wraps a store and drops `finish`: the app "died" between confirm and finish.
final class ForgetfulStore: Store, @unchecked Sendable {
    let inner: Store
    init(_ inner: Store) { self.inner = inner }
    var name: String { inner.name }
    func attach(scheduler: StoreScheduler) { inner.attach(scheduler: scheduler) }
    func validatePurchase(productID: String, quantity: Int) throws(IAPError) {
        try inner.validatePurchase(productID: productID, quantity: quantity)
    }
    func start(sink: @escaping @Sendable (StoreEvent) -> Void) { inner.start(sink: sink) }
    func requestProducts(_ ids: [String]) { inner.requestProducts(ids) }
    func purchase(productID: String, key: Int64, token: PurchaseToken, quantity: Int) throws(IAPError) {
        try inner.purchase(productID: productID, key: key, token: token, quantity: quantity)
    }
    func finish(transactionID: String) {}
    func restore() { inner.restore() }
    func refreshEntitlements(reason: UpdateReason) { inner.refreshEntitlements(reason: reason) }
    func validate(_ request: StoreRequest) throws(IAPError) { try inner.validate(request) }
    func perform(_ request: StoreRequest) { inner.perform(request) }
    func simulate(_ command: JSONValue) throws(IAPError) -> JSONValue { try inner.simulate(command) }
    func stop() { inner.stop() }
}

/// Delivers each purchase result through the update stream first and holds
/// the purchase call's own answer until `releaseHeld` (StoreKit's two paths
/// racing).
final class LaggingStore: Store, @unchecked Sendable {
    let inner: Store
    private let held = Locked<[StoreEvent]>([])
    private let sink = Locked<(@Sendable (StoreEvent) -> Void)?>(nil)
    init(_ inner: Store) { self.inner = inner }
    var name: String { inner.name }
    func attach(scheduler: StoreScheduler) { inner.attach(scheduler: scheduler) }
    func validatePurchase(productID: String, quantity: Int) throws(IAPError) {
        try inner.validatePurchase(productID: productID, quantity: quantity)
    }
    func start(sink: @escaping @Sendable (StoreEvent) -> Void) {
        self.sink.withLock { $0 = sink }
        inner.start { [held] event in
            if case .transaction(let t, .purchase) = event {
                held.withLock { $0.append(event) }
                if !t.alreadyOwned { sink(.transaction(t, .update)) }
            } else {
                sink(event)
            }
        }
    }
    func releaseHeld() {
        let events = held.withLock { h in defer { h.removeAll() }; return h }
        if let s = sink.withLock({ $0 }) { for e in events { s(e) } }
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
