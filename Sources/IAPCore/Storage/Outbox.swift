#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Every result the game has not confirmed yet, kept on disk.
///
/// Invariants (the delivery contract, docs/CONTRACT.md):
/// - C2: `put` returns only after the record is synced; callers emit the
///   message after that (checked by `isDurable`).
/// - C1: a record leaves `live` only through `confirm`; recovery never drops a
///   valid record; damage is copied aside and reported, never silent.
/// - C4: a confirmed transaction leaves a tombstone, kept until the store no
///   longer lists the transaction as unfinished (`forgetFinished`).
/// - C7: keys are unique among live records of different transactions.
///
/// Not thread-safe: the coordinator calls it under its lock.
public final class Outbox {
    public struct OpenReport: Sendable, Equatable {
        public var recovered = 0
        public var skippedBytes = 0
        public var damagedSpans = 0
        public var droppedTailBytes = 0
        public var undecodableRecords = 0
        /// Result records whose ID was not above every ID before them: a
        /// record appended again (replayed, copied). Ignored.
        public var staleRecords = 0
        /// Bytes past the `POSIXLogFile.maxFileBytes` read of a larger file.
        public var unreadBytes = 0
        /// Results read from format version 1 records (their rendered JSON):
        /// the open rewrote the file in version 2 (unless that write failed:
        /// then a later compaction does).
        public var upgradedRecords = 0
        /// Where the damaged file was copied before repair, if it was.
        public var damagedCopy: String? = nil
        /// What stood where the outbox belongs when it was not a file (a
        /// directory, a FIFO, a link): it was moved to `damagedCopy` whole.
        public var notAFile: String? = nil
        public var isDamaged: Bool { damagedCopy != nil }
    }

    public let directory: String
    public let path: String
    private let log: any DurableLog
    /// Where the log lives: its compaction threshold and, in one test, the
    /// fresh-file rule switched off (`ensureFresh`).
    private let storage: any LogStorage
    private let trustsLogAfterFailedSync: Bool

    // The tables below are private, owned by the outbox's one thread (the
    // SDK thread; the game's during open), and no method calls out while it
    // holds one (the index helpers are static and take only the index):
    // Swift's run-time exclusivity checks on them (several a record at open,
    // ~80 instructions each) can find nothing, and are off.
    @exclusivity(unchecked) private var live: IntTable<UInt64, OutboxRecord> = [:]
    @exclusivity(unchecked) private var byKey: IntTable<Int64, RecordIDs> = [:]
    /// Every live record's ID, ascending, with the IDs of records removed
    /// since (skipped when read, dropped once they outnumber the live).
    /// Record IDs only rise (`nextID`), so appending keeps it sorted: the
    /// live records are listed oldest first with no sort (an open of
    /// 100,000 sorted their IDs for it).
    @exclusivity(unchecked) private var liveOrder: [UInt64] = []
    @exclusivity(unchecked) private var byTransaction: [TransactionTag: RecordIDs] = [:]   // live ids
    /// flavor-prefixed txn -> true when it came from an earlier session.
    @exclusivity(unchecked) private var tombstones: [TransactionTag: Bool] = [:]
    @exclusivity(unchecked) private var nextID: UInt64 = 1
    @exclusivity(unchecked) private var liveBytes = 0
    @exclusivity(unchecked) private var staleRecords = 0

    /// Purchases started and not answered yet, by key (C5, C7), oldest first.
    public struct Intent: Sendable, Equatable {
        public let key: Int64
        public let productID: String
        public let atMs: Int64

        /// The order intents are listed and let go in: by time, then key.
        static func isOlder(_ a: Intent, _ b: Intent) -> Bool { (a.atMs, a.key) < (b.atMs, b.key) }
    }
    @exclusivity(unchecked) private var intents: IntTable<Int64, Intent> = [:]
    /// How many open intents are kept: a purchase the store never answers
    /// (StoreKit reports no declined Ask to Buy) must not grow the file
    /// forever. An intent dropped here only means a very late answer gets a
    /// fresh key (it is still delivered).
    public static let maxIntents = 256
    /// Keys at or above this were never handed out by the SDK (damage, a
    /// forged token): they never raise the mark, so the next key (mark + 1)
    /// can never overflow. Every key the SDK hands out is below it, so the
    /// mark remembers every one (C7).
    public static let keyLimit: Int64 = 1 << 62
    /// A click at or above this is refused (`IAP_E_INVALID_ARG`): no clock
    /// reaches it (2^61 ms is 73 million years), and the keys above the
    /// largest click, one per purchase, would take 2^61 purchases to reach
    /// `keyLimit`. Only an edited outbox brings the mark there.
    public static let clickLimit: Int64 = 1 << 61

