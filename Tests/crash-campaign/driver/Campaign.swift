#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import IAPCore
import IAPTestSupport

/// The crash campaign: runs the game (a real child process on the C ABI),
/// kills it with SIGKILL at random moments and at the SDK's named fault
/// points, sometimes deletes its dataDir (a reinstall), and checks the
/// store against the game's ledger.
struct Campaign {
    struct Options {
        var kills = 200
        var seed: UInt64 = 1
        var epochKills = 250
        var work = "/tmp/iap-campaign"
        var game = ""
        var catalog = ""
        var maxDelayUs = 80_000
        var keep = false
        /// Compaction threshold the game runs with (IAP_OUTBOX_COMPACT_BYTES).
        var compactBytes = 16_384
    }

    struct Figures {
        var kills = 0, timerKills = 0, faultKills = 0, runs = 0, cleanRuns = 0, reinstalls = 0, epochs = 0
        /// Timer kills that came after the run's first click (not while the
        /// game was still starting or opening).
        var timerKillsAfterClick = 0
        var killsAt: [String: Int] = [:]
        var faultsNotReached = 0
        var purchases = 0, consumables = 0, nonConsumables = 0, clicks = 0, failures = 0
        var lost = 0, grantedTwice = 0, finishedButUnconfirmed = 0
        var keyMismatches = 0, c5Cases = 0, c5WithClickKey = 0
        var reemittedAfterDrain = 0, unfinishedAfterDrain = 0, notReemitted = 0
        var redelivered = 0, damageReports = 0, sdkErrors = 0
        /// "7"s for keys whose confirm the game had seen made durable (C4).
        var afterDurableConfirm = 0, durableConfirms = 0
        var problems: [String] = []

        var passed: Bool {
            lost == 0 && grantedTwice == 0 && finishedButUnconfirmed == 0 && keyMismatches == 0 && c5Cases == c5WithClickKey
                && reemittedAfterDrain == 0 && unfinishedAfterDrain == 0 && notReemitted == 0 && afterDurableConfirm == 0
                && problems.isEmpty
        }

        /// What the campaign must have done for its verdict to mean
        /// anything: a kill at every fault point (a point the SDK no longer
        /// reaches, or an `IAP_CRASH_AT` no longer read, would otherwise
        /// leave only timer kills), timer kills in the middle of play, and
        /// durable confirms for the C4 check to hold the SDK to.
        var notCovered: [String] {
            var gaps = Campaign.faultPoints.filter { (killsAt[$0] ?? 0) == 0 }.map { "no kill at the fault point \($0)" }
            // A quarter at least: the timer's range is 0-80 ms and the
            // game's start takes some of them (about a third here, more on a
            // slow runner; 71 of 113 came after the first click in a CI run).
            if timerKills > 0 && timerKillsAfterClick * 4 < timerKills {
                gaps.append("only \(timerKillsAfterClick) of \(timerKills) timer kills came after the run's first click")
            }
            if durableConfirms == 0 { gaps.append("no confirm was made durable (iap_flush) before a later run") }
            return gaps
        }
    }

    static let faultPoints = FaultPoint.allCases.map(\.rawValue)

    var o: Options
    var f = Figures()
    var rng: SplitMix64

    init(_ o: Options) {
        self.o = o
        rng = SplitMix64(seed: o.seed)
    }

    mutating func run() -> Figures {
        let start = monotonicMs()
        while f.kills < o.kills && f.problems.isEmpty {
            let target = min(o.kills, f.kills + o.epochKills)
            runEpoch(until: target)
            let secs = Double(monotonicMs() - start) / 1000
            print("  epoch \(f.epochs): \(f.kills) kills, \(f.runs) runs, \(f.purchases) purchases, "
                  + "lost \(f.lost), granted twice \(f.grantedTwice), finished-but-unconfirmed \(f.finishedButUnconfirmed) "
                  + "(\(Int(secs))s)")
            fflush(nil)   // progress shows as it happens, also when logged to a file
        }
        return f
    }

