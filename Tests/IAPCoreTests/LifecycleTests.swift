import Foundation
import IAPCore
import IAPSimulator
import Testing

private func type(_ m: JSONValue) -> String { m["type"]?.stringValue ?? "" }
private func of(_ ms: [JSONValue], _ t: String) -> [JSONValue] { ms.filter { type($0) == t } }
private func entitled(_ ms: [JSONValue]) -> [String]? {
    of(ms, "entitlements").last?["items"]?.arrayValue?.compactMap { $0["productID"]?.stringValue }.sorted()
}
private let day: Int64 = 86_400
/// Clicks a wall clock makes (C7: a click below 10^12 is an engine clock's
/// and gets a key past the wall clock instead): `wall + n` is its own key.
private let wall: Int64 = 1_700_000_000_000

/// Issue 4: the whole store lifecycle on the simulated store, from Swift.
@Suite("Store lifecycle")
struct LifecycleTests {
    @Test("non-consumable: owned; buying it again returns the existing transaction with no new charge")
    func nonConsumable() throws {
        let env = TestEnv()
        var b = try env.open()
        _ = try b.buy("remove_ads", wall + 10)
        let first = b.drain()
        let r1 = try #require(b.results(first).first)
        #expect(r1["alreadyOwned"] == .bool(false) && r1["kind"]?.stringValue == "nonConsumable")
        #expect(entitled(first) == ["remove_ads"], "entitlements change after the purchase")
        _ = try b.buy("remove_ads", wall + 11)
        let r2 = try #require(b.drainResults().first)
        #expect(r2["alreadyOwned"] == .bool(true))
        #expect(r2["transactionID"] == r1["transactionID"] && r2.keyValue == wall + 11)
        #expect(try b.transactions().count == 1, "no second charge")
        try b.confirmAll([r1, r2])
        b.close()
        // After confirm and a restart (tombstone gone) it is still not charged twice.
        b = try env.open()
        #expect(entitled(b.drain()) == ["remove_ads"], "entitlements at open")
        _ = try b.buy("remove_ads", wall + 12)
        let r3 = try #require(b.drainResults().first)
        #expect(r3["alreadyOwned"] == .bool(true) && r3["result"]?.stringValue == "0")
        #expect(try b.transactions().count == 1)
        b.close()
    }

    @Test("restore emits the current entitlements; consumables never appear")
    func restore() throws {
        let env = TestEnv()
        let b = try env.open()
        _ = try b.buy("coins_100", 1)
        _ = try b.buy("remove_ads", 2)
        _ = try b.buy("vip_monthly", 3)
        _ = try b.buy("season_pass", 4)
        try b.confirmAll(b.drain())
        try b.c.restore()
        let ms = b.drain()
        let e = try #require(of(ms, "entitlements").last)
        #expect(e["reason"]?.stringValue == "restore")
        #expect(entitled(ms) == ["remove_ads", "season_pass", "vip_monthly"])
        let vip = e["items"]?.arrayValue?.first { $0["productID"]?.stringValue == "vip_monthly" }
        let expires = try #require(vip?["expiresDate"]?.int64Value)
        #expect(expires > e["now"]!.int64Value!)
        #expect(b.results(ms).isEmpty, "confirmed transactions are not re-delivered by a restore")
        b.close()
    }

