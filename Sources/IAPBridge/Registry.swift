import CIAPSupport
import IAPCore

/// The table behind `iap_bridge *`. A handle is not a pointer to an object:
/// it is (generation << 12 | slot), so a pointer used after `iap_close`, or
/// one that never came from `iap_open`, is recognised and refused instead of
/// dereferenced. Generations are never reused.
enum Registry {
    static let slots = 4096

    /// Two Int64 per slot, read lock-free by `iap_poll`'s empty-queue path:
    /// [2*slot] the live generation (0 when free), [2*slot+1] queued messages.
    nonisolated(unsafe) static let table: UnsafeMutablePointer<Int64> = {
        let p = UnsafeMutablePointer<Int64>.allocate(capacity: 2 * slots)
        p.initialize(repeating: 0, count: 2 * slots)
        return p
    }()

    private struct State {
        var bridges: [Int: (gen: Int64, coordinator: Coordinator)] = [:]
        var nextGen: Int64 = 1
        var nextSlot = 0
    }
    private static let state = Locked(State())

    enum Lookup {
        case open(Coordinator)
        case closed
        case invalid
    }

    static func decode(_ h: OpaquePointer?) -> (slot: Int, gen: Int64)? {
        let v = UInt(bitPattern: h)
        let gen = Int64(truncatingIfNeeded: v >> 12)
        guard gen > 0 else { return nil }
        return (Int(v & 0xFFF), gen)
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
            guard s.bridges.count < slots else { throw IAPError(.busy, "too many open bridges (\(slots))") }
            var slot = s.nextSlot
            while s.bridges[slot] != nil || iapc_atomic_load_i64(table + 2 * slot) == -1 { slot = (slot + 1) % slots }
            iapc_atomic_store_i64(table + 2 * slot, -1)  // reserved
            s.nextSlot = (slot + 1) % slots
            let gen = s.nextGen
            s.nextGen += 1
            return (slot, gen)
        }
        let coordinator: Coordinator
        do throws(IAPError) {
            coordinator = try make(table + 2 * slot + 1)
        } catch {
            iapc_atomic_store_i64(table + 2 * slot, 0)
            throw error
        }
        state.withLock { s in
            s.bridges[slot] = (gen, coordinator)
            iapc_atomic_store_i64(table + 2 * slot, gen)
        }
        return OpaquePointer(bitPattern: UInt(gen) << 12 | UInt(slot))!
    }

    /// Removes the handle; returns the coordinator to close, or why not.
    static func unregister(_ h: OpaquePointer?) -> Lookup {
        guard let (slot, gen) = decode(h) else { return .invalid }
        return state.withLock { s in
            guard let entry = s.bridges[slot], entry.gen == gen else { return gen < s.nextGen ? .closed : .invalid }
            s.bridges[slot] = nil
            // Slot stays reserved (-1) until the coordinator is closed and the
            // counter is no longer written; `release` frees it.
            iapc_atomic_store_i64(table + 2 * slot, -1)
            return .open(entry.coordinator)
        }
    }

    static func release(_ h: OpaquePointer?) {
        guard let (slot, _) = decode(h) else { return }
        state.withLock { _ in iapc_atomic_store_i64(table + 2 * slot, 0) }
    }
}
