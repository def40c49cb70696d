/// The binary payloads inside outbox frames. Decoding never traps: a
/// payload that does not parse is reported as damage.
///
/// Format version 2 stores a result as its typed facts (tag 8,
/// `ResultFactsCodec`); the message is rendered from them when it is
/// emitted. Version 1 stored the rendered JSON (tag 1): such a record is
/// still read, through `OutboxV1Migration`, and `Outbox.open` rewrites the
/// file in version 2. The other tags are the same in both versions.
public enum OutboxEntry: Sendable, Equatable {
    /// A result the game must confirm, as its facts.
    case put(OutboxRecord)
    /// The game confirmed these record IDs.
    case confirm([UInt64])
    /// A confirmed transaction, written by compaction (C4).
    case tombstone(txn: String, flavor: TombstoneFlavor)
    /// The store no longer lists these transactions as unfinished.
    case forget([String])
    /// A purchase the game started with this key and whose result has not
    /// been stored yet (C5: its key survives a crash; C7: the key is taken).
    /// A `put` with the same key closes it.
    case intent(key: Int64, productID: String, atMs: Int64)
    /// Every key up to this mark may have been handed out on this dataDir
    /// (C7): the next key is above it, whatever the clock says.
    case keyMark(Int64)
    /// Clicks whose one result was a failure (C9): a charge for one of them
    /// that an earlier version stored under a key of its own keeps it at
    /// open (`Coordinator.vouchedKey`). Written with each failure, and by a
    /// compaction for every click remembered.
    case failedClicks([Int64])

    /// A result as format version 1 wrote it: its rendered JSON. Read only.
    static let tagPutV1: UInt8 = 0x01
    static let tagConfirm: UInt8 = 0x02
    static let tagTombstone: UInt8 = 0x03
    static let tagForget: UInt8 = 0x04
    static let tagIntent: UInt8 = 0x05
    static let tagKeyMark: UInt8 = 0x06
    static let tagFailedClicks: UInt8 = 0x07
    /// A result as its typed facts (format version 2).
    static let tagPut: UInt8 = 0x08

    public func encoded() -> [UInt8] {
        var w = ByteWriter()
        switch self {
        case .put(let r):
            w.u8(OutboxEntry.tagPut)
            w.u64(r.id)
            w.u64(UInt64(bitPattern: r.key))
            w.u8(r.kind.rawValue)
            w.str16(r.transactionID)
            ResultFactsCodec.encode(r.facts, into: &w)
        case .confirm(let ids):
            w.u8(OutboxEntry.tagConfirm)
            w.u32(UInt32(ids.count))
            for id in ids { w.u64(id) }
        case .tombstone(let txn, let flavor):
            w.u8(OutboxEntry.tagTombstone)
            w.u8(flavor.rawValue)
            w.str16(txn)
        case .forget(let txns):
            w.u8(OutboxEntry.tagForget)
            w.u32(UInt32(txns.count))
            for t in txns { w.str16(t) }
        case .intent(let key, let productID, let atMs):
            w.u8(OutboxEntry.tagIntent)
            w.u64(UInt64(bitPattern: key))
            w.u64(UInt64(bitPattern: atMs))
            w.str16(productID)
        case .keyMark(let mark):
            w.u8(OutboxEntry.tagKeyMark)
            w.u64(UInt64(bitPattern: mark))
        case .failedClicks(let keys):
            w.u8(OutboxEntry.tagFailedClicks)
            w.u32(UInt32(keys.count))
            for k in keys { w.u64(UInt64(bitPattern: k)) }
        }
        return w.out
    }

    public static func decode(_ p: [UInt8]) -> OutboxEntry? {
        var seen = ResultFactsCodec.Seen()
        return decode(p, 0..<p.count, seen: &seen)
    }

