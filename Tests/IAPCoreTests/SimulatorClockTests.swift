import Foundation
import IAPCore
@testable import IAPSimulator
import Testing

/// The simulated store's clock stands for Apple's: it never goes back. It
/// followed the device's clock, and a launch whose clock was behind the
/// store's last charge (the device clock corrected, a `_timeRate` lead lost
/// with a kill) kept an older charge as the group's latest: a subscription
/// bought again was charged but neither entitled nor renewed (found by an
/// attack on clocks).
@Suite("Simulated store's clock")
struct SimulatorClockTests {
    static let day: Int64 = 86_400_000

    static func open(_ env: TestEnv) throws -> SimulatedStore {
        try SimulatedStore.open(config: try BridgeConfig.parse(Array(env.configJSON.utf8)))
    }

    static func op(_ s: SimulatedStore, _ json: String) throws -> JSONValue { try s.simulate(try JSONParser.parse(json)) }

    static func now(_ s: SimulatedStore) throws -> Int64 { try #require(try op(s, #"{"op":"clock"}"#)["now"]?.int64Value) }

    static func vip(_ s: SimulatedStore) throws -> JSONValue? {
        try op(s, #"{"op":"status"}"#)["groups"]?.arrayValue?.first
    }

    @Test("a launch whose clock is behind the store's last charge starts from that charge; a subscription bought again is the group's latest, entitled")
    func neverBehindLastCharge() throws {
        let env = TestEnv()
        var s = try Self.open(env)
        _ = try Self.op(s, #"{"op":"advance","seconds":34560000}"#)  // 400 days ahead
        let bought = try #require(try Self.op(s, #"{"op":"external_purchase","productID":"vip_monthly"}"#)["transactionID"]?.stringValue)
        let boughtAt = try #require(try Self.op(s, #"{"op":"transactions"}"#)["transactions"]?.arrayValue?
            .first { $0["transactionID"]?.stringValue == bought }?["purchaseDate"]?.int64Value)
        // The lead is lost, as a kill loses a `_timeRate` lead that only a
        // clean close writes (or a device clock a year ahead, corrected).
        s.lock.withLock {
            s.clockOffsetMs = 0
            try? s.persist([event("clock") { $0.int("offset", 0) }])
        }
        s.stop()

        s = try Self.open(env)
        defer { s.stop() }
        let reopened = try Self.now(s)
        #expect(reopened >= boughtAt, "the store's clock went back \((boughtAt - reopened) / Self.day) days below its last charge")
        _ = try Self.op(s, #"{"op":"refund","transactionID":"\#(bought)"}"#)
        let again = try #require(try Self.op(s, #"{"op":"external_purchase","productID":"vip_monthly"}"#)["transactionID"]?.stringValue)
        let g = try #require(try Self.vip(s))
        #expect(g["state"]?.stringValue == "subscribed" && g["transactionID"]?.stringValue == again,
                "the subscription bought again is not the group's current one: \(g)")
        let owned = s.lock.withLock { s.entitlementIDsLocked().map(String.init) }
        #expect(owned.contains(again), "the subscription bought again is not entitled: \(owned)")
        // It runs on from there: advance moves it (it stood still at the
        // floor until real time caught up).
        let before = try Self.now(s)
        let after = try #require(try Self.op(s, #"{"op":"advance","seconds":86400}"#)["now"]?.int64Value)
        #expect(after - before >= Self.day, "advance of a day moved the clock \(after - before) ms")
    }

    @Test("a subscription that expired stays expired at the next open, whatever the device clock says then (the instant the clock reached is kept at each close)")
    func expiredStaysExpired() throws {
        let env = TestEnv()
        var s = try Self.open(env)
        _ = try Self.op(s, #"{"op":"external_purchase","productID":"vip_monthly"}"#)
        _ = try Self.op(s, #"{"op":"auto_renew","productID":"vip_monthly","enabled":false}"#)
        _ = try Self.op(s, #"{"op":"advance","seconds":3456000}"#)  // 40 days: past its month
        #expect(try Self.vip(s)?["state"]?.stringValue == "expired")
        s.stop()
        // The device clock is 40 days behind at the next open (set back by
        // the player): as a lead of zero written after the close.
        let (log, _) = try SimStateLog.open(directory: env.stateDir, durable: false, storage: POSIXStorage())
        try log.append([event("clock") { $0.int("offset", 0) }])
        log.close()
        s = try Self.open(env)
        defer { s.stop() }
        let state = try Self.vip(s)
        #expect(state?["state"]?.stringValue == "expired", "an expired subscription came back: \(String(describing: state))")
        let on = try Self.op(s, #"{"op":"auto_renew","productID":"vip_monthly","enabled":true}"#)
        #expect(on["status"]?["state"]?.stringValue == "expired")
    }

    @Test("the clock never reads less than it read before, and advance moves it by exactly what was asked")
    func monotonicAndAdvance() throws {
        let env = TestEnv()
        let s = try Self.open(env)
        defer { s.stop() }
        var last = try Self.now(s)
        for _ in 0..<200 {
            let n = try Self.now(s)
            #expect(n >= last)
            last = n
        }
        let before = try Self.now(s)
        let after = try #require(try Self.op(s, #"{"op":"advance","seconds":86400}"#)["now"]?.int64Value)
        #expect(after - before >= Self.day && after - before < Self.day + 30_000, "advance of a day moved \(after - before) ms")  // plus the real time between the two calls (a slow runner)
    }
}