    /// Clicks whose one result was a failure, oldest first (C9): at open, a
    /// charge for one of them that an earlier version stored under a key of
    /// its own keeps that key (`vouchedKey`); a charge now comes under the
    /// click's key (`keyForCharge`). Kept across compactions, the newest
    /// `maxFailedClicks`.
    private var failedClickSet: IntSet<Int64> = []
    private var failedClickOrder: [Int64] = []
    public static let maxFailedClicks = 1024

    private func noteFailedClick(_ k: Int64) {
        guard failedClickSet.insert(k).inserted else { return }
        failedClickOrder.append(k)
        if failedClickOrder.count > Outbox.maxFailedClicks {
            failedClickSet.remove(failedClickOrder.removeFirst())
        }
    }

    /// True when the click with this key got a failure as its result.
    public func clickFailed(_ k: Int64) -> Bool { failedClickSet.contains(k) }

    private func noteKey(_ k: Int64) {
        if k > keyMark && k < Outbox.keyLimit { keyMark = k }
    }

    /// Every key up to here has been handed out (C7): the highest key of an
    /// intent or a result this file has held; compaction keeps it.
    public private(set) var keyMark: Int64 = 0

    /// How many times the game's confirms took records: the resolution at
    /// open asks whether one came since it held its records.
    private(set) var confirmCalls = 0

    /// Confirmed record IDs not written yet: one frame for all of them at
    /// the next write (group commit), not one per confirm call.
    private var pendingConfirmIDs: [UInt64] = []
    private var pendingFinish: [String] = []
    /// Transactions confirmed whose confirm is not durable yet.
    private var pendingFinishSet: Set<String> = []

    // C2 bookkeeping: every write gets a sequence number; `syncedSeq` is the
    // last one known to be on stable storage.
    private var writeSeq: UInt64 = 0
    private var syncedSeq: UInt64 = 0
    /// False until a sync in this process covers the bytes read at open. A
    /// process killed before its sync, or whose sync failed, leaves its
    /// writes in the page cache: the next open reads them, and a confirm
    /// that was never durable finished its transaction (then a power cut
    /// turned the honest purchase into an "unvouched" report), a result
    /// that was never durable was shown (found by an attack on the disk).
    private var openedBytesDurable: Bool
    // Which write carried each live record: debug builds only (the C2
    // assertion); release builds skip two hash-table updates per purchase.
    #if DEBUG
    private var recordWriteSeq: IntTable<UInt64, UInt64> = [:]
    #endif

    public static let fileName = "outbox.log"

    /// Size above which a log holding mostly confirmed history is compacted,
    /// unless the storage says otherwise (`LogStorage.compactionThreshold`).
    /// The crash campaign lowers it (`CampaignHooks`); read once.
    public static let defaultCompactThreshold: Int = CampaignHooks.outboxCompactThreshold ?? 256 * 1024

