import Foundation
import IAPCore
import IAPTestSupport
import Testing

/// The I/O fault sweep: for each workload, every write and every sync of the
/// outbox fails in turn (ENOSPC on a write, EIO on a sync; once, or until the
/// disk is "repaired"), then the disk recovers and the game plays on: every
/// charged purchase must be granted exactly once, none finished before it was
/// granted, every key has one result, and nothing comes back after
/// everything was confirmed (C1-C4, C9, C12). The simulated store's own disk
/// (Apple's) never fails here. Faults come from a `SimulatedDisk` whose
/// faults concern the outbox's log only.
@Suite("I/O fault sweep")
struct FaultSweepTests {
    /// A game that follows the README: grants a success once per key, saves,
    /// confirms every result it was shown.
    final class Game {
        var saved = Set<Int64>()
        var grants: [String: Int] = [:]
        /// Refunds taken back, by transaction (once per key, as for grants).
        var takenBack: [String: Int] = [:]
        var results: [Int64: String] = [:]
        var problems: [String] = []

        func play(_ b: Bridge) {
            for m in b.drain() {
                let type = m["type"]?.stringValue ?? ""
                guard type == "7" || type == "revoked", let k = m.keyValue else { continue }
                let txn = m["transactionID"]?.stringValue ?? ""
                if type == "7" {
                    let sig = "\(txn)/\(m["result"]?.stringValue ?? "")"
                    if let was = results[k], was != sig { problems.append("key \(k): two results \(was), \(sig)") }
                    results[k] = sig
                    if m["result"]?.stringValue == "0", !saved.contains(k) {
                        grants[txn, default: 0] += 1
                        saved.insert(k)
                    }
                } else if !saved.contains(k) {
                    takenBack[txn, default: 0] += 1
                    saved.insert(k)
                }
                do { try b.confirm(k) } catch let e as IAPError where e.code == .closed { return } catch {
                    problems.append("confirm of a shown result \(k): \(error)")
                }
            }
        }
    }

    struct Workload: Sendable {
        let name: String
        let run: @Sendable (Bridge, Game) throws -> Void
    }