    /// The entry whose payload is `bytes[span]` (a frame inside the scanned
    /// file), read in place; `seen`: what the log's earlier records held.
    static func decode(_ bytes: [UInt8], _ span: Range<Int>, seen: inout ResultFactsCodec.Seen) -> OutboxEntry? {
        var r = ByteReader(bytes, span)
        guard let tag = r.u8() else { return nil }
        let entry: OutboxEntry
        switch tag {
        case tagPut, tagPutV1:
            // Record IDs count up from 1: one at 2^62 or more is damage that kept
            // a valid checksum, and would overflow the next ID (found by fuzzing).
            guard let id = r.u64(), id > 0, id < 1 << 62, let key = r.u64(), let kindRaw = r.u8(),
                  let kind = RecordKind(rawValue: kindRaw), let txn = r.str16() else { return nil }
            let facts: ResultFacts
            if tag == tagPut {
                guard let f = ResultFactsCodec.decode(&r, seen: &seen) else { return nil }
                facts = f
            } else {
                guard let msg = r.bytes32() else { return nil }
                facts = OutboxV1Migration.facts(kind: kind, key: Int64(bitPattern: key), transactionID: txn, message: msg)
            }
            entry = .put(OutboxRecord(id: id, key: Int64(bitPattern: key), kind: kind, transactionID: txn, facts: facts))
        case tagConfirm:
            guard let n = r.u32(), Int(n) <= r.remaining / 8 else { return nil }
            var ids: [UInt64] = []
            for _ in 0..<n { guard let id = r.u64() else { return nil }; ids.append(id) }
            entry = .confirm(ids)
        case tagTombstone:
            guard let f = r.u8(), let flavor = TombstoneFlavor(rawValue: f), let txn = r.str16() else { return nil }
            entry = .tombstone(txn: txn, flavor: flavor)
        case tagForget:
            guard let n = r.u32(), Int(n) <= r.remaining / 2 else { return nil }
            var txns: [String] = []
            for _ in 0..<n { guard let t = r.str16() else { return nil }; txns.append(t) }
            entry = .forget(txns)
        case tagIntent:
            guard let key = r.u64(), let at = r.u64(), let product = r.str16() else { return nil }
            entry = .intent(key: Int64(bitPattern: key), productID: product, atMs: Int64(bitPattern: at))
        case tagKeyMark:
            // A mark near Int64.max is damage that kept its checksum: the next
            // key would overflow. Refused like an impossible record ID.
            guard let mark = r.u64(), mark < 1 << 62 else { return nil }
            entry = .keyMark(Int64(bitPattern: mark))
        case tagFailedClicks:
            guard let n = r.u32(), Int(n) <= r.remaining / 8 else { return nil }
            var keys: [Int64] = []
            for _ in 0..<n { guard let k = r.u64() else { return nil }; keys.append(Int64(bitPattern: k)) }
            entry = .failedClicks(keys)
        default:
            return nil
        }
        return r.remaining == 0 ? entry : nil
    }
}

/// What kind of result a record holds; decides its tombstone.
public enum RecordKind: UInt8, Sendable {
    case purchase = 1      // a verified transaction ("7", result "0")
    case failure = 2       // no transaction ("7", result other than "0" and "6")
    case revocation = 3    // "revoked"
    case unverified = 4    // a transaction that failed verification ("7", result "6")

    var flavor: TombstoneFlavor? {
        switch self {
        case .purchase, .unverified: return .transaction
        case .revocation: return .revocation
        case .failure: return nil
        }
    }
}

public enum TombstoneFlavor: UInt8, Sendable {
    case transaction = 1
    case revocation = 2
}

public struct OutboxRecord: Sendable, Equatable {
    public let id: UInt64
    public let key: Int64
    public let kind: RecordKind
    /// Empty for failures (no transaction exists).
    public let transactionID: String
    /// What the result says. A failure's or revocation's message is
    /// rendered from it at every open; a purchase's is rebuilt from the
    /// store's facts when the store vouches for it at open (C11).
    public let facts: ResultFacts

    public init(id: UInt64, key: Int64, kind: RecordKind, transactionID: String, facts: ResultFacts) {
        self.id = id
        self.key = key
        self.kind = kind
        self.transactionID = transactionID
        self.facts = facts
    }

    /// True when a format 1 payload (rendered JSON) holds this record:
    /// read through `OutboxV1Migration`.
    static func isVersion1(_ bytes: [UInt8], _ span: Range<Int>) -> Bool {
        !span.isEmpty && bytes[span.lowerBound] == OutboxEntry.tagPutV1
    }
}