    /// `beforeRepair` runs before a damaged or misplaced file is set aside or
    /// rewritten, and may refuse (the bridge's store failed: dataDir stays
    /// as found, for the next open to report).
    public static func open(directory: String, storage: any LogStorage = POSIXStorage(),
                            beforeRepair: () throws(IAPError) -> Void = {}) throws(IAPError) -> (Outbox, OpenReport) {
        let path = directory + "/" + fileName
        // Not a file where the outbox belongs (a tool, a backup restore, a
        // player): moved aside whole and a new outbox started, never refused
        // (issue 21: a refusal locked the game out of its purchases for
        // good). Nothing in it was readable as an outbox; transactions the
        // store still lists as unfinished come back from the store.
        var setAside: (kind: String, copy: String)? = nil
        if let kind = POSIX.nonRegularKind(path) {
            try beforeRepair()
            setAside = (kind, try POSIX.setAside(path, ext: ".log"))
        }
        let (file, scan, original) = try storage.openLog(directory: directory, name: fileName)
        let box = Outbox(directory: directory, path: path, log: file, storage: storage)
        var report = OpenReport()
        var decoded: [OutboxEntry] = []
        decoded.reserveCapacity(scan.spans.count)
        var seen = ResultFactsCodec.Seen()
        for span in scan.spans {
            if let e = OutboxEntry.decode(scan.source, span, seen: &seen) { decoded.append(e) } else { report.undecodableRecords += 1 }
            if OutboxRecord.isVersion1(scan.source, span) { report.upgradedRecords += 1 }
        }
        box.reserveCapacity(decoded.count)
        for e in decoded { box.replay(e) }
        report.recovered = box.live.count
        report.staleRecords = box.staleRecords
        report.skippedBytes = scan.skippedBytes
        report.damagedSpans = scan.damagedSpans
        if let setAside {
            report.notAFile = setAside.kind
            report.damagedCopy = setAside.copy
        }
        if scan.hasDamage || report.undecodableRecords > 0 {
            do throws(IAPError) { try beforeRepair() } catch {
                file.close_()
                throw error
            }
            // Keep the evidence, then write a clean file with what survived.
            let copy = POSIX.damagedPath(path, ext: ".log")
            if scan.unreadBytes > 0 {
                // Larger than the cap (damage, a tool, a bug): never refused,
                // which would lock the game out of its purchases for good
                // (issue 21). Its first `maxFileBytes` were read; the whole
                // file gets a second name (no copy of what may be gigabytes),
                // and the clean file written over the log's name holds what
                // was read. Transactions the store still lists as unfinished
                // that were recorded past that point come back from the store.
                if !POSIX.link(path, as: copy) {
                    // No hard links here: a copy of what was read.
                    try POSIX.replaceFile(copy, with: original)
                }
                try POSIX.syncDirectory(directory)
                report.unreadBytes = scan.unreadBytes
            } else {
                try POSIX.replaceFile(copy, with: original)
            }
            report.damagedCopy = copy
            report.droppedTailBytes = scan.tailBytes
            try box.compact()
        } else {
            // Written by an earlier version: rewritten once in version 2
            // (atomically: old or new file, never neither), so no later open
            // reads JSON. Best effort: on a full disk the file stays as it
            // is (version 1 records stay readable; appends are version 2)
            // and a later compaction rewrites it.
            var rewritten = false
            if report.upgradedRecords > 0 {
                do throws(IAPError) { try box.compact(); rewritten = true } catch {}
            }
            if scan.tailBytes > 0 {
                // An append that a crash interrupted: never acknowledged, so dropped.
                report.droppedTailBytes = scan.tailBytes
                if !rewritten { try file.truncate(to: scan.validEnd) }
            }
        }
        return (box, report)
    }

    private init(directory: String, path: String, log: any DurableLog, storage: any LogStorage) {
        self.directory = directory
        self.path = path
        self.log = log
        self.storage = storage
        self.trustsLogAfterFailedSync = storage.trustsLogAfterFailedSync
        self.openedBytesDurable = log.size == 0
    }

    public func close() { log.close_() }

    // MARK: Replay

    /// Sizes the indexes for about `n` records at once (open), instead of
    /// growing them by doubling and rehashing as a long log replays.
    private func reserveCapacity(_ n: Int) {
        live.reserveCapacity(n)
        liveOrder.reserveCapacity(n)
        byKey.reserveCapacity(n)
        byTransaction.reserveCapacity(n)
    }

    private func replay(_ e: OutboxEntry) {
        switch e {
        case .put(let r):
            // Record IDs only increase in a file this code wrote: an older
            // frame appended again (a replayed or copied record) is ignored.
            guard r.id >= nextID else {
                staleRecords += 1
                return
            }
            nextID = r.id &+ 1
            insertLive(r)
        case .confirm(let ids):
            for id in ids where live[id] != nil { _ = removeLive(id, previousSession: true) }
        case .tombstone(let txn, let flavor):
            tombstones[TransactionTag(txn, flavor)] = true
        case .forget(let txns):
            for t in txns {
                if let tag = TransactionTag(encoded: t) { tombstones[tag] = nil }
            }
        case .intent(let key, let productID, let atMs):
            intents[key] = Intent(key: key, productID: productID, atMs: atMs)
            noteKey(key)
        case .keyMark(let mark):
            keyMark = max(keyMark, mark)
        case .failedClicks(let keys):
            for k in keys { noteFailedClick(k) }
        }
    }

