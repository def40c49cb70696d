#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Named places where the crash campaign kills the process on purpose
/// (`IAP_CRASH_AT=name` or `name:N` for the N-th time it is reached). Only in
/// builds with the IAP_TEST_HOOKS flag (debug builds, and the campaign's
/// release build): a release library ignores the variable.
public enum FaultPoint: String, CaseIterable, Sendable {
    /// The result is in the outbox file but not yet synced.
    case afterOutboxWrite = "after_outbox_write"
    /// The result is synced but the game has not been told.
    case afterOutboxSync = "after_outbox_sync"
    /// The confirm record is written but not yet synced.
    case afterConfirmWrite = "after_confirm_write"
    /// The confirm is durable but the store transaction is not finished.
    case beforeFinish = "before_finish"
    /// The store finished the transaction; the outbox has not forgotten it.
    case afterFinish = "after_finish"
    /// The store charged; the result has not reached the SDK.
    case afterCharge = "after_charge"
    /// During a compaction, after the new file is written.
    case duringCompaction = "during_compaction"

    private static let armed: (FaultPoint, Int)? = {
        #if !IAP_TEST_HOOKS
        return nil
        #else
        guard let raw = getenv("IAP_CRASH_AT") else { return nil }
        let spec = String(cString: raw)
        let parts = spec.split(separator: ":")
        guard let first = parts.first, let point = FaultPoint(rawValue: String(first)) else { return nil }
        let n = parts.count > 1 ? Int(parts[1]) ?? 1 : 1
        return (point, max(1, n))
        #endif
    }()
    nonisolated(unsafe) private static var hits = 0
    private static let lock = Lock()

    @inline(__always)
    public func reach() {
        guard let armed = FaultPoint.armed, armed.0 == self else { return }
        FaultPoint.lock.withLock {
            FaultPoint.hits += 1
            if FaultPoint.hits >= armed.1 { kill(getpid(), SIGKILL) }
        }
    }
}

/// The crash campaign's other knob, read from the environment for the same
/// reason as `FaultPoint`: the campaign kills a real game process that
/// reaches the SDK through the C ABI, so it cannot hand the bridge a test
/// storage (tests do: IAPTestSupport's `SimulatedDisk`). Only in builds with
/// the IAP_TEST_HOOKS flag; a release library ignores the variable.
enum CampaignHooks {
    /// `IAP_OUTBOX_COMPACT_BYTES` (at least 1024): a lower outbox compaction
    /// threshold, so kills land inside compactions often. Read once.
    static let outboxCompactThreshold: Int? = {
        #if IAP_TEST_HOOKS
        if let raw = getenv("IAP_OUTBOX_COMPACT_BYTES"), let n = Int(String(cString: raw)), n >= 1024 { return n }
        #endif
        return nil
    }()
}
