import Foundation
import IAPCore
import Testing

/// A game's next version drops a product from its catalog while purchases of
/// it wait (an attack on updates): each waiting purchase gets its answer,
/// none waits for ever, and a charge already made is kept for when the
/// product is back.
@Suite("Catalog changes under waiting purchases")
struct CatalogChangeTests {
    /// A copy of the sample catalog at `path`, with or without coins_100,
    /// with or without the vip_monthly plan.
    static func writeCatalog(_ path: String, withCoins: Bool, withMonthly: Bool = true) throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: MessageSchemas.repoRoot + "/samples/catalog/Game.storekit"))
        var json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        if !withCoins {
            let products = try #require(json["products"] as? [[String: Any]])
            json["products"] = products.filter { $0["productID"] as? String != "coins_100" }
        }
        if !withMonthly {
            var groups = try #require(json["subscriptionGroups"] as? [[String: Any]])
            for i in groups.indices {
                let subs = try #require(groups[i]["subscriptions"] as? [[String: Any]])
                groups[i]["subscriptions"] = subs.filter { $0["productID"] as? String != "vip_monthly" }
            }
            json["subscriptionGroups"] = groups
        }
        try JSONSerialization.data(withJSONObject: json).write(to: URL(fileURLWithPath: path))
    }

    static func env() throws -> (TestEnv, String) {
        let path = NSTemporaryDirectory() + "catalog-change-\(UUID().uuidString).storekit"
        try writeCatalog(path, withCoins: true)
        return (TestEnv(catalog: path), path)
    }

    @Test("an Ask to Buy waiting for a product the new catalog dropped: approved, it is answered result 5 (nothing charged), no longer pending")
    func askToBuyProductGone() throws {
        let (env, path) = try Self.env()
        var b = try env.open()
        _ = b.drain()
        _ = try b.sim(#"{"op":"ask_to_buy","enabled":true}"#)
        let key = try b.buy("coins_100", 0)
        #expect(b.results(b.drain()).isEmpty)
        b.close()
        try Self.writeCatalog(path, withCoins: false)
        b = try env.open()
        _ = b.drain()
        let id = try #require(try b.sim(#"{"op":"pending"}"#)["pending"]?.arrayValue?.first?["id"]?.stringValue)
        _ = try b.sim("{\"op\":\"approve\",\"id\":\"\(id)\"}")
        let rs = b.drainResults()
        #expect(rs.map(\.keyValue) == [key] && rs.first?["result"]?.stringValue == "5", "\(rs)")
        #expect(try b.sim(#"{"op":"pending"}"#)["pending"]?.arrayValue?.isEmpty == true)
        #expect(try b.transactions().isEmpty, "nothing charged")
        try b.confirmAll(rs)
        b.close()
    }

    @Test("a charge made when its purchase failed (chargeLater), its product dropped: resolve says why and keeps it; with the product back, it is delivered")
    func chargeLaterProductGone() throws {
        let (env, path) = try Self.env()
        var b = try env.open()
        _ = b.drain()
        _ = try b.sim(#"{"op":"fail_next","error":"networkError","chargeLater":true}"#)
        let key = try b.buy("coins_100", 0)
        try b.confirmAll(b.drainResults())
        b.close()
        try Self.writeCatalog(path, withCoins: false)
        b = try env.open()
        _ = b.drain()
        let id = try #require(try b.sim(#"{"op":"pending"}"#)["pending"]?.arrayValue?.first?["id"]?.stringValue)
        do {
            _ = try b.sim("{\"op\":\"resolve\",\"id\":\"\(id)\"}")
            Issue.record("resolve of a charge whose product left the catalog answered ok")
        } catch let error as IAPError {
            #expect(error.code == .unknownProduct && error.message.contains("left the catalog"), "\(error)")
        } catch {
            Issue.record("\(error)")
        }
        b.close()
        try Self.writeCatalog(path, withCoins: true)
        b = try env.open()
        _ = b.drain()
        _ = try b.sim("{\"op\":\"resolve\",\"id\":\"\(id)\"}")
        let rs = b.drainResults()
        #expect(rs.map(\.keyValue) == [key] && rs.first?["result"]?.stringValue == "0", "\(rs)")
        try b.confirmAll(rs)
        b.close()
    }

    @Test("a purchase whose payment sheet was up at a close, its product dropped by the next launch: answered result 5 under its key, never dropped")
    func landingProductGone() throws {
        let (env, path) = try Self.env()
        env.purchaseDelayMs = 60_000
        var b = try env.open()
        _ = b.drain()
        let key = try b.buy("coins_100", 0)
        b.close()  // the sheet is up: the purchase completes at the next start
        try Self.writeCatalog(path, withCoins: false)
        b = try env.open()
        let rs = b.drainResults()
        #expect(rs.map(\.keyValue) == [key] && rs.first?["result"]?.stringValue == "5", "\(rs)")
        try b.confirmAll(rs)
        b.close()
    }
    @Test("a subscription whose plan the next catalog dropped stays the player's until its period ends: in the entitlements, its unconfirmed answer delivered (never reported unvouched), then expired without a renewal")
    func subscriptionPlanDropped() throws {
        let (env, path) = try Self.env()
        var b = try env.open()
        _ = b.drain()
        let first = try b.buy("vip_monthly", 0)
        try b.confirmAll(b.drainResults().filter { $0.keyValue == first })
        // Tapped again: an "already owned" answer, left unconfirmed.
        let again = try b.buy("vip_monthly", 0)
        #expect(b.drainResults().contains { $0.keyValue == again && $0["alreadyOwned"] == .bool(true) })
        b.close()

        try Self.writeCatalog(path, withCoins: true, withMonthly: false)
        b = try env.open()
        let ms = b.drain()
        let unvouched = ms.filter { $0["type"]?.stringValue == "unvouched" }
        #expect(unvouched.isEmpty, "\(unvouched)")
        #expect(b.results(ms).map(\.keyValue) == [again], "\(b.results(ms))")
        let ent = try #require(ms.first { $0["type"]?.stringValue == "entitlements" })
        let owned: [JSONValue] = ent["items"]?.arrayValue ?? []
        #expect(owned.contains { $0["productID"]?.stringValue == "vip_monthly" }, "\(ent)")
        try b.confirmAll(b.results(ms))
        // Forty days on: its month ended; the catalog has no such plan to renew.
        _ = try b.sim(#"{"op":"advance","seconds":3456000}"#)
        let later = b.drain()
        #expect(b.results(later).isEmpty, "renewed a plan the catalog no longer has: \(later)")
        #expect(try b.transactions().filter { $0["productID"]?.stringValue == "vip_monthly" }.count == 1)
        b.close()
    }
    @Test("an unconfirmed \"already owned\" answer of a subscription, shown again after renewals: the same transaction and price as first shown, not the latest renewal's")
    func ownedAnswerKeepsItsFacts() throws {
        let (env, _) = try Self.env()
        var b = try env.open()
        _ = b.drain()
        let first = try b.buy("vip_monthly", 0)
        try b.confirmAll(b.drainResults().filter { $0.keyValue == first })
        let again = try b.buy("vip_monthly", 0)
        let shown = try #require(b.drainResults().first { $0.keyValue == again })
        #expect(shown["alreadyOwned"] == .bool(true))
        // Two months on: renewals charged (and confirmed by the game).
        _ = try b.sim(#"{"op":"advance","seconds":5184000}"#)
        try b.confirmAll(b.drainResults().filter { $0.keyValue != again })
        b.close()
        b = try env.open()
        let back = try #require(b.drainResults().first { $0.keyValue == again })
        #expect(back["transactionID"] == shown["transactionID"] && back["price"] == shown["price"]
                && back["purchaseDate"] == shown["purchaseDate"], "shown \(shown), then \(back)")
        b.close()
    }
}