    private func insertLive(_ r: OutboxRecord) {
        // A stored result answers its key's purchase; game keys are positive.
        if intents.removeValue(forKey: r.key) == nil { noteKey(r.key) }
        live[r.id] = r
        assert(liveOrder.last.map { $0 < r.id } ?? true, "record IDs only rise")
        if liveOrder.count >= 2 * live.count + 1024 { liveOrder.removeAll { live[$0] == nil } }
        liveOrder.append(r.id)
        Outbox.add(r.id, to: &byKey, at: r.key)
        if let f = r.kind.flavor { Outbox.add(r.id, to: &byTransaction, at: TransactionTag(r.transactionID, f)) }
        liveBytes += r.facts.approximateSize + 40
    }

    /// Drops a live record and leaves its tombstone; returns the transaction to finish.
    private func removeLive(_ id: UInt64, previousSession: Bool) -> String? {
        guard let r = live.removeValue(forKey: id) else { return nil }
        liveBytes -= r.facts.approximateSize + 40
        Outbox.remove(id, from: &byKey, at: r.key)
        #if DEBUG
        recordWriteSeq[id] = nil
        #endif
        guard let f = r.kind.flavor else { return nil }
        let t = TransactionTag(r.transactionID, f)
        Outbox.remove(id, from: &byTransaction, at: t)
        // One lookup in the common case (no tombstone yet); an existing one keeps its session.
        if let had = tombstones.updateValue(previousSession, forKey: t), had != previousSession { tombstones[t] = had }
        return r.transactionID
    }

    /// Adds `id` to the index entry at `k` (one lookup: the common case is a new entry).
    private static func add<I: RecordIDIndex>(_ id: UInt64, to index: inout I, at k: I.Key) {
        if let had = index.updateValue(RecordIDs(id), forKey: k) {
            var ids = had
            ids.append(id)
            index[k] = ids
        }
    }

    /// Removes `id` from the index entry at `k` (dropping the entry when it empties).
    private static func remove<I: RecordIDIndex>(_ id: UInt64, from index: inout I, at k: I.Key) {
        guard let ids = index.removeValue(forKey: k) else { return }
        if let left = ids.removing(id) { index[k] = left }
    }

    // MARK: Queries

    /// Drops a live record the store does not vouch for (C11): written as a
    /// confirm, with no tombstone and nothing to finish.
    public func reject(_ id: UInt64) {
        guard let r = live[id] else { return }
        pendingConfirmIDs.append(id)
        forgetUnsynced(r.id)
    }

    /// Live records, oldest first: what every open re-emits.
    public var liveRecords: [OutboxRecord] {
        var out: [OutboxRecord] = []
        out.reserveCapacity(live.count)
        forEachLiveRecord { out.append($0) }
        return out
    }

