/// A transaction ID with its tombstone flavor: the key of the outbox's
/// per-transaction indexes (tombstones, live records by transaction).
///
/// Kept small because the outbox holds one per confirmed transaction and
/// looks one up on every confirm: StoreKit's IDs are decimal numbers, so an
/// ID that round-trips through `UInt64` is stored as that number (no heap
/// string, integer hashing and comparison); any other ID is kept as text.
struct TransactionTag: Hashable {
    /// The ID as a number; 0 when it is kept as `text`.
    private let number: UInt64
    private let text: String
    let flavor: TombstoneFlavor

    init(_ txn: String, _ flavor: TombstoneFlavor) {
        self.flavor = flavor
        if let n = TransactionTag.canonicalNumber(txn) {
            number = n
            text = ""
        } else {
            number = 0
            text = txn
        }
    }

    var transactionID: String { number != 0 ? UTF8Text.decimal(number) : text }

    /// The form forget records store: "t:" or "r:" and the ID.
    var encoded: String { (flavor == .transaction ? "t:" : "r:") + transactionID }

    init?(encoded: String) {
        if encoded.hasPrefix("t:") {
            self.init(String(encoded.dropFirst(2)), .transaction)
        } else if encoded.hasPrefix("r:") {
            self.init(String(encoded.dropFirst(2)), .revocation)
        } else {
            return nil
        }
    }

    /// The value of a decimal number written canonically (no sign, no
    /// leading zero, not zero), so that `String(value)` gives `s` back.
    private static func canonicalNumber(_ s: String) -> UInt64? {
        // The bytes in place (every native string has them; a bridged one is
        // copied): iterating the UTF-8 view byte by byte cost about 2,800
        // instructions per purchase over the few IDs a purchase tags.
        if let n = s.utf8.withContiguousStorageIfAvailable({ canonicalNumber(bytes: $0) }) { return n }
        return Array(s.utf8).withUnsafeBufferPointer { canonicalNumber(bytes: $0) }
    }

    /// 1 to 19 digits, the first not 0: below 10^19, so below UInt64.max,
    /// and the arithmetic needs no overflow checks (a 16-digit ID took 233
    /// instructions with them, and an open tags each ID two to four times).
    private static func canonicalNumber(bytes: UnsafeBufferPointer<UInt8>) -> UInt64? {
        guard bytes.count > 0, bytes.count <= 19, bytes[0] != 0x30 else { return nil }
        var value: UInt64 = 0
        for b in bytes {
            let digit = b &- 0x30
            guard digit < 10 else { return nil }
            value = value &* 10 &+ UInt64(digit)
        }
        return value
    }

    /// What `Dictionary` and `Set` ask for: a numeric ID (every StoreKit
    /// and simulator ID) is mixed with its flavor and the table's seed
    /// (`IntKey.mix`, about ten instructions, against SipHash's hundred);
    /// a text ID is hashed as text. Equal tags hash alike: the number and
    /// the text are each canonical.
    @inline(__always)
    func _rawHashValue(seed: Int) -> Int {
        guard number != 0 else {
            var h = Hasher()
            h.combine(seed)
            hash(into: &h)
            return h.finalize()
        }
        let bits = number &* 4 &+ UInt64(flavor.rawValue)
        return Int(truncatingIfNeeded: IntKey<UInt64>.mix(bits ^ UInt64(truncatingIfNeeded: seed) ^ (number >> 62)))
    }

    /// A fixed order (compaction writes tombstones in it).
    static func < (a: TransactionTag, b: TransactionTag) -> Bool {
        if a.flavor != b.flavor { return a.flavor.rawValue < b.flavor.rawValue }
        if a.number != b.number { return a.number < b.number }
        return a.text < b.text
    }
}

/// The outbox's transaction IDs: the store's, or in a namespace of their own.
extension Outbox {
    /// The outbox's transaction ID for an unverified result: its own
    /// namespace, so that its tombstone neither hides the same transaction
    /// once it verifies (delivered then as a success, once) nor lets it be
    /// finished (C6: an unverified transaction is left unfinished).
    static func unverifiedTag(_ id: String) -> String { "u:" + id }

    static func isUnverifiedTag(_ id: String) -> Bool { id.hasPrefix("u:") }

    /// The store's transaction ID of an outbox record.
    static func storeTransactionID(_ recordTxn: String) -> String { splitTag(recordTxn).storeID }

    /// The store's transaction ID of an outbox record, and whether the
    /// record's ID is in the unverified namespace (one prefix test).
    static func splitTag(_ recordTxn: String) -> (storeID: String, unverified: Bool) {
        isUnverifiedTag(recordTxn) ? (String(recordTxn.dropFirst(2)), true) : (recordTxn, false)
    }
}
