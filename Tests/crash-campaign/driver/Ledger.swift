import IAPCore

/// The game's ledger (see Tests/crash-campaign/game/main.c), read as it
/// grows. Only complete lines count: the game cuts a line a kill left
/// unfinished before it appends again.
struct Ledger {
    struct Grant {
        let key: Int64
        let txn: String
        let product: String
        let origin: String
    }

    let path: String
    private var offset = 0
    private(set) var clicks: [(key: Int64, product: String)] = []
    private(set) var grants: [Grant] = []
    private(set) var grantsByTxn: [String: [Int64]] = [:]
    private(set) var grantsByKey: [Int64: Int] = [:]
    private(set) var redelivered = 0
    private(set) var failures = 0
    private(set) var damageReports = 0
    private(set) var errors: [String] = []
    /// Results the game saw and never began to confirm: key -> result code. The
    /// outbox owes each of them again at the next open (C1); only the outbox
    /// keeps failures, so this checks it without the store's help.
    private(set) var owed: [Int64: String] = [:]
    /// Keys whose confirm the game saw made durable (a "Y" line: an
    /// `iap_flush` returned IAP_OK after it). The outbox owes them nothing.
    private(set) var durablyConfirmed = Set<Int64>()
    /// A "7" seen for a key in `durablyConfirmed`: a result delivered again
    /// after its confirm was durable (C4), whatever the game did with it.
    private(set) var afterDurableConfirm: [Int64] = []
    /// "Y" lines read, reinstalls or not.
    private(set) var durablyConfirmedEver = 0

    /// A reinstall wipes the outbox: failures (nothing charged) go with it;
    /// paid results stay owed, the store re-delivers them.
    /// The store re-delivers what it never finished under the click's key
    /// again: a reinstall ends what the outbox's tombstones promised.
    mutating func reinstalled() {
        owed = owed.filter { $0.value == "0" }
        durablyConfirmed.removeAll()
    }

    init(path: String) { self.path = path }

    mutating func refresh() {
        let bytes = (try? POSIX.readFile(path)).flatMap { $0 } ?? []
        guard bytes.count > offset else { return }
        var start = offset
        for i in offset..<bytes.count where bytes[i] == UInt8(ascii: "\n") {
            parse(String(decoding: bytes[start..<i], as: UTF8.self))
            start = i + 1
        }
        offset = start
    }

    private mutating func parse(_ line: String) {
        let f = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        guard let tag = f.first else { return }
        switch tag {
        case "B":
            if f.count >= 3, let k = Int64(f[1]) { clicks.append((k, f[2])) }
        case "G":
            if f.count >= 5, let k = Int64(f[1]) {
                grants.append(Grant(key: k, txn: f[2], product: f[3], origin: f[4]))
                grantsByTxn[f[2], default: []].append(k)
                grantsByKey[k, default: 0] += 1
            }
        case "S":
            if f.count >= 3, let k = Int64(f[1]) {
                owed[k] = f[2]
                if durablyConfirmed.contains(k) { afterDurableConfirm.append(k) }
            }
        case "Y":
            if f.count >= 2, let k = Int64(f[1]) {
                durablyConfirmed.insert(k)
                durablyConfirmedEver += 1
            }
        case "C":
            if f.count >= 2, let k = Int64(f[1]) { owed[k] = nil }
        case "R": redelivered += 1
        case "F": failures += 1
        case "D": damageReports += 1
        case "E": errors.append(line)
        default: break
        }
    }
}