    /// Each live record, oldest first, with no array of them made (an open
    /// of 100,000 retained and released each record once more for it).
    func forEachLiveRecord(_ body: (OutboxRecord) -> Void) {
        for id in liveOrder { if let r = live[id] { body(r) } }
    }
    public var liveCount: Int { live.count }
    public var tombstoneCount: Int { tombstones.count }
    /// IDs of the live records with this key, oldest first (no copies).
    public func recordIDs(withKey key: Int64) -> RecordIDs? { byKey[key] }
    public func records(withKey key: Int64) -> [OutboxRecord] { byKey[key]?.compactMap { live[$0] } ?? [] }
    /// True when a live record of another transaction than `txn` (an
    /// outbox transaction ID) has this key; nil `txn`: any live record.
    /// No copies: asked for every key derived or vouched for.
    public func hasLive(key: Int64, otherThan txn: String? = nil) -> Bool {
        guard let ids = byKey[key] else { return false }
        guard let txn else { return true }
        return ids.contains { live[$0].map { $0.transactionID != txn } ?? false }
    }
    /// True when a live failure record (a click's result with no
    /// transaction) has this key.
    public func hasLiveFailure(key: Int64) -> Bool {
        byKey[key]?.contains { live[$0]?.kind == .failure } ?? false
    }
    /// Keys under which more than one live record is stored (a second
    /// click on something owned, a record copied under another key): one
    /// pass over the key index in its own order, so that a resolution of
    /// many records at open asks no index about a key held by one record.
    func sharedKeys() -> IntSet<Int64> {
        var shared: IntSet<Int64> = []
        byKey.forEach { k, ids in if ids.count > 1 { shared.insert(k) } }
        return shared
    }
    /// IDs of the live records of a transaction, oldest first (no copies).
    public func liveRecordIDs(transaction txn: String, flavor: TombstoneFlavor) -> RecordIDs? {
        liveRecordIDs(TransactionTag(txn, flavor))
    }
    /// The same, for a tag the caller made once for several lookups.
    func liveRecordIDs(_ tag: TransactionTag) -> RecordIDs? { byTransaction[tag] }
    /// The key of live record `id`.
    public func key(ofLive id: UInt64) -> Int64? { live[id]?.key }
    /// Purchases started and not answered yet, oldest first.
    public var openIntents: [Intent] { intents.values.sorted(by: Intent.isOlder) }
    public func intent(key: Int64) -> Intent? { intents[key] }
    public func hasTombstone(transaction txn: String, flavor: TombstoneFlavor) -> Bool {
        hasTombstone(TransactionTag(txn, flavor))
    }
    func hasTombstone(_ tag: TransactionTag) -> Bool { tombstones[tag] != nil }
    /// C2: true once the record's bytes are on stable storage.
    public func isDurable(_ id: UInt64) -> Bool {
        #if DEBUG
        guard let seq = recordWriteSeq[id] else { return live[id] != nil }
        return seq <= syncedSeq
        #else
        return live[id] != nil
        #endif
    }

    // MARK: Writes

    /// Stores a result durably (write + sync) and returns it. Only after this
    /// returns may the game see the message (C2), rendered from `facts`.
    /// `failedClick`: the click a failure answers, remembered in the same
    /// write (C9).
    public func put(key: Int64, kind: RecordKind, transactionID: String, facts: ResultFacts,
                    failedClick: Int64? = nil) throws(IAPError) -> OutboxRecord {
        guard transactionID.utf8.count <= 0xFFFF else {
            throw IAPError(.invalidArgument, "transaction ID too long to store (\(transactionID.utf8.count) bytes)")
        }
        let r = OutboxRecord(id: nextID, key: key, kind: kind, transactionID: transactionID, facts: facts)
        let payload = OutboxEntry.put(r).encoded()
        guard payload.count <= RecordFrame.maxPayload else {
            throw IAPError(.invalidArgument, "result too large to store (\(payload.count) bytes)")
        }
        // C12: never on the strength of a file whose write or sync failed.
        try ensureFresh()
        // Confirms waiting for the group commit ride along with this write
        // (and stay pending if it fails).
        let carried = pendingConfirmIDs
        var frame = Outbox.confirmFrames(carried)
        if let failedClick { RecordFrame.encode(OutboxEntry.failedClicks([failedClick]).encoded(), into: &frame) }
        RecordFrame.encode(payload, into: &frame)
        pendingConfirmIDs.removeAll(keepingCapacity: true)
        do throws(IAPError) { try log.appendFramed(frame) } catch {
            pendingConfirmIDs = carried
            isSuspect = true
            throw error
        }
        nextID += 1
        writeSeq += 1
        let intent = intents[key]
        insertLive(r)
        #if DEBUG
        recordWriteSeq[r.id] = writeSeq
        #endif
        FaultPoint.afterOutboxWrite.reach()
        do throws(IAPError) { try syncLog() } catch {
            // Not durable, so not stored: the caller shows nothing and tries
            // again later, on a fresh file. The key still awaits its result.
            isSuspect = true
            forgetUnsynced(r.id)
            if let intent { intents[key] = intent }
            pendingConfirmIDs = carried + pendingConfirmIDs
            throw error
        }
        FaultPoint.afterOutboxSync.reach()
        if let failedClick { noteFailedClick(failedClick) }
        assert(isDurable(r.id), "C2: a result must be durable before it is visible")
        return r
    }

