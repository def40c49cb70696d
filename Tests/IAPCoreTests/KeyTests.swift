import Foundation
import IAPCore
import IAPSimulator
import Testing

/// C7 (docs/CONTRACT.md, "keys only increase"): a key is never handed out
/// twice on one dataDir, whatever the game's clock, a restored backup or the
/// outbox's key mark say.
@Suite("Keys (C7)")
struct KeyTests {
    /// One launch of the game: buys with these clicks, grants and confirms
    /// every result, closes. Returns the keys `iap_buy` handed out.
    static func session(_ env: TestEnv, _ clicks: [Int64]) throws -> [Int64] {
        let b = try env.open()
        try b.confirmAll(b.drainResults())
        var keys: [Int64] = []
        for click in clicks { keys.append(try b.buy("coins_100", click)) }
        let results = b.drainResults()
        #expect(results.compactMap(\.keyValue).sorted() == keys.sorted(), "one \"7\" per purchase, under the key iap_buy returned")
        try b.confirmAll(results)
        b.close()
        return keys
    }

    /// The dataDir's files (the lock file aside), as a device backup holds them.
    static func backup(_ dir: String) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: dir) where name != ".lock" {
            files[name] = try Data(contentsOf: URL(fileURLWithPath: dir + "/" + name))
        }
        return files
    }

    /// Puts a backup back: the dataDir holds exactly its files again.
    static func restore(_ files: [String: Data], to dir: String) throws {
        for name in try FileManager.default.contentsOfDirectory(atPath: dir) where name != ".lock" {
            try FileManager.default.removeItem(atPath: dir + "/" + name)
        }
        for (name, data) in files { try data.write(to: URL(fileURLWithPath: dir + "/" + name)) }
    }

    @Test("an outbox restored from an older backup (the game's cloud save not) hands out no key again to an engine clock (issue 21, defect 3)")
    func restoredBackup() throws {
        let env = TestEnv()
        // An engine clock: milliseconds since launch, so every launch clicks
        // low. The game's save (restored from the cloud, not from the
        // backup) holds every key it was handed.
        var handed = try Self.session(env, [5_000, 9_000])
        let older = try Self.backup(env.dataDir)
        handed += try Self.session(env, [3_000, 4_000, 12_000])
        handed += try Self.session(env, [2_000])
        #expect(Set(handed).count == handed.count)
        // The device is restored from the older backup, some time later.
        try Self.restore(older, to: env.dataDir)
        usleep(20_000)
        let after = try Self.session(env, [3_000, 4_000, 12_000, 2_000, 5_000])
        #expect(Set(after).count == after.count)
        #expect(Set(after).isDisjoint(with: handed),
                "handed out again after the restore: \(Set(after).intersection(handed).sorted()); the game ignores those keys and the player loses the purchase")
    }

    @Test("an engine clock's clicks on a new install (a save that outlived the last one) repeat no key the save holds; a wall clock's click above the mark is its own key (issue 21, defect 3: a cloud save outliving the install)")
    func engineClockAcrossInstalls() throws {
        let env = TestEnv()
        // Milliseconds since launch: the same few values on every install.
        let clicks: [Int64] = [1_000, 5_000, 9_000]
        let first = try Self.session(env, clicks)
        try FileManager.default.removeItem(atPath: env.dataDir)   // a reinstall: the store account and the save stay
        let second = try Self.session(env, clicks)
        #expect(Set(first).isDisjoint(with: second),
                "the new install handed out keys the save granted already: \(Set(first).intersection(second).sorted()); the game ignores those and the player loses the purchase")
        let now = POSIX.nowMs()
        #expect((first + second).allSatisfy { $0 >= now - 60_000 }, "an engine click kept as its key: \(first + second)")
        // A wall clock's click above the mark is its own key; one below
        // 10^12 ms (no wall clock's) gets a key past the clock.
        let b = try env.open()
        let click = POSIX.nowMs() + 5_000
        #expect(try b.buy("coins_100", click) == click)
        let k = try b.buy("coins_100", 999_999_999_999)
        #expect(k > click, "click 999,999,999,999 became key \(k)")
        try b.confirmAll(b.drainResults())
        b.close()
    }

    /// Buys once per click in each of `launches` launches, confirming every
    /// result; a refused click must be refused with IAP_E_INVALID_ARG.
    /// Returns every key handed out, in order.
    static func launches(_ env: TestEnv, _ launches: Int, clicks: [Int64]) throws -> [Int64] {
        var handed: [Int64] = []
        for _ in 0..<launches {
            let b = try env.open()
            try b.confirmAll(b.drainResults())
            for click in clicks {
                do {
                    handed.append(try b.buy("coins_100", click))
                } catch let e as IAPError {
                    #expect(e.code == .invalidArgument, "click \(click): \(e)")
                }
            }
            try b.confirmAll(b.drainResults())
            b.close()
        }
        return handed
    }

    static func repeated(_ keys: [Int64]) -> [Int64] {
        var seen = Set<Int64>()
        return keys.filter { !seen.insert($0).inserted }
    }

    @Test("clicks at and past the limit (2^61, 2^62 - 2, 2^62 - 1, 2^62, Int64.max) are refused with IAP_E_INVALID_ARG; no key comes back at a later launch (issue 21, defect 5)")
    func clicksAtTheLimit() throws {
        let env = TestEnv()
        let limit: [Int64] = [1 << 61, (1 << 62) - 2, (1 << 62) - 1, 1 << 62, Int64.max]
        let b = try env.open()
        for click in limit {
            do {
                let k = try b.buy("coins_100", click)
                Issue.record("click \(click) accepted as key \(k)")
            } catch let e as IAPError {
                #expect(e.code == .invalidArgument && e.message.contains("2^61"), "click \(click): \(e)")
            }
        }
        try b.confirmAll(b.drainResults())
        b.close()
        // Whatever a launch accepted, low clicks after it never repeat a key.
        let handed = try Self.launches(env, 3, clicks: limit + [0, 1, 0])
        #expect(Self.repeated(handed).isEmpty, "handed out twice: \(Self.repeated(handed)) of \(handed)")
        #expect(handed.count == 9, "the low clicks each got a key: \(handed)")
    }

    @Test("the largest click (2^61 - 1) is its own key, and the keys above it are remembered across launches")
    func largestClick() throws {
        let env = TestEnv()
        let top: Int64 = (1 << 61) - 1
        let handed = try Self.launches(env, 1, clicks: [top, 0, 5]) + Self.launches(env, 2, clicks: [0, top, 7])
        #expect(handed.first == top)
        #expect(handed == (0..<9).map { top + Int64($0) }, "\(handed)")
        #expect(Self.repeated(handed).isEmpty)
    }

    /// Appends a key-mark frame to the outbox: an edit (or a version that
    /// wrote it).
    static func appendKeyMark(_ dataDir: String, _ mark: Int64) throws {
        let path = dataDir + "/" + Outbox.fileName
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        RecordFrame.encode(OutboxEntry.keyMark(mark).encoded(), into: &bytes)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    static let editedMarks: [Int64] = [(1 << 62) - 1, (1 << 62) - 2, (1 << 62) - 3, 1 << 61]

    @Test("an outbox key mark edited near the limit (2^62 - 1, 2^62 - 2, 2^62 - 3, 2^61): no key is handed out twice across launches; one that leaves no key refuses the purchase", arguments: KeyTests.editedMarks)
    func editedMark(_ mark: Int64) throws {
        let env = TestEnv()
        var handed = try Self.session(env, [1_000])
        try Self.appendKeyMark(env.dataDir, mark)
        handed += try Self.launches(env, 3, clicks: [0, 1])
        #expect(Self.repeated(handed).isEmpty, "mark \(mark): handed out twice: \(Self.repeated(handed)) of \(handed)")
        #expect(handed.allSatisfy { $0 < Outbox.keyLimit }, "mark \(mark): a key the mark cannot remember: \(handed)")
        // Below the limit every key is remembered; the purchases refused are
        // exactly those no key was left for.
        let room = Int(min(Outbox.keyLimit - 1 - mark, 6))
        #expect(handed.count == 1 + room, "mark \(mark): \(handed)")
    }

    @Test("no fresh key left (a mark edited to the highest): a charge after a failure the game has not confirmed waits for that confirm, then takes the click's key, one the mark holds")
    func lateResultWithNoKeyLeft() throws {
        let env = TestEnv()
        _ = try Self.session(env, [1_000])
        try Self.appendKeyMark(env.dataDir, Outbox.keyLimit - 2)
        let config = try BridgeConfig.parse(Array(env.configJSON.utf8))
        let store = KeyHandStore()
        let b = Bridge(try Coordinator.open(config: config, store: store))
        _ = b.drain()
        let key = try b.buy("coins_100", 0)
        #expect(key == Outbox.keyLimit - 1, "the last key there is")
        // The store reports a network error (not confirmed yet), then
        // charges after all: one live result per key (C9), so it waits.
        store.send(.purchaseFailed(key: key, productID: "coins_100", failure: .networkError))
        #expect(b.drainResults().map(\.keyValue) == [key])
        store.send(.transaction(StoreTransaction(id: "T1", originalID: "T1", productID: "coins_100", kind: .consumable,
                                                 purchaseDateMs: 1, price: "0.99", currency: "USD",
                                                 token: PurchaseToken(key: key), environment: "test"), .update))
        #expect(b.drainResults().isEmpty, "a second live result under key \(key)")
        try b.confirm(key)
        let late = b.drainResults()
        #expect(late.count == 1 && late.first?["result"]?.stringValue == "0" && late.first?.keyValue == key
                && late.first?["clickKey"] == nil, "\(late)")
        b.close()
    }
}