    @Test("auto-renewable: renewals are store-initiated results with the same original ID; expiry when renewal is off")
    func subscriptions() throws {
        let env = TestEnv()
        var b = try env.open()
        _ = try b.buy("vip_monthly", 100)
        let buy = b.drain()
        let first = try #require(b.results(buy).first)
        let original = try #require(first["transactionID"]?.stringValue)
        #expect(first["expiresDate"]?.int64Value != nil)
        try b.confirmAll(buy)
        _ = try b.sim("{\"op\":\"advance\",\"seconds\":\(32 * day)}")
        let renewal = b.drain()
        let r = try #require(b.results(renewal).first, "no renewal after a month")
        #expect(r["origin"]?.stringValue == "store" && (r.keyValue ?? 0) < 0)
        #expect(r["originalTransactionID"]?.stringValue == original && r["transactionID"]?.stringValue != original)
        #expect(r["expiresDate"]!.int64Value! > first["expiresDate"]!.int64Value!)
        #expect(entitled(renewal) == ["vip_monthly"])
        try b.confirmAll(renewal)
        b.close()

        // Renewal off: the subscription ends with its period, after a restart too.
        b = try env.open()
        _ = b.drain()
        _ = try b.sim(#"{"op":"auto_renew","productID":"vip_monthly","enabled":false}"#)
        _ = try b.sim("{\"op\":\"advance\",\"seconds\":\(40 * day)}")
        let ended = b.drain()
        #expect(b.results(ended).isEmpty, "renewed although auto-renew is off")
        #expect(entitled(ended) == [], "VIP still entitled after expiry: \(ended)")
        b.close()
        b = try env.open()
        #expect(entitled(b.drain()) == [])
        b.close()
    }

    @Test("subscription upgrade takes effect at once in the same chain; a downgrade at the next renewal")
    func upgradeDowngrade() throws {
        let env = TestEnv()
        let b = try env.open()
        _ = try b.buy("vip_monthly", 1)
        let m = try #require(b.drainResults().first)
        _ = try b.buy("vip_yearly", 2)  // groupNumber 1 ranks above 2: an upgrade
        let ms = b.drain()
        let y = try #require(b.results(ms).first)
        #expect(y["productID"]?.stringValue == "vip_yearly" && y["alreadyOwned"] == .bool(false))
        #expect(y["originalTransactionID"] == m["originalTransactionID"])
        #expect(entitled(ms) == ["vip_yearly"])
        _ = try b.buy("vip_monthly", 3)  // a downgrade: no charge now
        let d = try #require(b.drainResults().first)
        #expect(d["productID"]?.stringValue == "vip_yearly" && d["alreadyOwned"] == .bool(true))
        _ = try b.sim("{\"op\":\"advance\",\"seconds\":\(370 * day)}")
        let renewed = b.drain()
        #expect(b.results(renewed).first?["productID"]?.stringValue == "vip_monthly", "downgrade at renewal")
        #expect(entitled(renewed) == ["vip_monthly"])
        b.close()
    }

    @Test("non-renewing subscriptions: bought again and again, each ends after the configured term")
    func nonRenewing() throws {
        let env = TestEnv()
        env.extraConfig = #","nonRenewingTerms":{"season_pass":"P3M"}"#
        let b = try env.open()
        _ = try b.buy("season_pass", 1)
        _ = try b.buy("season_pass", 2)
        let rs = b.drainResults()
        #expect(rs.count == 2 && rs[0]["transactionID"] != rs[1]["transactionID"])
        for r in rs {
            let span = r["expiresDate"]!.int64Value! - r["purchaseDate"]!.int64Value!
            #expect(span >= 89 * day * 1000 && span <= 92 * day * 1000, "term \(span) ms is not 3 months")
        }
        #expect(rs.allSatisfy { $0["alreadyOwned"] == .bool(false) })
        _ = try b.sim("{\"op\":\"advance\",\"seconds\":\(100 * day)}")
        #expect(entitled(b.drain()) == [])
        b.close()
    }

    @Test("Ask to Buy: pending, then approved after a restart with the original click key; or declined with it")
    func askToBuy() throws {
        let env = TestEnv()
        var b = try env.open()
        _ = try b.sim(#"{"op":"ask_to_buy","enabled":true}"#)
        let before = POSIX.nowMs()
        _ = try b.buy("remove_ads", wall + 555)
        _ = try b.buy("coins_100", wall + 556)
        let ms = b.drain()
        #expect(b.results(ms).isEmpty, "a pending purchase is not a result")
        #expect(of(ms, "pending").map(\.keyValue) == [wall + 555, wall + 556])
        #expect(of(ms, "pending").first?["reason"]?.stringValue == "askToBuy")
        // C7: a purchase waiting for approval still owns its key: the same
        // click time gets a fresh key (this third purchase stays pending).
        let fresh = try b.buy("coins_100", wall + 555)
        #expect(fresh > 556 && fresh >= before, "\(fresh)")
        b.close()

        b = try env.open()
        _ = b.drain()
        let pending = try b.sim(#"{"op":"pending"}"#)["pending"]?.arrayValue ?? []
        #expect(pending.count == 3)
        let ids = pending.compactMap { $0["id"]?.stringValue }
        _ = try b.sim("{\"op\":\"approve\",\"id\":\"\(ids[0])\"}")
        _ = try b.sim("{\"op\":\"decline\",\"id\":\"\(ids[1])\"}")
        let rs = b.drainResults()
        #expect(rs.count == 2)
        let approved = try #require(rs.first { $0.keyValue == wall + 555 })
        #expect(approved["result"]?.stringValue == "0" && approved["origin"]?.stringValue == "game")
        let declined = try #require(rs.first { $0.keyValue == wall + 556 })
        #expect(declined["result"]?.stringValue == "2" && declined["resultName"]?.stringValue == "declined")
        #expect(try b.transactions().count == 1, "a declined request charges nothing")
        try b.confirmAll(rs)
        b.close()
        b = try env.open()
        #expect(b.drainResults().isEmpty)
        b.close()
    }

    @Test("Ask to Buy for something owned by the time it is approved (two requests; bought meanwhile): not charged again; the request's key gets the existing transaction, alreadyOwned, after a restart too")
    func askToBuyApprovedWhenOwned() throws {
        let env = TestEnv()
        var b = try env.open()
        _ = b.drain()
        _ = try b.sim(#"{"op":"ask_to_buy","enabled":true}"#)
        let k1 = try b.buy("remove_ads", wall + 700)
        let k2 = try b.buy("remove_ads", wall + 701)
        let k3 = try b.buy("vip_monthly", wall + 702)
        #expect(b.results(b.drain()).isEmpty)
        let ids = (try b.sim(#"{"op":"pending"}"#)["pending"]?.arrayValue ?? []).compactMap { $0["id"]?.stringValue }
        #expect(ids.count == 3)
        _ = try b.sim("{\"op\":\"approve\",\"id\":\"\(ids[0])\"}")
        let first = b.drainResults()
        #expect(first.map(\.keyValue) == [k1] && first.first?["alreadyOwned"] == .bool(false))
        try b.confirmAll(first)
        // The player subscribes directly meanwhile; then a restart.
        _ = try b.sim(#"{"op":"ask_to_buy","enabled":false}"#)
        let direct = try b.buy("vip_monthly", wall + 703)
        try b.confirmAll(b.drainResults().filter { $0.keyValue == direct })
        b.close()

        b = try env.open()
        _ = b.drain()
        _ = try b.sim("{\"op\":\"approve\",\"id\":\"\(ids[1])\"}")
        _ = try b.sim("{\"op\":\"approve\",\"id\":\"\(ids[2])\"}")
        let later = b.drainResults()
        #expect(later.compactMap(\.keyValue).sorted() == [k2, k3].sorted(), "\(later)")
        #expect(later.allSatisfy { $0["result"]?.stringValue == "0" && $0["alreadyOwned"] == .bool(true) }, "\(later)")
        let charges = try b.transactions()
        #expect(charges.filter { $0["productID"]?.stringValue == "remove_ads" }.count == 1, "remove_ads charged twice: \(charges)")
        #expect(charges.filter { $0["productID"]?.stringValue == "vip_monthly" }.count == 1, "the active plan bought again: \(charges)")
        try b.confirmAll(later)
        b.close()
    }

    @Test("fail_next with chargeLater: only after networkError or unknown (the errors a store charges after), and never a second charge of something owned")
    func chargeLaterRules() throws {
        let env = TestEnv()
        let b = try env.open()
        _ = b.drain()
        do {
            _ = try b.sim(#"{"op":"fail_next","error":"cancelled","chargeLater":true}"#)
            Issue.record("chargeLater after a cancel was accepted")
        } catch let e as IAPError {
            #expect(e.code == .invalidArgument && e.message.contains("networkError or unknown"), "\(e)")
        }
        let owned = try b.buy("remove_ads", 0)
        try b.confirmAll(b.drainResults().filter { $0.keyValue == owned })
        _ = try b.sim(#"{"op":"fail_next","error":"networkError","chargeLater":true}"#)
        let again = try b.buy("remove_ads", 0)
        let failed = b.drainResults()
        #expect(failed.map(\.keyValue) == [again] && failed.first?["result"]?.stringValue == "3")
        #expect(try b.sim(#"{"op":"pending"}"#)["pending"]?.arrayValue?.isEmpty == true, "a charge of something owned waits")
        #expect(try b.transactions().filter { $0["productID"]?.stringValue == "remove_ads" }.count == 1)
        // The flag does not outlive the purchase it was for.
        let coins = try b.buy("coins_100", 0)
        #expect(b.drainResults().first { $0.keyValue == coins }?["result"]?.stringValue == "0")
        b.close()
    }

    @Test("Ask to Buy approved while the game's data was wiped still arrives with the click key")
    func askToBuyAfterReinstall() throws {
        let env = TestEnv()
        var b = try env.open()
        _ = try b.sim(#"{"op":"ask_to_buy","enabled":true}"#)
        _ = try b.buy("coins_100", wall + 9001)
        b.close()
        env.reinstall()
        b = try env.open()
        let id = try #require(try b.sim(#"{"op":"pending"}"#)["pending"]?.arrayValue?.first?["id"]?.stringValue)
        _ = try b.sim("{\"op\":\"approve\",\"id\":\"\(id)\"}")
        #expect(b.drainResults().map(\.keyValue) == [wall + 9001])
        b.close()
    }

    @Test("interrupted purchase: a \"pending\" (no result to confirm), then its one result with the original key (C9)")
    func interrupted() throws {
        let env = TestEnv()
        var b = try env.open()
        _ = try b.sim(#"{"op":"interrupt_next"}"#)
        _ = try b.buy("coins_100", wall + 777)
        let ms = b.drain()
        #expect(b.results(ms).isEmpty, "an interrupted payment is not a result: one key, one result")
        let pending = try #require(of(ms, "pending").first)
        #expect(pending["reason"]?.stringValue == "interrupted" && pending.keyValue == wall + 777)
        #expect(try b.transactions().isEmpty, "not charged yet")
        #expect(throws: IAPError.self) { try b.confirm(wall + 777) }
        b.close()

        // The player completes the payment later; the game restarted in between.
        b = try env.open()
        #expect(b.drainResults().isEmpty)
        let id = try #require(try b.sim(#"{"op":"pending"}"#)["pending"]?.arrayValue?.first?["id"]?.stringValue)
        _ = try b.sim("{\"op\":\"resolve\",\"id\":\"\(id)\"}")
        // A confirm before the game was shown the success takes nothing (C9).
        do {
            try b.confirm(wall + 777)
            Issue.record("a confirm took a success the game had not been shown")
        } catch let e as IAPError {
            #expect(e.code == .notDelivered)
        }
        let success = b.drainResults()
        #expect(success.count == 1 && success.first?["result"]?.stringValue == "0" && success.first?.keyValue == wall + 777)
        b.c.flush()
        b.close()
        b = try env.open()
        let still = b.drainResults()
        #expect(still.map { $0["result"]?.stringValue } == ["0"], "the success stays until confirmed")
        try b.confirmAll(still)
        b.close()
        b = try env.open()
        #expect(b.drainResults().isEmpty)
        b.close()
    }

    @Test("a refund's \"revoked\" confirmed before its purchase's \"7\" was handled: the transaction stays unfinished, and the \"7\" comes back at the next open under its key, not reported as unvouched (C3, C9)")
    func revokedConfirmedFirst() throws {
        let env = TestEnv()
        var b = try env.open()
        _ = b.drain()
        let key = try b.buy("coins_100", 0)
        let seven = try #require(b.drainResults().first { $0.keyValue == key })
        let txn = try #require(seven["transactionID"]?.stringValue)
        // The game queued the "7" for its main loop; the refund comes first.
        _ = try b.sim("{\"op\":\"refund\",\"transactionID\":\"\(txn)\"}")
        let revoked = try #require(b.drain().first { $0["type"]?.stringValue == "revoked" })
        try b.confirm(try #require(revoked.keyValue))
        b.c.flush()
        let store = try b.sim("{\"op\":\"transactions\"}")
        let t = try #require(store["transactions"]?.arrayValue?.first { $0["transactionID"]?.stringValue == txn })
        #expect(t["finished"] == .bool(false), "finished while its \"7\" was unconfirmed: \(t)")
        b.close()   // the app dies before its main loop handled the "7"

        // Twice more without handling it (the store re-delivers the refunded
        // transaction at each open, its revocation already confirmed).
        for open in 1...2 {
            b = try env.open()
            let ms = b.drain()
            #expect(ms.contains { $0["type"]?.stringValue == "7" && $0.keyValue == key }, "open \(open): the unhandled \"7\" did not come back: \(ms)")
            #expect(!ms.contains { $0["type"]?.stringValue == "unvouched" }, "open \(open): reported as unvouched: \(ms)")
            #expect(!ms.contains { $0["type"]?.stringValue == "revoked" }, "open \(open): the confirmed \"revoked\" came back")
            let now = try b.sim("{\"op\":\"transactions\"}")["transactions"]?.arrayValue?.first { $0["transactionID"]?.stringValue == txn }
            #expect(now?["finished"] == .bool(false), "open \(open): finished while its \"7\" was unconfirmed")
            if open == 1 { b.close() }
        }
        try b.confirm(key)
        b.c.flush()
        let after = try b.sim("{\"op\":\"transactions\"}")
        #expect(after["transactions"]?.arrayValue?.first { $0["transactionID"]?.stringValue == txn }?["finished"] == .bool(true),
                "finished once the last record of it was confirmed")
        b.close()
    }

    @Test("refund: a \"revoked\" message kept until confirmed; also for a refund made while the app was closed")
    func refunds() throws {
        let env = TestEnv()
        var b = try env.open()
        _ = try b.buy("remove_ads", 1)
        _ = try b.buy("vip_monthly", 2)
        let bought = b.drainResults()
        try b.confirmAll(bought)
        let adsTxn = try #require(bought.first?["transactionID"]?.stringValue)
        let vipTxn = try #require(bought.last?["transactionID"]?.stringValue)
        _ = try b.sim("{\"op\":\"refund\",\"transactionID\":\"\(adsTxn)\"}")
        var ms = b.drain()
        let revoked = try #require(of(ms, "revoked").first)
        #expect(revoked["transactionID"]?.stringValue == adsTxn && revoked["productID"]?.stringValue == "remove_ads")
        #expect(revoked["origin"]?.stringValue == "game")
        #expect(entitled(ms) == ["vip_monthly"])
        b.close()
        // Not confirmed: delivered again.
        b = try env.open()
        ms = b.drain()
        #expect(of(ms, "revoked").count == 1)
        try b.confirmAll(ms)
        b.close()

        // A refund while the app is closed: noticed at the next open.
        let config = try BridgeConfig.parse(Array(env.configJSON.utf8))
        let store = try SimulatedStore.open(config: config)
        _ = try store.simulate(try JSONParser.parse("{\"op\":\"refund\",\"transactionID\":\"\(vipTxn)\"}"))
        store.stop()
        b = try env.open()
        ms = b.drain()
        #expect(of(ms, "revoked").map { $0["transactionID"]?.stringValue } == [vipTxn])
        #expect(entitled(ms) == [])
        try b.confirmAll(ms)
        b.close()
        b = try env.open()
        #expect(of(b.drain(), "revoked").isEmpty, "revocation delivered again after confirm")
        b.close()
    }

    @Test("every named store error maps to its result code and charges nothing", arguments: [
        ("networkError", "3"), ("notAllowed", "4"), ("productUnavailable", "5"), ("unknown", "8"), ("cancelled", "1"),
        ("purchaseNotAllowed", "4"), ("systemError", "8"),
    ])
    func failures(_ name: String, _ code: String) throws {
        let env = TestEnv()
        let b = try env.open()
        _ = try b.sim("{\"op\":\"fail_next\",\"error\":\"\(name)\"}")
        _ = try b.buy("coins_100", 1)
        let r = try #require(b.drainResults().first)
        #expect(r["result"]?.stringValue == code && r["transactionID"]?.stringValue == "")
        #expect((r["message"]?.stringValue ?? "").isEmpty == false)
        #expect(try b.transactions().isEmpty)
        // Only the next purchase fails.
        _ = try b.buy("coins_100", 2)
        #expect(b.drainResults().first?["result"]?.stringValue == "0")
        b.close()
    }

    @Test("catalog settings: _failTransactionsEnabled, _storeKitErrors, _askToBuyEnabled")
    func catalogSettings() throws {
        let base = try String(contentsOfFile: MessageSchemas.repoRoot + "/samples/catalog/Game.storekit", encoding: .utf8)
        var keep: [TestEnv] = []  // the directories live until the test ends
        defer { keep.removeAll() }
        func catalog(_ replace: String, _ with: String) throws -> String {
            let dir = TestEnv()
            keep.append(dir)
            let path = dir.root + "/variant.storekit"
            try base.replacingOccurrences(of: replace, with: with).write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }
        var env = TestEnv(catalog: try catalog("\"_failTransactionsEnabled\" : false", "\"_failTransactionsEnabled\" : true"))
        var b = try env.open()
        _ = try b.buy("coins_100", 1)
        #expect(b.drainResults().first?["result"]?.stringValue == "8")
        b.close()

        env = TestEnv(catalog: try catalog("\"_storeKitErrors\" : [ ]",
            "\"_storeKitErrors\" : [{\"current\":{\"index\":0,\"type\":\"network\"},\"enabled\":true,\"name\":\"Purchase\"},{\"current\":null,\"enabled\":true,\"name\":\"Load Products\"}]"))
        b = try env.open()
        _ = try b.buy("coins_100", 1)
        #expect(b.drainResults().first?["result"]?.stringValue == "3")
        try b.c.requestProducts(["coins_100"])
        let p = try #require(of(b.drain(), "999").first)
        #expect(p["error"]?.stringValue != nil && p["items"]?.arrayValue?.isEmpty == true)
        b.close()

        env = TestEnv(catalog: try catalog("\"_askToBuyEnabled\" : false", "\"_askToBuyEnabled\" : true"))
        b = try env.open()
        _ = try b.buy("coins_100", 1)
        #expect(of(b.drain(), "pending").count == 1)
        b.close()
    }

    @Test("products: localized fields, subscription period and intro offer, unknown IDs listed")
    func products() throws {
        let env = TestEnv()
        let b = try env.open()
        try b.c.requestProducts(["vip_monthly", "coins_100", "nope", "coins_100"])
        let p = try #require(of(b.drain(), "999").first)
        #expect(p["invalid"] == .array([.string("nope")]))
        #expect(p["products"]?["coins_100"]?.stringValue == "0.99")
        let vip = try #require(p["items"]?.arrayValue?.first { $0["id"]?.stringValue == "vip_monthly" })
        #expect(vip["subscriptionPeriod"]?.stringValue == "P1M" && vip["displayPrice"]?.stringValue == "$2.99")
        #expect(vip["introductoryOffer"]?["paymentMode"]?.stringValue == "free")
        #expect(p["items"]?.arrayValue?.count == 2)
        b.close()
    }
}