    /// Records that a purchase with this key is starting (C5: the key of a
    /// purchase that completes after a crash; C7: the key is taken). Appended
    /// without a sync of its own: the next sync (the result's, or a confirm's
    /// group commit) carries it, so a purchase costs one sync, not two. A kill
    /// cannot lose it (the kernel has the page). A power cut before that sync
    /// can; the store then re-delivers a charged transaction with the key in
    /// its token, and it is delivered under that key (or, if another live
    /// result holds that key, under one of its own naming it in
    /// `clickKey`): never lost, never granted twice.
    public func addIntent(key: Int64, productID: String, atMs: Int64) throws(IAPError) {
        var frame: [UInt8] = []
        RecordFrame.encode(OutboxEntry.intent(key: key, productID: productID, atMs: atMs).encoded(), into: &frame)
        // A failed append is cut back; if the cut failed too, part of a frame
        // stays and the log's size is wrong: the next write goes to a fresh
        // file (C12), as after any failed write.
        do throws(IAPError) { try log.appendFramed(frame) } catch {
            isSuspect = true
            throw error
        }
        writeSeq += 1
        intents[key] = Intent(key: key, productID: productID, atMs: atMs)
        noteKey(key)
        // The oldest by one pass, not a sort of all of them at every add.
        if intents.count > Outbox.maxIntents,
           let oldest = intents.values.min(by: Intent.isOlder) {
            intents[oldest.key] = nil
        }
    }

    /// Set when a write or sync of the log failed. The file may then hold
    /// pages the kernel dropped while a later sync of it reports success
    /// (PostgreSQL's "fsyncgate"), so nothing is acknowledged on the strength
    /// of it again: the next write first rewrites everything live to a fresh
    /// file, syncs it, renames it over the old one and syncs the directory
    /// (C12).
    public private(set) var isSuspect = false

    /// Rewrites the live state to a fresh file when the current one is suspect.
    private func ensureFresh() throws(IAPError) {
        // The power-loss explorer's check of itself: with the fix off, the
        // suspect file is trusted again, as 1.0 did.
        if trustsLogAfterFailedSync { isSuspect = false; return }
        guard isSuspect else { return }
        try rewriteLive()
        isSuspect = false
    }

    /// Drops a record whose sync failed: it was never acknowledged.
    private func forgetUnsynced(_ id: UInt64) {
        guard let r = live.removeValue(forKey: id) else { return }
        liveBytes -= r.facts.approximateSize + 40
        Outbox.remove(id, from: &byKey, at: r.key)
        if let f = r.kind.flavor { Outbox.remove(id, from: &byTransaction, at: TransactionTag(r.transactionID, f)) }
        #if DEBUG
        recordWriteSeq[id] = nil
        #endif
    }

    private func syncLog() throws(IAPError) {
        let seq = writeSeq
        try log.sync()
        syncedSeq = seq
        openedBytesDurable = true
    }

    /// C2, C3 at an open: makes the bytes read at open durable (one sync an
    /// open, none when a sync already did) before anything read there is
    /// shown again or finishes a transaction. On failure the next write
    /// goes to a fresh file (C12).
    public func makeOpenedBytesDurable() throws(IAPError) {
        guard !openedBytesDurable else { return }
        // After a failed sync the file's pages may be gone while a second
        // sync succeeds ("fsyncgate"): the state goes to a fresh file.
        try ensureFresh()
        guard !openedBytesDurable else { return }
        do throws(IAPError) { try syncLog() } catch {
            isSuspect = true
            throw error
        }
    }

    /// Marks records confirmed. The confirm is buffered for the group commit
    /// (`flushConfirms`); their transactions are finished only after it.
    public func confirm(_ ids: [UInt64]) {
        confirmCalls &+= 1
        pendingConfirmIDs.append(contentsOf: ids)
        for id in ids {
            if let txn = removeLive(id, previousSession: false), !txn.isEmpty, !hasLiveRecord(ofTransaction: txn) {
                pendingFinish.append(txn)
                pendingFinishSet.insert(txn)
            }
        }
    }

