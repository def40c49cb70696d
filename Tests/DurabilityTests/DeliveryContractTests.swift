import Foundation
import IAPCore
import IAPSimulator
import Testing

/// The delivery contract across the crashes that matter, played in-process:
/// a `CrashableStore` drops what a kill at that moment would lose, and
/// `close()` then a new `Launch` is the restart. (The real kills are the
/// crash campaign's job: scripts/campaign.sh.)
@Suite("Delivery contract across crashes")
struct DeliveryContractTests {
    @Test("C4: one \"7\" per transaction across the purchase result, the update stream, a restore and the re-delivery at open")
    func dedupeEveryPath() throws {
        let s = Scratch()
        var l = try Launch(s)
        let key = try l.c.buy(productID: "coins_100", clickMs: 1_700_000_000_001)
        let first = l.results()
        #expect(first.count == 1 && first[0].key == key)
        let t = try #require(l.store.delivered.last)
        l.store.redeliver(t)            // the update stream sees it too
        try l.c.restore()               // a restore lists it as unfinished
        #expect(l.results().isEmpty, "the same transaction again is not a new result")
        l.close()

        // Restart: the outbox re-emits it and the store re-delivers it; one "7".
        l = try Launch(s)
        let again = l.results()
        #expect(again.count == 1 && again[0].key == key && again[0].txn == t.id)
        l.store.redeliver(t)
        #expect(l.results().isEmpty)
        try l.c.confirm(key: key)
        l.c.flush()
        #expect(try l.transaction(t.id)?["finished"]?.boolValue == true)
        l.store.redeliver(t)            // a late duplicate after the confirm
        try l.c.restore()
        #expect(l.results().isEmpty, "C4: never again after confirm")
        l.close()

        l = try Launch(s)
        #expect(l.results().isEmpty)
        l.close()
    }

    @Test("C4: the tombstone of a confirmed transaction lasts until the store stops listing it as unfinished")
    func tombstoneLifetime() throws {
        let s = Scratch()
        // Confirmed durably, then killed before the store's finish.
        var l = try Launch(s, dropFinishes: true)
        let key = try l.c.buy(productID: "coins_100", clickMs: 1_700_000_000_002)
        let txn = try #require(l.results().first?.txn)
        try l.c.confirm(key: key)
        l.c.flush()
        #expect(l.c.tombstoneCount == 1)
        #expect(try l.transaction(txn)?["finished"]?.boolValue == false)
        l.close()

        // Still unfinished at the store: re-delivered, not shown, tombstone kept.
        l = try Launch(s, dropFinishes: true)
        #expect(l.results().isEmpty)
        #expect(l.c.tombstoneCount == 1)
        #expect(l.store.finishes == [txn], "the SDK asks the store to finish it again")
        l.close()

        // This time the finish reaches the store. It was listed unfinished at
        // this launch, so the tombstone stays one more launch.
        l = try Launch(s)
        #expect(l.results().isEmpty)
        #expect(try l.transaction(txn)?["finished"]?.boolValue == true)
        #expect(l.c.tombstoneCount == 1)
        l.close()

        // The store no longer lists it: the tombstone goes, and nothing comes back.
        l = try Launch(s)
        #expect(l.results().isEmpty)
        #expect(l.c.tombstoneCount == 0)
        l.close()
        l = try Launch(s)
        #expect(l.results().isEmpty && l.c.tombstoneCount == 0)
        l.close()
    }