/// The game's side of the contract, counted: it grants a success whose key
/// its save does not hold, and confirms every result. Keeps every result
/// each key had (C9: one).
final class CountingGame {
    var granted: Set<Int64> = []
    var grants: [String: Int] = [:]
    var resultsByKey: [Int64: [String]] = [:]

    func handle(_ results: [JSONValue], on b: Bridge) throws {
        for r in results {
            guard let k = r.keyValue, let code = r["result"]?.stringValue else { continue }
            resultsByKey[k, default: []].append(code + ":" + (r["transactionID"]?.stringValue ?? ""))
            if code == "0", granted.insert(k).inserted { grants[r["transactionID"]?.stringValue ?? "", default: 0] += 1 }
        }
        try b.confirmAll(results)
    }
}

extension KeyTests {
    static func coins(_ id: String, token: PurchaseToken?) -> StoreTransaction {
        StoreTransaction(id: id, originalID: id, productID: "coins_100", kind: .consumable, purchaseDateMs: 1,
                         price: "0.99", currency: "USD", token: token, environment: "test")
    }

    @Test("a store that charges after an error the game confirmed: the charge is the click's one success, under the click's key, granted once: after a restart, after a reinstall, on a second device, and when its twin comes after its tombstone went (issue 21, item 6)",
          arguments: [PurchaseFailure.unknown, .networkError])
    func chargeAfterConfirmedFailure(_ failure: PurchaseFailure) throws {
        let env = TestEnv()
        let config = try BridgeConfig.parse(Array(env.configJSON.utf8))
        var store = KeyHandStore()
        var b = Bridge(try Coordinator.open(config: config, store: store))
        _ = b.drain()
        let game = CountingGame()
        let key = try b.buy("coins_100", 0)
        store.send(.purchaseFailed(key: key, productID: "coins_100", failure: failure))
        let failed = b.drainResults()
        #expect(failed.map(\.keyValue) == [key] && failed.first?["result"]?.stringValue == failure.resultCode)
        // The failure says what happens if the player was charged anyway.
        let text = failed.first?["message"]?.stringValue ?? ""
        #expect(text.contains("under this same key") && text.contains("once this one is confirmed"), "\(text)")
        try game.handle(failed, on: b)

        // The bank's check passes after all: the charge, with the click's token.
        let t = Self.coins("T1", token: PurchaseToken(key: key, install: b.c.install))
        store.send(.transaction(t, .update))
        let late = b.drainResults()
        #expect(late.count == 1 && late.first?["result"]?.stringValue == "0", "\(late)")
        #expect(late.first?.keyValue == key && late.first?["clickKey"] == nil, "\(late)")
        #expect(late.first?["origin"]?.stringValue == "game")
        // Granted and saved; the game is killed before its confirm.
        for r in late { if r["result"]?.stringValue == "0", let k = r.keyValue, game.granted.insert(k).inserted { game.grants["T1", default: 0] += 1 } }
        b.close()

        /// A launch whose store lists T1 as `unfinished` (an empty list: finished) and then delivers it.
        func relaunch(unfinished: [String]) throws -> [JSONValue] {
            store = KeyHandStore()
            b = Bridge(try Coordinator.open(config: config, store: store))
            _ = b.drain()
            store.send(.unfinished(unfinished))
            store.send(.transaction(t, .update))
            return b.drainResults()
        }
        // Next launch: delivered again under the same key, ignored.
        let again = try relaunch(unfinished: ["T1"])
        #expect(again.map(\.keyValue).allSatisfy { $0 == key }, "\(again)")
        b.close()

        // A reinstall (dataDir gone, the save kept: a cloud save), or the
        // player's second device: no memory of the failure, and the same key.
        env.reinstall()
        let reinstalled = try relaunch(unfinished: ["T1"])
        #expect(reinstalled.map(\.keyValue) == [key], "\(reinstalled)")
        try game.handle(reinstalled, on: b)
        b.close()

        // Finished now; its tombstone goes with the next install, and the
        // update stream delivers it once more: the same key again.
        env.reinstall()
        let twin = try relaunch(unfinished: [])
        #expect(twin.allSatisfy { $0.keyValue == key }, "the same transaction came back under another key: \(twin)")
        try game.handle(twin, on: b)
        b.close()

        #expect(game.grants == ["T1": 1], "granted \(game.grants)")
        #expect(game.resultsByKey[key]?.first == failure.resultCode + ":", "key \(key) had \(game.resultsByKey[key] ?? [])")
        #expect(Set(game.resultsByKey[key]?.dropFirst() ?? []) == ["0:T1"], "after its failure, key \(key) had only its charge: \(game.resultsByKey[key] ?? [])")
    }
}

/// A store whose events the test sends by hand; it records what it was
/// told to finish.
final class KeyHandStore: Store, @unchecked Sendable {
    let name = "hand"
    let finished = Locked<[String]>([])
    private let sink = Locked<(@Sendable (StoreEvent) -> Void)?>(nil)
    func start(sink: @escaping @Sendable (StoreEvent) -> Void) { self.sink.withLock { $0 = sink } }
    func send(_ e: StoreEvent) { sink.withLock { $0 }?(e) }
    func requestProducts(_ ids: [String]) {}
    func purchase(productID: String, key: Int64, token: PurchaseToken, quantity: Int) throws(IAPError) {}
    func finish(transactionID: String) { finished.withLock { $0.append(transactionID) } }
    func restore() {}
    func refreshEntitlements(reason: UpdateReason) {}
    func validate(_ request: StoreRequest) throws(IAPError) { throw IAPError(.notSupported, "hand store") }
    func perform(_ request: StoreRequest) {}
    func simulate(_ command: JSONValue) throws(IAPError) -> JSONValue { throw IAPError(.notSupported, "hand store") }
    func stop() { sink.withLock { $0 = nil } }
}