    /// Whether a live record of either flavour still names `txn` (a purchase
    /// and its refund's "revoked"; two "already owned" answers of one
    /// transaction). Its transaction is finished only once the last of them
    /// is confirmed: finished earlier, the store would stop listing it as
    /// unfinished, and the next open would drop the result the game has not
    /// handled as one the store does not vouch for (C3, C9).
    func hasLiveRecord(ofTransaction txn: String) -> Bool {
        byTransaction[TransactionTag(txn, .transaction)] != nil || byTransaction[TransactionTag(txn, .revocation)] != nil
    }

    public var hasPendingConfirms: Bool { !pendingConfirmIDs.isEmpty || !pendingFinish.isEmpty }

    /// True while a confirm of this transaction is not durable yet: it must
    /// not be finished before `flushConfirms` returns it (C3).
    public func isFinishPending(transaction txn: String) -> Bool { pendingFinishSet.contains(txn) }

    /// Confirm frames for `ids`, split to stay under the payload limit.
    private static func confirmFrames(_ ids: [UInt64]) -> [UInt8] {
        var out: [UInt8] = []
        let perFrame = (RecordFrame.maxPayload - 5) / 8
        var start = 0
        while start < ids.count {
            let end = min(start + perFrame, ids.count)
            RecordFrame.encode(OutboxEntry.confirm(Array(ids[start..<end])).encoded(), into: &out)
            start = end
        }
        return out
    }

    /// Writes and syncs buffered confirms (one sync for all of them) and
    /// returns the transactions that may now be finished (C3). After a failed
    /// write or sync, the live state goes to a fresh file first (C12); until
    /// that succeeds nothing is returned and the confirms stay pending.
    public func flushConfirms() throws(IAPError) -> [String] {
        // After a failed write or sync: a fresh file, which holds no
        // confirmed record (every confirm so far is in it by omission).
        try ensureFresh()
        if !pendingConfirmIDs.isEmpty {
            do throws(IAPError) { try log.appendFramed(Outbox.confirmFrames(pendingConfirmIDs)) } catch {
                isSuspect = true
                throw error
            }
            pendingConfirmIDs.removeAll(keepingCapacity: true)
            writeSeq += 1
            FaultPoint.afterConfirmWrite.reach()
        }
        if syncedSeq < writeSeq || (!openedBytesDurable && !pendingFinish.isEmpty) {
            do throws(IAPError) { try syncLog() } catch {
                isSuspect = true
                throw error
            }
        }
        let out = pendingFinish
        pendingFinish.removeAll()
        pendingFinishSet.removeAll(keepingCapacity: true)
        return out
    }

    /// Forgets tombstones (from earlier sessions) of transactions the store no
    /// longer lists as unfinished. Not synced: losing it only keeps a tombstone.
    public func forgetFinished(stillUnfinished: Set<String>) throws(IAPError) {
        try forgetFinished { stillUnfinished.contains($0) }
    }

    /// `forgetFinished(stillUnfinished:)` with the store's list as a test.
    public func forgetFinished(isUnfinished: (String) -> Bool) throws(IAPError) {
        var goneTags: [TransactionTag] = []
        for (t, earlier) in tombstones where earlier && t.flavor == .transaction && !isUnfinished(t.transactionID) {
            goneTags.append(t)
        }
        guard !goneTags.isEmpty, !isSuspect else { return }
        for t in goneTags { tombstones[t] = nil }
        let gone = goneTags.map(\.encoded)
        // One frame per chunk: a long history (tens of thousands of confirmed
        // transactions) would not fit one frame's payload limit.
        var frames: [UInt8] = []
        var chunk: [String] = []
        var chunkBytes = 5
        for t in gone {
            let size = 2 + min(t.utf8.count, 0xFFFF)
            if chunkBytes + size > RecordFrame.maxPayload {
                RecordFrame.encode(OutboxEntry.forget(chunk).encoded(), into: &frames)
                chunk.removeAll(keepingCapacity: true)
                chunkBytes = 5
            }
            chunk.append(t)
            chunkBytes += size
        }
        RecordFrame.encode(OutboxEntry.forget(chunk).encoded(), into: &frames)
        do throws(IAPError) { try log.appendFramed(frames) } catch {
            isSuspect = true
            throw error
        }
    }