    @Test("C3: the store is never asked to finish a transaction before its confirm is on disk")
    func finishOnlyAfterDurableConfirm() throws {
        let s = Scratch()
        let path = s.outboxPath
        let violations = Locked<[String]>([])
        // At every finish, read the outbox file as a crash would leave it.
        let check: @Sendable (String) -> Void = { txn in
            let bytes = (try? POSIX.readFile(path)).flatMap { $0 } ?? []
            var ids: Set<UInt64> = [], confirmed: Set<UInt64> = [], tombstoned = false
            for p in RecordFrame.scan(bytes).records {
                switch OutboxEntry.decode(p) {
                case .put(let r)? where r.transactionID == txn: ids.insert(r.id)
                case .confirm(let c)?: confirmed.formUnion(c)
                case .tombstone(let t, _)? where t == txn: tombstoned = true
                default: break
                }
            }
            if !tombstoned && (ids.isEmpty || !ids.isSubset(of: confirmed)) {
                violations.withLock { $0.append(txn) }
            }
        }
        let l = try Launch(s, onFinish: check)
        var finished = 0
        for i in 0..<60 {
            let key = try l.c.buy(productID: "coins_100", clickMs: 1_700_000_001_000 + Int64(i))
            let r = l.results()
            #expect(r.count == 1)
            try l.c.confirm(key: key)
            // The update stream hands it over again before the group commit ran.
            l.store.redeliver(try #require(l.store.delivered.last, "the store delivered the purchase"))
            if i % 3 == 0 { l.c.flush() }
            finished = l.store.finishes.count
        }
        l.c.flush()
        finished = l.store.finishes.count
        l.close()
        #expect(finished >= 60)
        #expect(violations.withLock { $0 }.isEmpty, "finished before the confirm was durable: \(violations.withLock { $0 })")
    }

    @Test("C5: a purchase the store charged just before a crash arrives after the restart with the game's click key")
    func keyAcrossCrash() throws {
        let s = Scratch()
        var l = try Launch(s, dropResults: true)   // killed right after the charge
        let click: Int64 = 1_700_000_000_123
        #expect(try l.c.buy(productID: "coins_100", clickMs: click) == click)
        #expect(l.results().isEmpty, "the crash happened before the SDK heard of it")
        let charged = try l.transactions()
        #expect(charged.count == 1 && charged[0]["finished"]?.boolValue == false)
        l.close()

        l = try Launch(s)
        let r = l.results()
        #expect(r.count == 1)
        #expect(r.first?.key == click, "C5: the game's key, carried by the purchase token")
        #expect(r.first?["origin"]?.stringValue == "game")
        #expect(r.first?.txn == charged[0].txn)
        try l.c.confirm(key: click)
        l.close()
        l = try Launch(s)
        #expect(l.results().isEmpty)
        l.close()
    }

    @Test("C3 reinstall: every unconfirmed paid transaction comes back with its key; confirmed and finished ones never")
    func reinstall() throws {
        let s = Scratch()
        var l = try Launch(s)
        let a = try l.c.buy(productID: "coins_100", clickMs: 1_700_000_000_201)   // confirmed and finished
        let b = try l.c.buy(productID: "coins_100", clickMs: 1_700_000_000_202)   // confirmed, finish lost
        let c = try l.c.buy(productID: "remove_ads", clickMs: 1_700_000_000_203)  // never confirmed
        let results = l.results()
        #expect(results.count == 3)
        let txnOf = Dictionary(uniqueKeysWithValues: results.map { ($0.key!, $0.txn) })
        try l.c.confirm(key: a)
        l.c.flush()
        l.store.dropFinishes = true
        try l.c.confirm(key: b)
        l.c.flush()
        l.store.dropResults = true
        let d = try l.c.buy(productID: "coins_100", clickMs: 1_700_000_000_204)   // charged, then killed
        #expect(l.results().isEmpty)
        l.close()

        s.reinstall()
        l = try Launch(s)
        let back = l.results()
        let keys = Set(back.compactMap(\.key))
        #expect(!keys.contains(a), "confirmed and finished: never re-delivered")
        #expect(keys.isSuperset(of: [c, d]), "unconfirmed paid transactions all come back")
        #expect(back.first { $0.key == c }?.txn == txnOf[c])
        // Confirmed but killed before the finish: the store still lists it,
        // so it comes back once with its key; the game ignores a key it granted.
        #expect(keys == [b, c, d])
        #expect(back.first { $0.key == b }?.txn == txnOf[b])
        for k in keys { try l.c.confirm(key: k) }
        l.close()

        l = try Launch(s)
        #expect(l.results().isEmpty)
        #expect(try l.transactions().allSatisfy { $0["finished"]?.boolValue == true })
        l.close()
        s.reinstall()
        l = try Launch(s)
        #expect(l.results().isEmpty, "after a second reinstall nothing is re-delivered: all confirmed and finished")
        l.close()
    }

    @Test("damage: a damaged record in the middle is skipped, the rest recovered, the game told, a copy kept; the store brings the lost one back")
    func damageThroughCoordinator() throws {
        let s = Scratch()
        var l = try Launch(s)
        var keys: [Int64] = []
        for i in 0..<3 { keys.append(try l.c.buy(productID: "coins_100", clickMs: 1_700_000_000_301 + Int64(i))) }
        #expect(l.results().count == 3)
        l.close()

        // Flip one bit in the middle record's payload.
        var bytes = s.read(s.outboxPath)
        var starts: [Int] = []
        var pos = 0
        while pos + RecordFrame.headerSize <= bytes.count {
            let len = Int(bytes[pos + 4]) | Int(bytes[pos + 5]) << 8
            // Result records only (key marks and purchase intents sit between them).
            if case .put? = OutboxEntry.decode(Array(bytes[(pos + RecordFrame.headerSize)..<(pos + RecordFrame.headerSize + len)])) {
                starts.append(pos)
            }
            pos += RecordFrame.headerSize + len
        }
        #expect(starts.count == 3)
        bytes[starts[1] + RecordFrame.headerSize + 20] ^= 0x10
        s.write(s.outboxPath, bytes)

        l = try Launch(s)
        #expect(l.c.openReport.recovered == 2 && l.c.openReport.damagedSpans == 1)
        let messages = l.drain()
        let damaged = messages.filter { $0["type"]?.stringValue == "outbox_damaged" }
        #expect(damaged.count == 1)
        let copy = try #require(damaged.first?["copy"]?.stringValue)
        #expect(s.read(copy) == bytes, "the damaged file is kept aside as it was")
        #expect(mode(of: copy) == 0o600)
        let got = messages.filter { $0["type"]?.stringValue == "7" }.compactMap(\.key)
        #expect(got.sorted() == keys, "two from the outbox, the damaged one re-delivered by the store with its key")
        for k in keys { try l.c.confirm(key: k) }
        l.close()

        l = try Launch(s)
        #expect(l.c.openReport.damagedCopy == nil, "the repaired outbox opens clean")
        let after = l.drain().filter { $0["type"]?.stringValue == "7" }
        #expect(after.isEmpty)
        l.close()
    }

    @Test("outbox files are owner-only: dataDir 0700, log, lock, compacted log and damaged copy 0600")
    func ownerOnly() throws {
        let s = Scratch()
        var l = try Launch(s)
        _ = try l.c.buy(productID: "coins_100", clickMs: 1_700_000_000_401)
        l.close()
        #expect(mode(of: s.dataDir) == 0o700)
        #expect(mode(of: s.outboxPath) == 0o600)
        #expect(mode(of: s.dataDir + "/.lock") == 0o600)

        // A log someone widened is narrowed again at open.
        chmod(s.outboxPath, 0o644)
        l = try Launch(s)
        l.close()
        #expect(mode(of: s.outboxPath) == 0o600)

        // A compaction (forced by damage) writes the new log owner-only too.
        var bytes = s.read(s.outboxPath)
        bytes.append(contentsOf: [0x49, 0x41, 0x50, 0x72, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 1])  // not a torn tail: bad length
        s.write(s.outboxPath, bytes)
        chmod(s.outboxPath, 0o644)
        l = try Launch(s)
        let copy = try #require(l.c.openReport.damagedCopy)
        l.close()
        #expect(mode(of: s.outboxPath) == 0o600)
        #expect(mode(of: copy) == 0o600)
    }
}

/// A value behind a lock, for test bookkeeping across threads.
final class Locked<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: T
    init(_ v: T) { value = v }
    func withLock<R>(_ body: (inout T) -> R) -> R { lock.withLock { body(&value) } }
}