    private mutating func runEpoch(until target: Int) {
        f.epochs += 1
        let dir = o.work + "/epoch-\(f.epochs)"
        removeTree(dir)
        mkdir(dir, 0o700)
        let log = dir + "/game.log"
        var ledger = Ledger(path: dir + "/ledger.txt")
        var c5: [(key: Int64, product: String)] = []
        var flagged = Set<String>()

        while f.kills < target && f.problems.isEmpty {
            f.runs += 1
            if rng.chance(4) && POSIX.exists(dir + "/data") {
                removeTree(dir + "/data")   // a reinstall: the store's state stays
                f.reinstalls += 1
                ledger.refresh()
                ledger.reinstalled()
            }
            let useFault = rng.chance(35)
            var env = ["IAP_OUTBOX_COMPACT_BYTES=\(o.compactBytes)"]
            var point = ""
            if useFault {
                point = Campaign.faultPoints[rng.below(Campaign.faultPoints.count)]
                env.append("IAP_CRASH_AT=\(point):\(1 + rng.below(point == "during_compaction" ? 2 : 6))")
            }
            let buys = useFault ? 60 : 5 + rng.below(40)
            let delayUs = rng.below(o.maxDelayUs)
            let childSeed = rng.next()
            let clicksBefore = ledger.clicks.count
            let child = Child.spawn(o.game, ["--work", dir, "--catalog", o.catalog, "--seed", String(childSeed),
                                             "--buys", String(buys)], env: env, log: log)
            let outcome: Child.Outcome
            if useFault {
                let (out, timedOut) = child.wait(timeoutMs: 30_000)
                outcome = out
                if timedOut { f.problems.append("run \(f.runs): the game hung (fault \(point))") }
            } else {
                usleep(useconds_t(delayUs))
                child.kill9()
                outcome = child.wait().0
            }
            switch outcome {
            case .killed:
                f.kills += 1
                if useFault {
                    f.faultKills += 1
                    f.killsAt[point, default: 0] += 1
                } else {
                    f.timerKills += 1
                    f.killsAt["timer", default: 0] += 1
                }
            case .exited(0):
                f.cleanRuns += 1
                if useFault { f.faultsNotReached += 1 }
            case .exited(let code):
                f.problems.append("run \(f.runs): the game exited with \(code); see \(log)")
            case .signalled(let sig):
                f.problems.append("run \(f.runs): the game died of signal \(sig); see \(log)")
            }
            ledger.refresh()
            if outcome == .killed && !useFault && ledger.clicks.count > clicksBefore { f.timerKillsAfterClick += 1 }
            if outcome == .killed && point == "after_charge" {
                // Killed on the SDK thread right after the store charged: the
                // newest transaction. Purchases are asynchronous, so the game
                // may have clicked again since: its token says which click.
                if let t = (try? StoreView.transactions(work: dir, catalog: o.catalog))?
                    .max(by: { (Int64($0.id) ?? 0) < (Int64($1.id) ?? 0) }),
                   let k = t.tokenKey, let click = ledger.clicks.first(where: { $0.key == k }) {
                    c5.append(click)
                } else {
                    f.problems.append("run \(f.runs): killed after a charge, but the newest transaction carries no click of this game")
                }
            }
            // At every step: nothing the store finished may be missing from the
            // game's ledger (finish only after grant and confirm, C3).
            do throws(IAPError) {
                for t in try StoreView.transactions(work: dir, catalog: o.catalog)
                where t.finished && ledger.grantsByTxn[t.id] == nil && !flagged.contains(t.id) {
                    flagged.insert(t.id)
                    f.finishedButUnconfirmed += 1
                }
            } catch {
                f.problems.append("run \(f.runs): cannot read the store: \(error.message)")
            }
        }
        finishEpoch(dir: dir, ledger: &ledger, c5: c5, flagged: flagged)
    }

