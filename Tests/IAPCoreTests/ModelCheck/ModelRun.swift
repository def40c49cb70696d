import Foundation
@_spi(Testing) import IAPCore

/// One model-checking run: a bridge on a `ManualExecutor`, the store
/// (`ModelWorld`) and a game that follows the README's side of the contract,
/// driven one action at a time. Every action the checker may take next is
/// listed by `enabled()`; `perform` takes it. Crashes drop everything the
/// SDK thread had not done and everything the game held in memory.
final class ModelRun {
    enum Outcome: String, CaseIterable {
        case success, cancel, interrupted, askToBuy
        /// The store reports an error, then charges after all (a bank check
        /// that passes later): the charge comes through the update stream.
        case errorThenCharge
    }

    struct Scenario: Sendable {
        let name: String
        var buys = 1
        var outcomes: [Outcome] = [.success]
        var externals = 0
        var twins = 1
        var crashes = 1
        var maxActions = 14
    }

    enum Action: CustomStringConvertible {
        case buy, step, timer, answer(Int, Outcome), resolve(Int, approve: Bool), external, twin(Int)
        case poll, handle, confirm, crash
        var description: String {
            switch self {
            case .buy: return "buy"
            case .step: return "step"
            case .timer: return "timer"
            case .answer(let i, let o): return "answer\(i):\(o.rawValue)"
            case .resolve(let i, let a): return "resolve\(i):\(a ? "approve" : "decline")"
            case .external: return "external"
            case .twin(let i): return "twin\(i)"
            case .poll: return "poll"
            case .handle: return "handle"
            case .confirm: return "confirm"
            case .crash: return "crash"
            }
        }
    }

    let scenario: Scenario
    let world = ModelWorld()
    let root: String
    let config: BridgeConfig
    private(set) var exec = ManualExecutor()
    private(set) var store: ModelStore
    private(set) var c: Coordinator

    // The game: its save survives crashes; what it holds in memory does not.
    private var saved: Set<Int64> = []
    private var savedNotConfirmed: Set<Int64> = []
    private var local: [JSONValue] = []
    private var toConfirm: [Int64] = []
    /// Every key's result as the game saw it: one result per key (C9).
    private var seen: [Int64: String] = [:]
    private var buysLeft: Int
    private var externalsLeft: Int
    private var twinsLeft: Int
    private var crashesLeft: Int
    private var nextClick: Int64 = 1_000
    private(set) var violations: [String] = []

    init(_ scenario: Scenario, root: String, catalog: String) throws {
        self.scenario = scenario
        self.root = root
        buysLeft = scenario.buys
        externalsLeft = scenario.externals
        twinsLeft = scenario.twins
        crashesLeft = scenario.crashes
        let json = "{\"store\":\"simulator\",\"dataDir\":\"\(root)/data\",\"catalog\":\"\(catalog)\",\"entitlementsAtOpen\":false}"
        config = try BridgeConfig.parse(Array(json.utf8))
        store = ModelStore(world)
        c = try Coordinator.open(config: config, store: store, executor: exec)
    }

    // MARK: Choices

    func enabled() -> [Action] {
        var out: [Action] = []
        if buysLeft > 0 { out.append(.buy) }
        if exec.pendingJobs > 0 { out.append(.step) }
        if exec.pendingTimers > 0 { out.append(.timer) }
        for i in world.calls.indices { for o in scenario.outcomes { out.append(.answer(i, o)) } }
        for (i, p) in world.pendings.enumerated() {
            out.append(.resolve(i, approve: true))
            if p.why == .askToBuy { out.append(.resolve(i, approve: false)) }
        }
        if externalsLeft > 0 { out.append(.external) }
        if twinsLeft > 0 { for i in world.txns.indices { out.append(.twin(i)) } }
        if !c.queue.isEmpty { out.append(.poll) }
        if !local.isEmpty { out.append(.handle) }
        if !toConfirm.isEmpty { out.append(.confirm) }
        if crashesLeft > 0 { out.append(.crash) }
        return out
    }

    func perform(_ a: Action) throws {
        switch a {
        case .buy:
            buysLeft -= 1
            nextClick += 1
            _ = try c.buy(productID: "coins_100", clickMs: nextClick)
        case .step:
            exec.step()
        case .timer:
            exec.fireNextTimer()
        case .answer(let i, let o):
            let call = world.calls.remove(at: i)
            switch o {
            case .success:
                store.send(.transaction(world.charge(call.productID, token: call.key), .purchase(key: call.key)))
            case .cancel:
                store.send(.purchaseFailed(key: call.key, productID: call.productID, failure: .cancelled))
            case .interrupted:
                world.pendings.append((call.key, call.productID, .interrupted))
                store.send(.purchaseFailed(key: call.key, productID: call.productID, failure: .interrupted))
            case .askToBuy:
                world.pendings.append((call.key, call.productID, .askToBuy))
                store.send(.pending(key: call.key, productID: call.productID, reason: .askToBuy))
            case .errorThenCharge:
                world.pendings.append((call.key, call.productID, .chargeLater))
                store.send(.purchaseFailed(key: call.key, productID: call.productID, failure: .unknown))
            }
        case .resolve(let i, let approve):
            let p = world.pendings.remove(at: i)
            if approve {
                store.send(.transaction(world.charge(p.productID, token: p.key), .update))
            } else {
                store.send(.purchaseFailed(key: p.key, productID: p.productID, failure: .declined))
            }
        case .external:
            externalsLeft -= 1
            store.send(.transaction(world.charge("coins_100", token: nil), .update))
        case .twin(let i):
            twinsLeft -= 1
            store.send(.transaction(ModelWorld.storeTransaction(world.txns[i]), .update))
        case .poll:
            if let m = c.queue.pop(), let v = try? JSONParser.parse(bytes: m) { local.append(v) }
        case .handle:
            handle(local.removeFirst())
        case .confirm:
            let k = toConfirm.removeFirst()
            expectConfirm(k, .ok, "a shown result")
            savedNotConfirmed.remove(k)
            expectConfirm(k, .unknownKey, "a second confirm")
        case .crash:
            crashesLeft -= 1
            try crashAndRestart()
        }
    }

