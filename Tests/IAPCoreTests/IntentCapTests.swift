import Foundation
import IAPCore
import Testing

/// The outbox keeps at most `Outbox.maxIntents` unanswered purchase starts;
/// past that the oldest (by time, then key) is let go at each add, found in
/// one pass instead of a sort of all of them.
@Suite("Intent cap")
struct IntentCapTests {
    @Test("past the cap the oldest intents go, by time then key, and the newest stay, also after a reopen")
    func oldestGo() throws {
        let env = TestEnv()
        try env.makeDataDir()
        let (box, _) = try Outbox.open(directory: env.dataDir)
        let extra = 40
        let n = Outbox.maxIntents + extra
        // Times out of key order, with ties: key k starts at (k * 7919) % n / 2.
        func at(_ k: Int) -> Int64 { Int64((k * 7919) % n / 2) }
        for k in 1...n { try box.addIntent(key: Int64(k), productID: "p\(k)", atMs: at(k)) }
        let expected = (1...n).sorted { (at($0), $0) < (at($1), $1) }.suffix(Outbox.maxIntents).map { Int64($0) }
        #expect(box.openIntents.map(\.key) == expected)
        #expect(box.openIntents.count == Outbox.maxIntents)
        box.close()
        let (again, _) = try Outbox.open(directory: env.dataDir)
        #expect(Set(again.openIntents.map(\.key)).isSuperset(of: expected))
        again.close()
    }
}
