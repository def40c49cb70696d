@testable import IAPCore
import IAPTestSupport
import Testing

/// `IntTable` and `IntSet` (integer keys hashed by one mix, not SipHash)
/// hold exactly what a `Dictionary` and a `Set` given the same operations
/// hold, and `TransactionTag`'s own hash agrees with its equality.
@Suite struct IntKeyedTests {
    /// Keys as the SDK makes them (consecutive record IDs, millisecond
    /// clicks), strided ones that defeat a hash using low bits alone, and
    /// the extremes.
    static func key(_ r: inout SplitMix64) -> Int64 {
        switch r.next() % 5 {
        case 0: return Int64(r.next() % 64)
        case 1: return 1_700_000_000_000 + Int64(r.next() % 4_096)
        case 2: return Int64(r.next() % 64) << 20
        case 3: return [Int64.min, Int64.max, -1, 0, 1 << 62][Int(r.next() % 5)]
        default: return Int64(bitPattern: r.next())
        }
    }

    @Test func tableMatchesDictionary() {
        var r = SplitMix64(seed: 0x1A7)
        var table: IntTable<Int64, Int> = [:]
        var model: [Int64: Int] = [:]
        for step in 0..<200_000 {
            let k = Self.key(&r)
            switch r.next() % 4 {
            case 0: table[k] = step; model[k] = step
            case 1: #expect(table.removeValue(forKey: k) == model.removeValue(forKey: k))
            case 2: #expect(table.updateValue(step, forKey: k) == model.updateValue(step, forKey: k))
            default: #expect(table[k] == model[k])
            }
            if step % 50_000 == 0 {
                #expect(table.count == model.count)
                #expect(table.values.sorted() == model.values.sorted())
            }
        }
        #expect(table.count == model.count && table.count > 100, "the run left \(model.count) keys")
        table.removeAll()
        #expect(table.isEmpty)
    }

    @Test func setMatchesSet() {
        var r = SplitMix64(seed: 0x5E7)
        var set: IntSet<UInt64> = []
        var model: Set<UInt64> = []
        for _ in 0..<200_000 {
            let k = UInt64(bitPattern: Self.key(&r))
            switch r.next() % 3 {
            case 0: #expect(set.insert(k).inserted == model.insert(k).inserted)
            case 1: #expect(set.remove(k) == model.remove(k))
            default: #expect(set.contains(k) == model.contains(k))
            }
        }
        #expect(set.count == model.count && set.count > 100, "the run left \(model.count) keys")
        #expect(IntSet([3, 3, 4] as [UInt64]).count == 2)
    }

    /// Equal tags hash alike under every seed; a numeric ID and its flavors,
    /// and text IDs, all land in one table without being confused.
    @Test func transactionTagHash() {
        var r = SplitMix64(seed: 0x7A6)
        var table: [TransactionTag: Int] = [:]
        var model: [String: Int] = [:]
        for i in 0..<20_000 {
            let id: String
            switch r.next() % 3 {
            case 0: id = String(2_000_000_000_000_000 + r.next() % 5_000)
            case 1: id = "sim-" + String(r.next() % 500)
            default: id = String(r.next() % 5_000)
            }
            let flavor: TombstoneFlavor = r.next() % 2 == 0 ? .transaction : .revocation
            let a = TransactionTag(id, flavor), b = TransactionTag(id, flavor)
            let seed = Int(truncatingIfNeeded: r.next())
            #expect(a == b && a._rawHashValue(seed: seed) == b._rawHashValue(seed: seed))
            table[a] = i
            model["\(flavor.rawValue):\(id)"] = i
        }
        #expect(table.count == model.count)
        for (k, v) in model {
            let flavor: TombstoneFlavor = k.hasPrefix("1:") ? .transaction : .revocation
            #expect(table[TransactionTag(String(k.dropFirst(2)), flavor)] == v)
        }
    }

    /// IDs that look alike stay apart as tags, as they were as strings: a
    /// non-canonical number, zero, a 20-digit ID, precomposed and decomposed
    /// text (equal as Swift strings, so equal as tags), the unverified prefix.
    @Test func transactionTagLookAlikes() {
        let ids = ["123", "0123", "0", "00", "18446744073709551615", "99999999999999999999", "9999999999999999999",
                   "u:123", "\u{E9}", "e\u{301}", "", " 123", "123 "]
        var byTag: [TransactionTag: String] = [:]
        var byString: [String: String] = [:]
        for id in ids {
            byTag[TransactionTag(id, .transaction)] = id
            byString[id] = id
        }
        #expect(byTag.count == byString.count, "tags \(byTag.count), strings \(byString.count)")
        for id in ids { #expect(byTag[TransactionTag(id, .transaction)] == byString[id]) }
        #expect(TransactionTag("123", .transaction) != TransactionTag("0123", .transaction))
        #expect(TransactionTag("123", .transaction) != TransactionTag("123", .revocation))
        #expect(Outbox.splitTag("u:123") == ("123", true) && Outbox.splitTag("123") == ("123", false))
    }
}
