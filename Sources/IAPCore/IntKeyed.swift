/// Tables and sets keyed by an integer (a record ID, a purchase key) that
/// hash the key with one multiply-xorshift mix (`IntKey.mix`) instead of
/// the standard library's SipHash.
///
/// Why: the outbox indexes every record by ID and by key, the key
/// allocator and the delivery ledger track keys in sets, and an open
/// replays thousands of records through them. SipHash costs about 95
/// instructions a key here, some 1,200 a record at open (callgrind,
/// `scripts/bench-callgrind.sh`); the mix costs about ten. SipHash's
/// defence against chosen keys buys nothing here: the keys come from the
/// SDK itself, the game's own clicks and the game's own outbox file, and
/// each table is still seeded per instance (the seed is mixed in).
///
/// The wrappers hold a plain `Dictionary` / `Set` of `IntKey`, so their
/// behaviour (growth, iteration, value semantics) is the standard library's.
struct IntKey<K: FixedWidthInteger & Sendable>: Hashable, Sendable {
    let value: K

    @inline(__always) init(_ value: K) { self.value = value }

    static func == (a: IntKey, b: IntKey) -> Bool { a.value == b.value }

    /// For any other use of `Hashable` (the tables use `_rawHashValue`).
    func hash(into hasher: inout Hasher) { hasher.combine(value) }

    /// What `Dictionary` and `Set` ask for: the key and the table's seed
    /// mixed (murmur3's 64-bit finalizer: every input bit moves every output
    /// bit, so the low bits the table indexes by are as good as the high).
    @inline(__always)
    func _rawHashValue(seed: Int) -> Int {
        Int(truncatingIfNeeded: IntKey<UInt64>.mix(UInt64(truncatingIfNeeded: value) ^ UInt64(truncatingIfNeeded: seed)))
    }

    @inline(__always)
    static func mix(_ x: UInt64) -> UInt64 {
        var h = x
        h ^= h >> 33
        h &*= 0xff51_afd7_ed55_8ccd
        h ^= h >> 33
        h &*= 0xc4ce_b9fe_1a85_ec53
        h ^= h >> 33
        return h
    }
}

/// A `Dictionary` keyed by an integer, hashed by `IntKey`.
struct IntTable<K: FixedWidthInteger & Sendable, Value>: ExpressibleByDictionaryLiteral {
    private var table: [IntKey<K>: Value] = [:]

    init() {}

    init(dictionaryLiteral elements: (K, Value)...) {
        for (k, v) in elements { table[IntKey(k)] = v }
    }

    @inline(__always)
    subscript(key: K) -> Value? {
        get { table[IntKey(key)] }
        set { table[IntKey(key)] = newValue }
    }

    @discardableResult @inline(__always)
    mutating func removeValue(forKey key: K) -> Value? { table.removeValue(forKey: IntKey(key)) }

    @discardableResult @inline(__always)
    mutating func updateValue(_ value: Value, forKey key: K) -> Value? { table.updateValue(value, forKey: IntKey(key)) }

    var values: Dictionary<IntKey<K>, Value>.Values { table.values }
    /// Every entry, in the table's order (one pass over its storage).
    func forEach(_ body: (K, Value) -> Void) { for (k, v) in table { body(k.value, v) } }
    /// The keys, in no particular order.
    var keys: [K] { table.keys.map { $0.value } }
    var count: Int { table.count }
    var isEmpty: Bool { table.isEmpty }
    mutating func reserveCapacity(_ n: Int) { table.reserveCapacity(n) }
    mutating func removeAll() { table.removeAll() }
}

extension IntTable: Sendable where Value: Sendable {}

/// A `Set` of integers, hashed by `IntKey`.
struct IntSet<K: FixedWidthInteger & Sendable>: ExpressibleByArrayLiteral, Sendable {
    private var members: Set<IntKey<K>> = []

    init() {}

    init<S: Sequence>(_ elements: S) where S.Element == K {
        for k in elements { members.insert(IntKey(k)) }
    }

    init(arrayLiteral elements: K...) { self.init(elements) }

    @discardableResult @inline(__always)
    mutating func insert(_ k: K) -> (inserted: Bool, memberAfterInsert: K) {
        let r = members.insert(IntKey(k))
        return (r.inserted, r.memberAfterInsert.value)
    }

    @discardableResult @inline(__always)
    mutating func remove(_ k: K) -> K? { members.remove(IntKey(k))?.value }

    @inline(__always)
    func contains(_ k: K) -> Bool { members.contains(IntKey(k)) }

    var count: Int { members.count }
    var isEmpty: Bool { members.isEmpty }
    mutating func removeAll() { members.removeAll() }
    mutating func reserveCapacity(_ n: Int) { members.reserveCapacity(n) }
}