    /// A final clean run drains everything; then the books are compared.
    private mutating func finishEpoch(dir: String, ledger: inout Ledger, c5: [(key: Int64, product: String)], flagged: Set<String>) {
        let log = dir + "/game.log"
        let drain = Child.spawn(o.game, ["--work", dir, "--catalog", o.catalog, "--seed", "0", "--buys", "0", "--drain"],
                                env: [], log: log)
        if drain.wait(timeoutMs: 60_000).0 != .exited(0) { f.problems.append("epoch \(f.epochs): the final drain run failed; see \(log)") }
        ledger.refresh()
        let txns: [StoreTxn]
        do throws(IAPError) {
            let final = try StoreView.finalOpen(work: dir, catalog: o.catalog)
            f.reemittedAfterDrain += final.results
            txns = final.txns
        } catch {
            f.problems.append("epoch \(f.epochs): final open failed: \(error.message)")
            return
        }
        f.purchases += txns.count
        f.consumables += txns.filter { $0.kind == "consumable" }.count
        f.nonConsumables += txns.filter { $0.kind == "nonConsumable" }.count
        f.clicks += ledger.clicks.count
        f.failures += ledger.failures
        f.redelivered += ledger.redelivered
        f.durableConfirms += ledger.durablyConfirmedEver
        for k in ledger.afterDurableConfirm {
            f.afterDurableConfirm += 1
            report("C4: a result with key \(k) was delivered again after the game saw its confirm made durable")
        }
        f.damageReports += ledger.damageReports
        f.sdkErrors += ledger.errors.count
        for (k, result) in ledger.owed {
            f.notReemitted += 1
            report("the result with key \(k) (result \(result)) was seen, never confirmed, and not re-emitted")
        }
        var byTokenKey: [Int64: StoreTxn] = [:]
        for t in txns {
            let keys = ledger.grantsByTxn[t.id] ?? []
            if keys.isEmpty { f.lost += 1; report("lost: transaction \(t.id) (\(t.product)) never reached the ledger") }
            if keys.count > 1 { f.grantedTwice += 1; report("granted twice: transaction \(t.id) under keys \(keys)") }
            if !t.finished { f.unfinishedAfterDrain += 1 }
            if let k = t.tokenKey {
                byTokenKey[k] = t
                if !keys.isEmpty && keys != [k] { f.keyMismatches += 1; report("C5: transaction \(t.id) made by click \(k) granted under \(keys)") }
            }
            if t.finished && keys.isEmpty && !flagged.contains(t.id) { f.finishedButUnconfirmed += 1 }
        }
        for (k, n) in ledger.grantsByKey where n > 1 { f.grantedTwice += 1; report("granted twice: key \(k) granted \(n) times") }
        let known = Set(txns.map(\.id))
        for g in ledger.grants where !known.contains(g.txn) { report("the ledger grants \(g.txn), which the store never charged") ; f.problems.append("phantom grant \(g.txn)") }
        for e in ledger.errors { report("SDK error: \(e)") }
        for (key, product) in c5 {
            f.c5Cases += 1
            if let t = byTokenKey[key], t.product == product, ledger.grantsByTxn[t.id] == [key] { f.c5WithClickKey += 1 } else {
                report("C5: the purchase clicked with key \(key) (\(product)) before the after_charge kill did not arrive with that key")
            }
        }
        if f.passed && !o.keep { removeTree(dir) }
    }

    private func report(_ s: String) { print("  ! " + s) }
}

/// Deletes a directory tree (the campaign's own directories only).
func removeTree(_ path: String) {
    guard let d = opendir(path) else { unlink(path); return }
    while let e = readdir(d) {
        let name = withUnsafeBytes(of: e.pointee.d_name) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        if name == "." || name == ".." { continue }
        let child = path + "/" + name
        var st = stat()
        if lstat(child, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR { removeTree(child) } else { unlink(child) }
    }
    closedir(d)
    rmdir(path)
}
