// iap-outbox-bench: the SDK's share of an open with N results pending (issue
// 21, item 9): from `Coordinator.open` until the game has polled all N "7"s,
// with a store that vouches for every held record and reports nothing else
// (no simulator state to replay: the SDK alone). The same N results, in the
// same run, from an outbox in format 2 (typed facts: what this version
// writes) and in format 1 (the rendered JSON 1.x wrote; the first open of
// such a file reads it through the migration and rewrites it in format 2).
//
//   swift build -c release --product iap-outbox-bench
//   .build/release/iap-outbox-bench [--quick] [--dir DIR]
//
// Figures, one `name value unit` per line (BENCHMARKS.md).
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import IAPCore

/// A store that lists the given transactions as unfinished at start and
/// reports nothing else: the coordinator delivers each held record from its
/// stored facts.
final class VouchingStore: Store, @unchecked Sendable {
    let unfinished: [String]
    /// With `--facts`, the store also re-delivers each unfinished
    /// transaction at start, as StoreKit does: the coordinator then rebuilds
    /// every message from the store's facts.
    let reported: [StoreTransaction]
    init(_ unfinished: [String]) {
        self.unfinished = unfinished
        reported = withFacts ? (0..<unfinished.count).map(transaction) : []
    }
    var name: String { "bench" }
    func start(sink: @escaping @Sendable (StoreEvent) -> Void) {
        for t in reported { sink(.transaction(t, .update)) }
        sink(.unfinished(unfinished))
    }
    func requestProducts(_ ids: [String]) {}
    func purchase(productID: String, key: Int64, token: PurchaseToken, quantity: Int) throws(IAPError) {}
    func finish(transactionID: String) {}
    func restore() {}
    func refreshEntitlements(reason: UpdateReason) {}
    func validate(_ request: StoreRequest) throws(IAPError) {}
    func perform(_ request: StoreRequest) {}
    func simulate(_ command: JSONValue) throws(IAPError) -> JSONValue { .null }
    func stop() {}
}

func nowUs() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) * 1e6 + Double(ts.tv_nsec) / 1e3
}

func median(_ v: [Double]) -> Double { let s = v.sorted(); return s[s.count / 2] }

func figure(_ name: String, _ value: Double, _ unit: String) {
    let text = value >= 100 ? String(Int(value.rounded())) : String(Double(Int(value * 100)) / 100)
    print("\(name) \(text) \(unit)")
}

/// The i-th pending purchase, as the simulated store describes one.
func transaction(_ i: Int) -> StoreTransaction {
    let id = String(2_000_000_000_000_000 + i)
    return StoreTransaction(id: id, originalID: id, productID: "coins_100", kind: .consumable,
                            purchaseDateMs: 1_795_600_000_000 + Int64(i), price: "0.99", currency: "USD",
                            token: PurchaseToken(key: 1_795_600_000_000 + Int64(i), install: 4242),
                            environment: "simulator", storefront: "USA")
}

/// Format 1's result payload: tag 1, id, key, kind, transaction ID, the rendered JSON.
func v1Payload(id: UInt64, key: Int64, transactionID: String, message: [UInt8]) -> [UInt8] {
    var p: [UInt8] = [1]
    for i in 0..<8 { p.append(UInt8((id >> (8 * UInt64(i))) & 0xff)) }
    for i in 0..<8 { p.append(UInt8((UInt64(bitPattern: key) >> (8 * UInt64(i))) & 0xff)) }
    p.append(RecordKind.purchase.rawValue)
    let t = Array(transactionID.utf8)
    p += [UInt8(t.count & 0xff), UInt8(t.count >> 8)] + t
    let n = UInt32(message.count)
    p += [UInt8(n & 0xff), UInt8((n >> 8) & 0xff), UInt8((n >> 16) & 0xff), UInt8(n >> 24)] + message
    return p
}

/// Both outbox files for N pending results (intent, then result, per purchase, as a game leaves them).
func files(_ n: Int) -> (v1: [UInt8], v2: [UInt8], ids: [String]) {
    var v1: [UInt8] = [], v2: [UInt8] = [], ids: [String] = []
    for i in 0..<n {
        let t = transaction(i)
        let key = 1_795_600_000_000 + Int64(i)
        let intent = OutboxEntry.intent(key: key, productID: t.productID, atMs: key).encoded()
        RecordFrame.encode(intent, into: &v1)
        RecordFrame.encode(intent, into: &v2)
        let facts = ResultFacts.purchase(t, origin: .game, alreadyOwned: false, clickKey: nil)
        let r = OutboxRecord(id: UInt64(i + 1), key: key, kind: .purchase, transactionID: t.id, facts: facts)
        RecordFrame.encode(OutboxEntry.put(r).encoded(), into: &v2)
        RecordFrame.encode(v1Payload(id: r.id, key: key, transactionID: t.id, message: facts.message(key: key)!.json), into: &v1)
        ids.append(t.id)
    }
    return (v1, v2, ids)
}

