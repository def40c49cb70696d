import Foundation
import IAPCore
import Testing

/// The "subscription" message on the simulated store: status at open, on
/// request and on change; billing retry and grace period (billing_issue /
/// billing_resolve), price increase consent through a StoreKit message
/// (price_increase), turning auto-renew off in the manage sheet.
@Suite("Subscription status")
struct SubscriptionStatusTests {
    static func of(_ ms: [JSONValue], _ type: String) -> [JSONValue] { ms.filter { $0["type"]?.stringValue == type } }
    static let day: Int64 = 86_400

    /// The sample catalog with `_billingGracePeriodEnabled` set as given.
    static func catalog(grace: Bool) throws -> String {
        let text = try String(contentsOfFile: MessageSchemas.repoRoot + "/samples/catalog/Game.storekit", encoding: .utf8)
        let edited = text.replacingOccurrences(of: "\"settings\" : {", with: "\"settings\" : {\n    \"_billingGracePeriodEnabled\" : \(grace),")
        #expect(edited != text)
        let path = NSTemporaryDirectory() + "grace-\(grace)-\(UUID().uuidString).storekit"
        try edited.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    static func group(_ m: JSONValue?) -> JSONValue? { m?["groups"]?.arrayValue?.first }

    /// A bridge on `env` whose player subscribed to vip_monthly, every
    /// message so far drained.
    static func subscribed(_ env: TestEnv) throws -> Bridge {
        let b = try env.open()
        _ = b.drain()
        _ = try subscribe(b)
        _ = b.drain()
        return b
    }

    /// Buys vip_monthly and confirms it; returns its transaction ID.
    static func subscribe(_ b: Bridge) throws -> String {
        let k = try b.buy("vip_monthly", 0)
        let r = try #require(b.drainResults().first { $0.keyValue == k })
        #expect(r["result"]?.stringValue == "0")
        try b.confirm(k)
        return r["transactionID"]?.stringValue ?? ""
    }

    @Test("none before the first purchase; subscribed after, with renewal date, product and price; at the next open too; invalid IDs listed")
    func statusLifecycle() throws {
        let env = TestEnv()
        var b = try env.open()
        #expect(Self.of(b.drain(), "subscription").isEmpty, "no group subscribed yet: nothing at open")
        try b.c.subscriptionStatus(productIDs: ["vip_monthly", "coins_100", "no_such"])
        let none = try #require(Self.of(b.drain(), "subscription").first)
        #expect(none["reason"]?.stringValue == "request")
        #expect(Self.group(none)?["state"]?.stringValue == "none" && Self.group(none)?["active"] == .bool(false))
        #expect(none["invalid"] == .array([.string("coins_100"), .string("no_such")]))

        let k = try b.buy("vip_monthly", 0)
        let bought = b.drain()
        let txn = try #require(b.results(bought).first { $0.keyValue == k }?["transactionID"]?.stringValue)
        try b.confirm(k)
        let change = try #require(Self.of(bought, "subscription").last, "the purchase changed the group's status")
        #expect(change["reason"]?.stringValue == "change")
        let g = try #require(Self.group(change))
        #expect(g["state"]?.stringValue == "subscribed" && g["active"] == .bool(true) && g["willAutoRenew"] == .bool(true))
        #expect(g["transactionID"]?.stringValue == txn && g["renewalProductID"]?.stringValue == "vip_monthly")
        #expect(g["renewalPrice"]?.stringValue == "2.99" && g["renewalDate"] == g["expiresDate"])
        #expect(g["expirationReason"] == .null && g["priceIncreaseStatus"]?.stringValue == "noIncreasePending")
        b.close()

        b = try env.open()
        let open = try #require(Self.of(b.drain(), "subscription").first)
        #expect(open["reason"]?.stringValue == "open" && Self.group(open)?["state"]?.stringValue == "subscribed")
        // NULL / [] asks for every group the player ever subscribed in.
        try b.c.subscriptionStatus(productIDs: [])
        #expect(Self.group(Self.of(b.drain(), "subscription").first)?["groupID"] == Self.group(open)?["groupID"])
        b.close()
    }

    @Test("billing issue without grace: billing retry at the period's end (no access), then expired with billingError after 60 days")
    func billingRetry() throws {
        let env = TestEnv(catalog: try Self.catalog(grace: false))
        let b = try Self.subscribed(env)
        _ = try b.sim(#"{"op":"billing_issue","productID":"vip_monthly"}"#)
        let msgs = b.drain()
        #expect(Self.of(msgs, "storeMessage").first?["reason"]?.stringValue == "billingIssue", "StoreKit tells the player")
        #expect(Self.of(msgs, "storeMessage").first?["state"]?.stringValue == "shown", "shown at once by default")
        // The first period is the catalog's one-week free trial (its
        // introductory offer): the renewal that fails is due on day 7.
        _ = try b.sim(#"{"op":"advance","seconds":\#(8 * Self.day)}"#)
        let after = b.drain()
        #expect(b.results(after).isEmpty, "no renewal charged")
        let g = try #require(Self.group(Self.of(after, "subscription").last))
        #expect(g["state"]?.stringValue == "inBillingRetryPeriod" && g["active"] == .bool(false))
        #expect(g["willAutoRenew"] == .bool(true) && g["expirationReason"]?.stringValue == "billingError", "Apple keeps trying")
        let ent = try #require(Self.of(after, "entitlements").last)
        #expect(ent["items"]?.arrayValue?.isEmpty == true, "no access in billing retry")
        _ = try b.sim(#"{"op":"advance","seconds":\#(61 * Self.day)}"#)
        let gone = try #require(Self.group(Self.of(b.drain(), "subscription").last))
        #expect(gone["state"]?.stringValue == "expired" && gone["expirationReason"]?.stringValue == "billingError")
        b.close()
    }

    @Test("billing issue with grace: the player keeps access in the grace period; billing_resolve renews with the missed period charged")
    func gracePeriod() throws {
        let env = TestEnv(catalog: try Self.catalog(grace: true))
        let b = try Self.subscribed(env)
        _ = try b.sim(#"{"op":"billing_issue","productID":"vip_monthly"}"#)
        // The first period is the catalog's one-week free trial (its
        // introductory offer): the renewal that fails is due on day 7.
        _ = try b.sim(#"{"op":"advance","seconds":\#(8 * Self.day)}"#)
        let msgs = b.drain()
        let g = try #require(Self.group(Self.of(msgs, "subscription").last))
        #expect(g["state"]?.stringValue == "inGracePeriod" && g["active"] == .bool(true), "VIP survives the grace period")
        #expect(g["gracePeriodExpiresDate"]?.int64Value ?? 0 > g["expiresDate"]?.int64Value ?? .max)
        #expect(b.results(msgs).isEmpty, "nothing charged yet")
        let ent = try b.sim(#"{"op":"entitlements"}"#)["entitlements"]?.arrayValue ?? []
        #expect(ent.contains { $0["productID"]?.stringValue == "vip_monthly" }, "still entitled in grace")

        _ = try b.sim(#"{"op":"billing_resolve","productID":"vip_monthly"}"#)
        let fixed = b.drain()
        let renewal = try #require(b.results(fixed).first, "the missed renewal is charged")
        #expect(renewal["origin"]?.stringValue == "store" && renewal["result"]?.stringValue == "0")
        let now = try #require(Self.group(Self.of(fixed, "subscription").last))
        #expect(now["state"]?.stringValue == "subscribed" && now["gracePeriodExpiresDate"] == .null)
        b.close()
    }

    @Test("grace period ends without a fix: billing retry, access ends")
    func graceRunsOut() throws {
        let env = TestEnv(catalog: try Self.catalog(grace: true))
        let b = try Self.subscribed(env)
        _ = try b.sim(#"{"op":"billing_issue","productID":"vip_monthly"}"#)
        _ = try b.sim(#"{"op":"advance","seconds":\#(50 * Self.day)}"#)
        let g = try #require(Self.group(Self.of(b.drain(), "subscription").last))
        #expect(g["state"]?.stringValue == "inBillingRetryPeriod" && g["active"] == .bool(false))
        b.close()
    }

    @Test("issue 22 item 4: auto-renew turned off in the grace period (manage sheet or op) ends access at once: \"subscription\" expired and \"entitlements\" without it")
    func autoRenewOffInGrace() throws {
        for viaSheet in [true, false] {
            let env = TestEnv(catalog: try Self.catalog(grace: true))
            let b = try Self.subscribed(env)
            _ = try b.sim(#"{"op":"billing_issue","productID":"vip_monthly"}"#)
            // The first period is the catalog's one-week free trial (its
        // introductory offer): the renewal that fails is due on day 7.
        _ = try b.sim(#"{"op":"advance","seconds":\#(8 * Self.day)}"#)
            let grace = b.drain()
            #expect(Self.group(Self.of(grace, "subscription").last)?["state"]?.stringValue == "inGracePeriod")
            #expect(Self.of(grace, "entitlements").isEmpty, "the grace period keeps the subscription: no change")
            if viaSheet {
                _ = try b.sim(#"{"op":"sheet_next","sheet":"manageSubscriptions","outcome":"cancel","productID":"vip_monthly"}"#)
                try b.c.showSheet(.manageSubscriptions)
            } else {
                let answer = try b.sim(#"{"op":"auto_renew","productID":"vip_monthly","enabled":false}"#)
                #expect(answer["status"]?["state"]?.stringValue == "expired")
            }
            let msgs = b.drain()
            let g = try #require(Self.group(Self.of(msgs, "subscription").last), "sheet \(viaSheet): the status change announced")
            #expect(g["state"]?.stringValue == "expired" && g["expirationReason"]?.stringValue == "autoRenewDisabled")
            let ent = try #require(Self.of(msgs, "entitlements").last, "sheet \(viaSheet): the entitlements follow the status")
            #expect(ent["reason"]?.stringValue == "change" && ent["items"]?.arrayValue?.isEmpty == true)
            #expect(Self.of(msgs, "entitlements").count == 1)
            b.close()
        }
    }

    @Test("issue 22 item 7: auto-renew on after expiry charges nothing, also after a restart; the transactions show no period after the old end until the new purchase")
    func noRevivalAfterExpiry() throws {
        let env = TestEnv()
        var b = try Self.subscribed(env)
        let first = try #require(try b.transactions().first { $0["productID"]?.stringValue == "vip_monthly" })
        let oldEnd = try #require(first["expiresDate"]?.int64Value)
        _ = try b.sim(#"{"op":"auto_renew","productID":"vip_monthly","enabled":false}"#)
        // The first period is the catalog's one-week free trial (its
        // introductory offer): the renewal that fails is due on day 7.
        _ = try b.sim(#"{"op":"advance","seconds":\#(8 * Self.day)}"#)
        _ = b.drain()
        let on = try b.sim(#"{"op":"auto_renew","productID":"vip_monthly","enabled":true}"#)
        #expect(on["status"]?["state"]?.stringValue == "expired" && on["status"]?["willAutoRenew"] == .bool(false))
        #expect(on["status"]?["expirationReason"]?.stringValue == "autoRenewDisabled")
        #expect(Self.of(b.drain(), "subscription").isEmpty, "nothing changed, nothing announced")
        b.close()
        b = try env.open()
        _ = b.drain()
        _ = try b.sim(#"{"op":"advance","seconds":\#(40 * Self.day)}"#)
        #expect(b.drainResults().isEmpty, "no renewal charged")
        #expect(try b.transactions().count == 1, "no backdated periods")
        let st = try #require(try b.sim(#"{"op":"status"}"#)["groups"]?.arrayValue?.first)
        #expect(st["state"]?.stringValue == "expired" && st["willAutoRenew"] == .bool(false))

        let now = try #require(try b.sim(#"{"op":"clock"}"#)["now"]?.int64Value)
        let k = try b.buy("vip_monthly", 0)
        let again = try #require(b.drainResults().first { $0.keyValue == k })
        try b.confirm(k)
        let txns = try b.transactions()
        #expect(txns.count == 2, "one charge")
        #expect(!txns.contains { ($0["purchaseDate"]?.int64Value ?? 0) >= oldEnd && ($0["purchaseDate"]?.int64Value ?? 0) < now },
                "no period between the old end and the new purchase")
        #expect((again["purchaseDate"]?.int64Value ?? 0) >= now)
        _ = try b.sim(#"{"op":"advance","seconds":\#(20 * Self.day)}"#)
        #expect(b.drainResults().isEmpty, "the new month runs from the purchase: no renewal 20 days on")
        b.close()
    }

    @Test("price increase: a deferred consent message; the subscription ends at renewal without consent; with consent it renews at the new price")
    func priceIncrease() throws {
        for consent in [false, true] {
            let env = TestEnv()
            env.extraConfig = #","storeMessages":"defer""#
            var b = try Self.subscribed(env)
            _ = try b.sim(#"{"op":"price_increase","productID":"vip_monthly","price":"3.99"}"#)
            let msgs = b.drain()
            let m = try #require(Self.of(msgs, "storeMessage").first)
            #expect(m["reason"]?.stringValue == "priceIncreaseConsent" && m["state"]?.stringValue == "deferred")
            #expect(Self.group(Self.of(msgs, "subscription").last)?["priceIncreaseStatus"]?.stringValue == "pending")
            if consent {
                // Not shown before a restart: StoreKit sends it again at launch.
                b.close()
                b = try env.open()
                let again = Self.of(b.drain(), "storeMessage")
                #expect(again.count == 1 && again.first?["reason"]?.stringValue == "priceIncreaseConsent", "\(again)")
                #expect(again.first?["state"]?.stringValue == "deferred")
                try b.c.showStoreMessages()
                let shown = b.drain()
                #expect(Self.of(shown, "storeMessage").first?["state"]?.stringValue == "shown")
                #expect(Self.of(shown, "storeMessage").first?["id"] == m["id"])
                #expect(Self.group(Self.of(shown, "subscription").last)?["priceIncreaseStatus"]?.stringValue == "agreed")
                try b.c.showStoreMessages()
                #expect(Self.of(b.drain(), "storeMessage").isEmpty, "a message is shown once")
            }
            // The first period is the catalog's one-week free trial (its
        // introductory offer): the renewal that fails is due on day 7.
        _ = try b.sim(#"{"op":"advance","seconds":\#(8 * Self.day)}"#)
            let after = b.drain()
            let g = try #require(Self.group(Self.of(after, "subscription").last), "consent \(consent)")
            if consent {
                let r = try #require(b.results(after).first)
                #expect(r["price"]?.stringValue == "3.99", "renewed at the new price")
                #expect(g["state"]?.stringValue == "subscribed" && g["priceIncreaseStatus"]?.stringValue == "noIncreasePending")
            } else {
                #expect(b.results(after).isEmpty)
                #expect(g["state"]?.stringValue == "expired" && g["expirationReason"]?.stringValue == "didNotConsentToPriceIncrease")
            }
            b.close()
        }
    }

    @Test("bad input: ops on unknown or non-subscription products, bad prices, too many IDs, empty IDs; nothing changes")
    func badInput() throws {
        let env = TestEnv()
        let b = try env.open()
        _ = b.drain()
        let txn = try Self.subscribe(b)
        for (cmd, code) in [(#"{"op":"billing_issue","productID":"no_such"}"#, IAPCode.unknownProduct),
                            (#"{"op":"billing_issue","productID":"coins_100"}"#, .invalidArgument),
                            (#"{"op":"billing_resolve"}"#, .badJSON),
                            (#"{"op":"price_increase","productID":"vip_monthly","price":"-1"}"#, .badJSON),
                            (#"{"op":"price_increase","productID":"vip_monthly"}"#, .badJSON)] {
            do {
                _ = try b.sim(cmd)
                Issue.record("accepted \(cmd)")
            } catch let e as IAPError {
                #expect(e.code == code, "\(cmd): \(e)")
            }
        }
        for ids in [[""], Array(repeating: "vip_monthly", count: 1001)] {
            #expect(throws: IAPError.self) { try b.c.subscriptionStatus(productIDs: ids) }
        }
        try b.c.subscriptionStatus(productIDs: ["vip_monthly"])
        let g = try #require(Self.group(Self.of(b.drain(), "subscription").first))
        #expect(g["state"]?.stringValue == "subscribed" && g["transactionID"]?.stringValue == txn, "nothing changed")
        b.close()
        #expect(throws: IAPError.self) { try b.c.subscriptionStatus(productIDs: []) }
        #expect(throws: IAPError.self) { try b.c.appTransaction() }
        #expect(throws: IAPError.self) { try b.c.showSheet(.manageSubscriptions) }
        #expect(throws: IAPError.self) { try b.c.showStoreMessages() }
    }
}