    // MARK: The game

    private func handle(_ m: JSONValue) {
        switch m["type"]?.stringValue {
        case "7":
            guard let k = m.keyValue, let result = m["result"]?.stringValue else {
                violations.append("a \"7\" without key or result: \(m)")
                return
            }
            let txn = m["transactionID"]?.stringValue ?? ""
            let sig = txn.isEmpty ? "failure:\(result)" : "txn:\(txn)"
            // One result per key (C9), but for one thing: a store that
            // charged after it reported an error gives the click's key its
            // charge once the game confirmed the failure (keyForCharge).
            if let was = seen[k], was != sig {
                let failureThenCharge = was.hasPrefix("failure:") && !txn.isEmpty
                if !failureThenCharge { violations.append("key \(k) had two results: \(was) and \(sig) (C9)") }
                if failureThenCharge && toConfirm.contains(k) {
                    violations.append("key \(k): a charge shown while its failure was live, not confirmed (C9)")
                }
            }
            seen[k] = sig
            if result == "0" {
                // Grant and save (one step for the game), unless granted before.
                if !saved.contains(k) {
                    world.grants[txn, default: 0] += 1
                    saved.insert(k)
                }
                savedNotConfirmed.insert(k)
            }
            toConfirm.append(k)
        case "error":
            violations.append("an error message: \(m)")
        default:
            break  // "pending", "entitlements": nothing to confirm
        }
    }

    private func expectConfirm(_ k: Int64, _ want: IAPCode, _ what: String) {
        let got: IAPCode
        do throws(IAPError) { try c.confirm(key: k); got = .ok } catch { got = error.code }
        if got != want { violations.append("confirm of \(what) (key \(k)) answered \(got.name), expected \(want.name)") }
    }

    private func crashAndRestart() throws {
        exec.kill()
        c.crashForTesting()
        local = []
        toConfirm = []
        // A payment sheet that was up completes while the game is dead: a
        // charged, unfinished transaction carrying the click's key (C5).
        for call in world.calls { _ = world.charge(call.productID, token: call.key) }
        world.calls = []
        try reopen()
        // A game that confirms the keys it saved before it polls: nothing
        // has been shown in this session, so nothing may be taken (C9).
        for k in savedNotConfirmed.sorted() {
            do {
                try c.confirm(key: k)
                violations.append("a confirm before any poll took key \(k) (C9)")
            } catch {}
        }
    }

    private func reopen() throws {
        exec = ManualExecutor()
        store = ModelStore(world)
        c = try Coordinator.open(config: config, store: store, executor: exec)
    }

    // MARK: The end of a run

    /// Lets everything finish: the store answers and approves everything,
    /// the SDK thread and the game run until nothing is left; then a last
    /// launch must deliver nothing. Checks the run's invariants.
    func finishAndCheck() throws {
        for _ in 0..<20 {
            var progressed = false
            while !world.calls.isEmpty { try perform(.answer(0, .success)); progressed = true }
            while !world.pendings.isEmpty { try perform(.resolve(0, approve: true)); progressed = true }
            exec.drainAll()
            while let m = c.queue.pop() {
                if let v = try? JSONParser.parse(bytes: m) { local.append(v) }
                progressed = true
            }
            while !local.isEmpty { handle(local.removeFirst()); progressed = true }
            // A confirm can bring a message: a charge that waited for its
            // click's failure to be confirmed (keyForCharge).
            while !toConfirm.isEmpty { try perform(.confirm); progressed = true }
            exec.drainAll()
            if !progressed { break }
        }
        if let e = c.close() { violations.append("close failed: \(e)") }
        try reopen()
        exec.drainAll()
        while let m = c.queue.pop() {
            let v = try? JSONParser.parse(bytes: m)
            if v?["type"]?.stringValue == "7" { violations.append("delivered again after everything was confirmed: \(v!)") }
        }
        _ = c.close()
        for t in world.txns {
            let n = world.grants[t.id] ?? 0
            if n != 1 { violations.append("transaction \(t.id) granted \(n) times") }
            if !t.finished { violations.append("transaction \(t.id) never finished") }
        }
        for id in world.finishedUngranted { violations.append("transaction \(id) finished before it was granted (C3)") }
    }
}