func write(_ path: String, _ bytes: [UInt8]) {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    precondition(fd >= 0, "cannot write \(path)")
    bytes.withUnsafeBytes { b in precondition(Glibc.write(fd, b.baseAddress, b.count) == b.count) }
    fsync(fd)
    close(fd)
}

/// One open: until N results were polled; milliseconds. Close untimed.
func openOnce(_ dir: String, _ ids: [String], expect n: Int) throws -> Double {
    let config = try BridgeConfig.parse(Array(#"{"store":"simulator","dataDir":"\#(dir)","catalog":"unused.storekit"}"#.utf8))
    let store = VouchingStore(ids)
    let t0 = nowUs()
    let c = try Coordinator.open(config: config, store: store)
    var seen = 0
    while seen < n {
        guard let m = c.queue.pop() else {
            if nowUs() - t0 > 600e6 { fatalError("only \(seen) of \(n) results re-emitted") }
            sched_yield()  // the SDK thread may share this core (2 shared cores here)
            continue
        }
        if m.starts(with: Array(#"{"type":"7""#.utf8)) { seen += 1 }
    }
    let ms = (nowUs() - t0) / 1000
    c.close()
    return ms
}

var quick = false
nonisolated(unsafe) var withFacts = false  // --facts: the store re-delivers every pending transaction at start
var v2Only = false  // --v2-only: format 2 opens alone (for a profiler)
var base = "/tmp/iap-outbox-bench-\(getpid())"
var args = CommandLine.arguments.dropFirst()
while let a = args.popFirst() {
    if a == "--quick" { quick = true } else if a == "--facts" { withFacts = true } else if a == "--v2-only" { v2Only = true } else if a == "--dir", let d = args.popFirst() { base = d }
}
mkdir(base, 0o700)
print("# iap-outbox-bench: the SDK's share of an open with N results pending (a store that vouches for all, replays nothing)")
print("# format 2 (typed facts) against format 1 (rendered JSON, read through the migration) in the same run")
for (n, samples) in [(0, quick ? 3 : 21), (1_000, quick ? 3 : 21), (100_000, quick ? 1 : 5)] {
    let (v1, v2, ids) = files(n)
    let v2dir = base + "/v2-\(n)", v1dir = base + "/v1-\(n)"
    mkdir(v2dir, 0o700)
    mkdir(v1dir, 0o700)
    write(v2dir + "/outbox.log", v2)
    var v2ms: [Double] = [], v1ms: [Double] = [], v1again: [Double] = []
    _ = try openOnce(v2dir, ids, expect: n)  // warm-up (the install ID is made once)
    for _ in 0..<samples {
        v2ms.append(try openOnce(v2dir, ids, expect: n))
        if v2Only { continue }
        // Format 1, as 1.x left it: the first open migrates and rewrites...
        write(v1dir + "/outbox.log", v1)
        v1ms.append(try openOnce(v1dir, ids, expect: n))
        // ...and the next one reads the rewritten, format 2 file.
        v1again.append(try openOnce(v1dir, ids, expect: n))
    }
    figure("outbox_open_v2_ms_\(n)", median(v2ms), "ms")
    // The outbox's own open alone (read, check, decode, index), no coordinator.
    var fileOnly: [Double] = []
    for _ in 0..<samples {
        let t0 = nowUs()
        let (box, report) = try Outbox.open(directory: v2dir)
        fileOnly.append((nowUs() - t0) / 1000)
        precondition(report.recovered == n)
        box.close()
    }
    figure("outbox_open_file_only_v2_ms_\(n)", median(fileOnly), "ms")
    if v2Only { continue }
    figure("outbox_open_v1_first_ms_\(n)", median(v1ms), "ms")
    figure("outbox_open_v1_then_ms_\(n)", median(v1again), "ms")
    if n > 0 { figure("outbox_open_v1_first_vs_v2_\(n)", median(v1ms) / median(v2ms), "x") }
    figure("outbox_file_kb_v2_\(n)", Double(v2.count) / 1024, "kB")
    figure("outbox_file_kb_v1_\(n)", Double(v1.count) / 1024, "kB")
    figure("outbox_open_samples_\(n)", Double(samples), "samples")
}