    /// How many tombstones of finished transactions a session keeps.
    /// StoreKit can deliver a transaction once more after it was finished (the
    /// update stream lagging behind the purchase result), so a tombstone must
    /// outlive its finish (C4); keeping the newest ones bounds memory over
    /// a long session (about 90 bytes each) instead of growing per purchase.
    /// Older ones still in the file go at the next open (`forgetFinished`).
    public var finishedTombstonesKept = 2_048
    /// Tombstones of finished transactions, oldest first from `finishedWindowHead`.
    private var finishedWindow: [TransactionTag] = []
    private var finishedWindowHead = 0
    private var inFinishedWindow: Set<TransactionTag> = []

    /// The store reports these transactions finished. Their tombstones join
    /// the newest-finished window; the oldest beyond it are dropped.
    public func noteFinished(_ txns: [String]) {
        for txn in txns {
            let tag = TransactionTag(txn, .transaction)
            // Once per transaction: a second finish (re-delivered, finished
            // again) must not push it out of the window early.
            if tombstones[tag] != nil, inFinishedWindow.insert(tag).inserted { finishedWindow.append(tag) }
        }
        while finishedWindow.count - finishedWindowHead > finishedTombstonesKept {
            let tag = finishedWindow[finishedWindowHead]
            finishedWindowHead += 1
            inFinishedWindow.remove(tag)
            if !isFinishPending(transaction: tag.transactionID) && byTransaction[tag] == nil { tombstones[tag] = nil }
        }
        if finishedWindowHead > 4096 {
            finishedWindow.removeFirst(finishedWindowHead)
            finishedWindowHead = 0
        }
    }

    /// Rewrites the file when it holds mostly confirmed history.
    public func compactIfWorthwhile() throws(IAPError) {
        guard isCompactionWorthwhile else { return }
        try compact()
    }

    /// The storage's threshold is asked last, only of a log that is mostly
    /// history (a test may change it mid-session, so it is not cached).
    public var isCompactionWorthwhile: Bool {
        pendingConfirmIDs.isEmpty && log.size > 4 * (liveBytes + tombstones.count * 48)
            && log.size > storage.compactionThreshold
    }

    /// Atomically replaces the file with live records and tombstones only.
    public func compact() throws(IAPError) {
        precondition(pendingConfirmIDs.isEmpty, "flush confirms before compacting")
        try rewriteLive()
        isSuspect = false
    }

    /// Writes the live state (tombstones, the key mark, the failed clicks,
    /// open intents, live records) to a fresh file that replaces the log atomically. Confirms
    /// not written yet are part of it (their records are not live).
    private func rewriteLive() throws(IAPError) {
        var payloads: [[UInt8]] = []
        for t in tombstones.keys.sorted(by: <) {
            payloads.append(OutboxEntry.tombstone(txn: t.transactionID, flavor: t.flavor).encoded())
        }
        payloads.append(OutboxEntry.keyMark(keyMark).encoded())
        if !failedClickOrder.isEmpty { payloads.append(OutboxEntry.failedClicks(failedClickOrder).encoded()) }
        for i in openIntents { payloads.append(OutboxEntry.intent(key: i.key, productID: i.productID, atMs: i.atMs).encoded()) }
        for r in liveRecords { payloads.append(OutboxEntry.put(r).encoded()) }
        try log.rewrite(payloads)
        pendingConfirmIDs.removeAll(keepingCapacity: true)
        writeSeq += 1
        syncedSeq = writeSeq
        openedBytesDurable = true
    }

    public var fileSize: Int { log.size }
}

/// The outbox's indexes of record IDs (by key: an `IntTable`; by
/// transaction: a `Dictionary`), so that one `add` and one `remove` serve
/// both.
protocol RecordIDIndex {
    associatedtype Key
    subscript(key: Key) -> RecordIDs? { get set }
    mutating func updateValue(_ value: RecordIDs, forKey key: Key) -> RecordIDs?
    mutating func removeValue(forKey key: Key) -> RecordIDs?
}

extension Dictionary: RecordIDIndex where Value == RecordIDs {}
extension IntTable: RecordIDIndex where Value == RecordIDs {}