    static func pendingID(_ b: Bridge) throws -> String? {
        try b.sim(#"{"op":"pending"}"#)["pending"]?.arrayValue?.first?["id"]?.stringValue
    }

    static let workloads: [Workload] = [
        Workload(name: "purchases (click and SDK keys)") { b, g in
            _ = try b.buy("coins_100", 0); g.play(b)
            _ = try b.buy("season_pass", 1_900_000_000_000); g.play(b)
            _ = try b.buy("remove_ads", -1); g.play(b)
        },
        Workload(name: "a cancel, then a purchase") { b, g in
            _ = try b.sim(#"{"op":"cancel_next"}"#)
            _ = try b.buy("coins_100", 0); g.play(b)
            _ = try b.buy("coins_100", 0); g.play(b)
        },
        Workload(name: "interrupted, then resolved") { b, g in
            _ = try b.sim(#"{"op":"interrupt_next"}"#)
            _ = try b.buy("coins_100", 0); g.play(b)
            if let id = try pendingID(b) { _ = try b.sim("{\"op\":\"resolve\",\"id\":\"\(id)\"}") }
            g.play(b)
        },
        Workload(name: "Ask to Buy, approved") { b, g in
            _ = try b.sim(#"{"op":"ask_to_buy","enabled":true}"#)
            _ = try b.buy("coins_100", 0); g.play(b)
            if let id = try pendingID(b) { _ = try b.sim("{\"op\":\"approve\",\"id\":\"\(id)\"}") }
            g.play(b)
        },
        Workload(name: "a purchase, then its refund") { b, g in
            _ = try b.buy("remove_ads", 0); g.play(b)
            b.c.flush()
            if let t = try b.transactions().first?["transactionID"]?.stringValue {
                _ = try b.sim("{\"op\":\"refund\",\"transactionID\":\"\(t)\"}")
            }
            g.play(b)
        },
        Workload(name: "compactions (a 1 KiB threshold): results and confirms across rewrites of the log") { b, g in
            try #require(b.disk).setCompactionThreshold(1024)
            for _ in 0..<6 {
                _ = try b.buy("coins_100", 0)
                g.play(b)
                _ = b.c.flush()
            }
        },
        Workload(name: "results left unconfirmed at close") { b, _ in
            _ = try b.buy("coins_100", 0)
            _ = try b.buy("season_pass", 0)
            _ = b.drain()
        },
    ]

    /// Runs `w` with the fault plan installed by `arm`, then lets the disk
    /// recover and plays until nothing is left; returns the problems found.
    static func run(_ w: Workload, arm: (SimulatedDisk) -> Void) throws -> [String] {
        let env = TestEnv()
        let disk = SimulatedDisk(faultyLog: Outbox.fileName)
        env.disk = disk
        let g = Game()
        var b = try env.open()
        g.play(b)
        arm(disk)
        try w.run(b, g)
        _ = b.c.flush()
        disk.clear()
        disk.setCompactionThreshold(nil)
        // The disk works again: the same session catches up (C12)...
        for _ in 0..<3 { _ = b.c.flush(); g.play(b) }
        _ = b.c.flush()
        b.close()
        // ...and later sessions deliver whatever is left, until nothing is.
        for _ in 0..<2 {
            b = try env.open()
            g.play(b)
            _ = b.c.flush()
            b.close()
        }
        b = try env.open()
        var problems = g.problems
        let late = b.drain().filter { $0["type"]?.stringValue == "7" || $0["type"]?.stringValue == "revoked" }
        if !late.isEmpty { problems.append("delivered after everything was confirmed: \(late.map { "\($0["type"]?.stringValue ?? "") \($0.keyValue ?? 0)" })") }
        for t in try b.transactions() {
            let id = t["transactionID"]?.stringValue ?? ""
            let n = g.grants[id] ?? 0
            if n != 1 { problems.append("transaction \(id) (\(t["productID"]?.stringValue ?? "")) granted \(n) times") }
            // A refund is taken back once: its "revoked" kept until
            // confirmed like a result, whatever failed on the way.
            let back = g.takenBack[id] ?? 0
            if back != (t["revoked"] == .bool(true) ? 1 : 0) {
                problems.append("transaction \(id) (revoked: \(t["revoked"].map { "\($0)" } ?? "?")) taken back \(back) times")
            }
            if t["finished"] == .bool(false) { problems.append("transaction \(id) never finished") }
        }
        b.close()
        return problems
    }

    @Test("every write (whole or short), sync, rename and directory sync of the outbox fails in turn, once or until repaired, in 7 workloads: every purchase granted exactly once", arguments: workloads.indices)
    func sweep(_ i: Int) throws {
        let w = Self.workloads[i]
        // Count the workload's writes and syncs on a healthy disk.
        let probe = TestEnv()
        let disk = SimulatedDisk(faultyLog: Outbox.fileName)
        probe.disk = disk
        let b = try probe.open()
        disk.count()
        try w.run(b, Game())
        _ = b.c.flush()
        b.close()
        let writes = disk.counted(.write)
        let syncs = disk.counted(.sync)
        #expect(writes > 0 && syncs > 0)

        var runs = 0
        var problems: [String] = []
        let renames = disk.counted(.rename)
        let dirSyncs = disk.counted(.directorySync)
        let plan: [(SimulatedDisk.Kind, Int, Int32)] = [(.write, writes, ENOSPC), (.shortWrite, writes, ENOSPC), (.sync, syncs, EIO),
                                                   (.rename, renames, EIO), (.directorySync, dirSyncs, EIO)]
        for (kind, total, code) in plan {
            for k in 0..<total {
                for count in [1, -1] {
                    runs += 1
                    let found = try Self.run(w) { $0.inject(kind, after: k, count: count, code: code) }
                    for p in found where problems.count < 10 { problems.append("\(kind) #\(k) fails \(count == 1 ? "once" : "until repaired"): \(p)") }
                }
            }
        }
        print("fault sweep: \"\(w.name)\": \(writes) writes, \(syncs) syncs, \(renames) renames, \(dirSyncs) directory syncs; \(runs) runs, \(problems.count) problems")
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }
}
