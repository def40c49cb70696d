#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import IAPCore

// iap-crash-campaign: proves the outbox under real kills (docs/DURABILITY.md).
//
//   iap-crash-campaign --kills N [--seed S] [--epoch K] [--work DIR] [--max-delay-ms M] [--keep]
//   iap-crash-campaign fsync [--work DIR]
//
// The game it kills is iap-crash-game, built next to this program.

func absolute(_ path: String) -> String? {
    guard let p = realpath(path, nil) else { return nil }
    defer { free(p) }
    return String(cString: p)
}

func usage() -> Never {
    print("usage: iap-crash-campaign [--kills N] [--seed S] [--epoch K] [--work DIR] [--game PATH] [--catalog FILE] [--max-delay-ms M] [--keep]")
    print("       iap-crash-campaign fsync [--work DIR] [--catalog FILE]")
    exit(2)
}

func number(_ text: String) -> Int {
    guard let n = Int(text), n >= 0 else { usage() }
    return n
}

var args = Array(CommandLine.arguments.dropFirst())
let fsyncMode = args.first == "fsync"
if fsyncMode { args.removeFirst() }

var o = Campaign.Options()
var seedGiven = false
// The campaign catalog sits next to this source directory.
let sourceDir = POSIX.parent(of: POSIX.parent(of: #filePath))
o.catalog = sourceDir + "/Campaign.storekit"
o.game = POSIX.parent(of: absolute(CommandLine.arguments[0]) ?? CommandLine.arguments[0]) + "/iap-crash-game"

var rest = args[...]
while let flag = rest.popFirst() {
    if flag == "--keep" { o.keep = true; continue }
    guard let v = rest.popFirst() else { usage() }
    switch flag {
    case "--kills": o.kills = number(v)
    case "--seed": o.seed = UInt64(number(v)); seedGiven = true
    case "--epoch": o.epochKills = max(1, number(v))
    case "--work": o.work = v
    case "--game": o.game = v
    case "--catalog": o.catalog = v
    case "--max-delay-ms": o.maxDelayUs = max(1, number(v)) * 1000
    default: usage()
    }
}
if !seedGiven {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    o.seed = UInt64(ts.tv_sec) % 1_000_000
}
guard let catalog = absolute(o.catalog) else { print("no catalog at \(o.catalog)"); exit(2) }
o.catalog = catalog
mkdir(o.work, 0o700)
guard let work = absolute(o.work) else { print("cannot use \(o.work)"); exit(2) }
o.work = work

if fsyncMode {
    exit(FsyncReport.run(work: o.work + "/fsync", catalog: o.catalog) ? 0 : 1)
}

guard access(o.game, X_OK) == 0 else { print("the game is not built at \(o.game) (swift build)"); exit(2) }
print("crash campaign: seed \(o.seed), \(o.kills) kills, game \(o.game)")
print("  reproduce: scripts/campaign.sh --kills \(o.kills) --seed \(o.seed)")
fflush(nil)
let t0 = monotonicMs()
var campaign = Campaign(o)
let f = campaign.run()
let secs = Double(monotonicMs() - t0) / 1000
let points = (["timer"] + Campaign.faultPoints).map { "\($0) \(f.killsAt[$0] ?? 0)" }.joined(separator: ", ")
print("""
crash campaign figures (seed \(o.seed), \(Int(secs)) s):
  kills:                      \(f.kills) (\(points))
  runs:                       \(f.runs) (\(f.cleanRuns) ran to the end; \(f.faultsNotReached) with a fault point not reached), \(f.reinstalls) reinstalls, \(f.epochs) epochs
  purchases:                  \(f.purchases) charged transactions (\(f.consumables) consumable, \(f.nonConsumables) non-consumable), \(f.clicks) clicks, \(f.failures) cancelled results
  lost:                       \(f.lost)
  granted twice:              \(f.grantedTwice)
  finished-but-unconfirmed:   \(f.finishedButUnconfirmed)
  C5 key across a crash:      \(f.c5WithClickKey)/\(f.c5Cases) purchases killed after the charge arrived with the click key; \(f.keyMismatches) key mismatches in all
  seen, unconfirmed, never re-emitted: \(f.notReemitted) (outbox-only check: includes failures, which the store cannot re-deliver)
  after the final drain:      \(f.reemittedAfterDrain) results re-emitted, \(f.unfinishedAfterDrain) transactions unfinished
  redelivered (information):  \(f.redelivered) results for keys already granted, ignored by the game
  C4 after durable confirms:  \(f.afterDurableConfirm) results delivered again after the game saw their confirm made durable (\(f.durableConfirms) durable confirms)
  timer kills mid-play:       \(f.timerKillsAfterClick) of \(f.timerKills) came after the run's first click
  outbox damage reports:      \(f.damageReports); SDK error messages: \(f.sdkErrors)
""")
for p in f.problems { print("  problem: \(p)") }
// A short campaign (a developer's quick look) may miss a fault point by
// chance; from 100 kills on, a gap means the campaign did not test what it
// says, and fails.
let coverage = o.kills >= 100 ? f.notCovered : []
if o.kills < 100 { print("  coverage not checked: fewer than 100 kills") }
for g in coverage { print("  not covered: \(g)") }
let passed = f.passed && f.kills >= o.kills && coverage.isEmpty
print("crash campaign: \(passed ? "PASS" : "FAIL")")
exit(passed ? 0 : 1)
