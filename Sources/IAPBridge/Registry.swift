import CIAPSupport
import IAPCore

/// The table behind `iap_bridge *`. A handle is not a pointer to an object:
/// it is (marker | check << 46 | generation << 12 | slot) on 64-bit
/// platforms, so a pointer used after `iap_close`, or one that never came
/// from `iap_open`, is recognised and refused instead of dereferenced.
/// Generations are never reused. The marker (bit 62: never a user-space
/// address) and the 16-bit check (a hash of generation and slot) tell a
/// handle this process issued and closed (`IAP_E_CLOSED`) from garbage such
/// as `(iap_bridge *)5` or a stray pointer (`IAP_E_INVALID_HANDLE`).
enum Registry {
    /// CIAPSupport sizes the table: one constant for both languages.
    @inline(__always) static var slots: Int { Int(IAPC_REGISTRY_SLOTS) }

    // Computed, so they fold to constants in iap_poll's fast path.
    @inline(__always) static var slotBits: Int { 12 }
    /// 16 check bits on 64-bit platforms (1 in 65536 random words passes), 6 on 32-bit.
    @inline(__always) static var checkBits: Int { UInt.bitWidth == 64 ? 16 : 6 }
    @inline(__always) static var markerBit: Int { UInt.bitWidth - 2 }
    @inline(__always) static var genBits: Int { markerBit - checkBits - slotBits }
    static var maxGen: Int64 { Int64(1) << Int64(genBits) - 1 }

    static func check(gen: Int64, slot: Int) -> UInt {
        let x = (UInt64(bitPattern: gen) << 12 | UInt64(slot)) &* 0x9E37_79B9_7F4A_7C15
        return UInt(truncatingIfNeeded: x >> UInt64(64 - checkBits))
    }

    static func encode(slot: Int, gen: Int64) -> UInt {
        UInt(1) << UInt(markerBit) | check(gen: gen, slot: slot) << UInt(genBits + slotBits)
            | UInt(gen) << UInt(slotBits) | UInt(slot)
    }

    /// Two Int64 per slot, read lock-free by `iap_poll`'s empty-queue path:
    /// [2*slot] the live handle's value (0 when free, -1 reserved), [2*slot+1]
    /// queued messages. C static storage (CIAPSupport), not a Swift global:
    /// a global's lazy initialisation check would cost the per-frame poll a
    /// `swift_once` call.
    @inline(__always) static var table: UnsafeMutablePointer<Int64> { iapc_registry_table() }

    private struct State {
        /// By slot: an array, not a dictionary, so that the lookup every
        /// game-facing call makes is an index, not a SipHash (about 130
        /// instructions a call).
        var bridges = [(gen: Int64, coordinator: Coordinator)?](repeating: nil, count: Registry.slots)
        var nextGen: Int64 = 1
        var slots = SlotAllocator(capacity: Registry.slots)
        /// By slot: the bridge being closed there (unregistered, not yet
        /// released), so that a second `iap_close` of it returns once the
        /// first has finished, not while the dataDir is still locked.
        var closing = [(gen: Int64, done: OneShot, coordinator: Coordinator)?](repeating: nil, count: Registry.slots)
    }
    private static let state = Locked(State())

    enum Lookup {
        case open(Coordinator)
        /// `unregister` only: another `iap_close` is closing it; `done`
        /// fires when that close has finished.
        case closing(done: OneShot, Coordinator)
        case closed
        case invalid
    }

    /// The slot and generation of a value `encode` made; nil for anything
    /// else (no marker, wrong check, a bit above the marker).
    static func decode(_ h: OpaquePointer?) -> (slot: Int, gen: Int64)? {
        let v = UInt(bitPattern: h)
        guard v >> UInt(markerBit) == 1 else { return nil }
        let slot = Int(v & UInt(slots - 1))
        let gen = Int64(v >> UInt(slotBits) & (UInt(1) << UInt(genBits) - 1))
        guard gen > 0, v == encode(slot: slot, gen: gen) else { return nil }
        return (slot, gen)
    }

    static func lookup(_ h: OpaquePointer?) -> Lookup {
        guard let (slot, gen) = decode(h) else { return .invalid }
        return state.withLock { s in
            if let entry = s.bridges[slot], entry.gen == gen { return .open(entry.coordinator) }
            return gen < s.nextGen ? .closed : .invalid
        }
    }

    /// Reserves a slot; `make` builds the coordinator with the slot's counter.
    static func register(_ make: (UnsafeMutablePointer<Int64>) throws(IAPError) -> Coordinator) throws(IAPError) -> OpaquePointer {
        let (slot, gen) = try state.withLock { s throws(IAPError) -> (Int, Int64) in
            guard s.nextGen <= maxGen else { throw IAPError(.busy, "every bridge generation was used (\(maxGen) opens)") }
            guard let slot = s.slots.reserve() else {
                throw IAPError(.busy, "too many open bridges (\(slots), counting \(s.slots.reserved) being opened or closed): close one first")
            }
            iapc_atomic_store_i64(table + 2 * slot, -1)  // reserved
            let gen = s.nextGen
            s.nextGen += 1
            return (slot, gen)
        }
        let coordinator: Coordinator
        do throws(IAPError) {
            coordinator = try make(table + 2 * slot + 1)
        } catch {
            state.withLock { s in
                iapc_atomic_store_i64(table + 2 * slot, 0)
                s.slots.release(slot)
            }
            throw error
        }
        state.withLock { s in
            s.slots.commit(slot)
            s.bridges[slot] = (gen, coordinator)
            iapc_atomic_store_i64(table + 2 * slot, Int64(truncatingIfNeeded: encode(slot: slot, gen: gen)))
        }
        return OpaquePointer(bitPattern: encode(slot: slot, gen: gen))!
    }

    /// Removes the handle; returns the coordinator to close, or why not.
    static func unregister(_ h: OpaquePointer?) -> Lookup {
        guard let (slot, gen) = decode(h) else { return .invalid }
        return state.withLock { s in
            guard let entry = s.bridges[slot], entry.gen == gen else {
                if let c = s.closing[slot], c.gen == gen { return .closing(done: c.done, c.coordinator) }
                return gen < s.nextGen ? .closed : .invalid
            }
            s.bridges[slot] = nil
            s.closing[slot] = (gen, OneShot(), entry.coordinator)
            // Slot stays reserved (-1) until the coordinator is closed and the
            // counter is no longer written; `release` frees it.
            iapc_atomic_store_i64(table + 2 * slot, -1)
            s.slots.retire(slot)
            return .open(entry.coordinator)
        }
    }

    static func release(_ h: OpaquePointer?) {
        guard let (slot, gen) = decode(h) else { return }
        let done: OneShot? = state.withLock { s in
            iapc_atomic_store_i64(table + 2 * slot, 0)
            s.slots.release(slot)
            guard let c = s.closing[slot], c.gen == gen else { return nil }
            s.closing[slot] = nil
            return c.done
        }
        done?.signal()
    }
}
