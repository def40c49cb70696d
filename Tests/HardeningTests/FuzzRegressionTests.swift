import IAPBridge
import IAPCore
import Testing

/// One test per crash the fuzzers found (docs/HARDENING.md lists them); the
/// crashing inputs themselves are replayed by scripts/fuzz.sh from
/// Fuzz/regressions/<target>/.
@Suite("Fuzz regressions")
struct FuzzRegressionTests {
    @Test("catalog: a huge _timeRate no longer overflows the simulated clock (fuzz target catalog)")
    func hugeTimeRate() throws {
        let s = Scratch("timerate")
        for rate in ["9223372036854775807", "1e18", "4611686018427387904"] {
            let catalog = s.path + "/rate.storekit"
            write(catalog, catalogJSON([("coins", "Coins", "")], settings: ["_timeRate": .number(rate)]))
            let b = try CBridge.open(s.config(catalog: catalog))
            let key = try b.buy("coins")
            let now = try b.simulator(#"{"op":"clock"}"#)["now"]?.int64Value
            #expect(now != nil && now! > 0 && now! <= 253_402_300_799_999, "clock saturates at the end of year 9999")
            let sevens = b.drain().filter { $0["type"]?.stringValue == "7" }
            #expect(sevens.map { $0["key"]?.stringValue } == [String(key)])
            #expect(b.confirm(key) == 0)
            _ = try b.simulator(#"{"op":"advance","seconds":3153600000}"#)
            b.close()
        }
    }
}
