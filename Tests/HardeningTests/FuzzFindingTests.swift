import Foundation
import IAPBridge
import IAPCore
import Testing

/// Findings of the fuzzers (Fuzz/targets), replayed as tests.
@Suite("Fuzz findings")
struct FuzzFindingTests {
    /// simulator fuzzer, 2026-11-25: a subscription renewed for 463 days, a
    /// second purchase, both first keys confirmed, a restart: a "7" for a
    /// confirmed key came back.
    @Test("renewals over 463 days, confirms, a restart: no \"7\" comes back for a confirmed key")
    func renewalsThenRestart() throws {
        let s = Scratch("fuzz-renewals")
        var b = try CBridge.open(s.config())
        var keys: [Int64] = []
        var confirmed = Set<Int64>()
        var log: [String] = []
        func drain() {
            for m in b.drainRaw() {
                log.append(m)
                guard let v = try? JSONParser.parse(m), let k = v["key"]?.stringValue.flatMap({ Int64($0) }) else { continue }
                if v["type"]?.stringValue == "7" { #expect(!confirmed.contains(k), "came back after its confirm: \(m)") }
                if !keys.contains(k) { keys.append(k) }
            }
        }
        _ = try b.buy("vip_monthly"); drain()
        _ = try b.simulator(#"{"op":"advance","seconds":40000000}"#); drain()
        _ = try b.buy("remove_ads"); drain()
        for n in [0, 1] where n < keys.count {
            if b.confirm(keys[n]) == 0 { confirmed.insert(keys[n]) }
            drain()
        }
        b.close()
        b = try CBridge.open(s.config())
        drain()
        b.close()
        #expect(confirmed.count == 2, "the finding needs both first keys confirmed, got \(confirmed.count): \(log)")
    }
}
