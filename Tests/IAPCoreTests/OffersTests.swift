import Foundation
import IAPCore
import Testing

/// Issue 22: subscription offers on the simulated store, as the App Store
/// applies them: the introductory offer of a first subscription (free
/// trial, pay as you go), win-back offers for a lapsed subscriber (in the
/// "999" and bought with `iap_buy_offer`), the offer on every "7" and
/// entitlement, and the manage sheet of one subscription group.
@Suite("Subscription offers (simulator)")
struct OffersTests {
    static let day: Int64 = 86_400
    static let dayMs: Int64 = 86_400_000
    static let group = "6A0000A0"
    static let trial = """
              "introductoryOffer" : {
                "internalID" : "6A000015",
                "numberOfPeriods" : 1,
                "paymentMode" : "free",
                "subscriptionPeriod" : "P1W"
              },
    """

    /// The sample catalog with vip_monthly's introductory offer replaced by
    /// `intro` (JSON members, trailing comma included).
    static func catalog(_ intro: String) throws -> String {
        let text = try String(contentsOfFile: MessageSchemas.repoRoot + "/samples/catalog/Game.storekit", encoding: .utf8)
        let squeezed = { (s: String) in s.filter { !$0.isWhitespace } }
        // Located by its unique internalID, whatever the indentation.
        guard let start = text.range(of: "\"introductoryOffer\" : {"),
              let end = text.range(of: "},", range: start.upperBound..<text.endIndex),
              squeezed(String(text[start.lowerBound..<end.upperBound])) == squeezed(Self.trial) else {
            Issue.record("the sample catalog's vip_monthly introductory offer moved")
            return ""
        }
        var edited = text
        edited.replaceSubrange(start.lowerBound..<end.upperBound, with: intro)
        let path = NSTemporaryDirectory() + "offers-\(UUID().uuidString).storekit"
        try edited.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    static let winBack = """
    "introductoryOffer" : { "numberOfPeriods" : 1, "paymentMode" : "free", "subscriptionPeriod" : "P1W" },
    "winbackOffers" : [
      { "offerID" : "wb_half", "referenceName" : "Half price, 2 months", "displayPrice" : "1.49",
        "numberOfPeriods" : 2, "paymentMode" : "payAsYouGo", "subscriptionPeriod" : "P1M" }
    ],
    """

    static func offer(_ m: JSONValue?) -> JSONValue? { m?["offer"] }
    static func items(_ ms: [JSONValue], _ type: String) -> [JSONValue] { ms.filter { $0["type"]?.stringValue == type } }

    /// Buys vip_monthly; its "7" (confirmed).
    static func subscribe(_ b: Bridge, offer: String? = nil) throws -> JSONValue {
        let k = try b.c.buy(productID: "vip_monthly", clickMs: 0, winBackOfferID: offer)
        let r = try #require(b.drainResults().first { $0.keyValue == k })
        try b.confirm(k)
        return r
    }

    /// Every "7" of vip_monthly the store made by itself (renewals), confirmed.
    static func renewals(_ b: Bridge) throws -> [JSONValue] {
        let rs = b.drainResults().filter { $0["productID"]?.stringValue == "vip_monthly" && $0["origin"]?.stringValue == "store" }
        for r in rs { try b.confirm(try #require(r.keyValue)) }
        return rs
    }

    @Test("a first subscription takes the catalog's free trial: price 0, a week long, \"offer\" on the 7 and the entitlement; the renewal is at the regular price with no offer; a later subscription of the group gets no trial")
    func freeTrial() throws {
        let env = TestEnv()
        let b = try env.open()
        _ = b.drain()
        let k = try b.buy("vip_monthly", 0)
        let msgs = b.drain()
        let r = try #require(b.results(msgs).first { $0.keyValue == k })
        #expect(r["result"]?.stringValue == "0" && r["price"]?.stringValue == "0")
        #expect(Self.offer(r) == .object(["type": .string("introductory"), "id": .null, "paymentMode": .string("freeTrial"),
                                           "period": .string("P1W")]))
        let start = try #require(r["purchaseDate"]?.int64Value)
        #expect(r["expiresDate"]?.int64Value == start + 7 * Self.dayMs, "the trial ends after its week, not after a month")
        let ent = try #require(Self.items(msgs, "entitlements").last?["items"]?.arrayValue?.first)
        #expect(Self.offer(ent)?["type"]?.stringValue == "introductory")
        try b.confirm(k)

        _ = try b.sim(#"{"op":"advance","seconds":\#(8 * Self.day)}"#)
        let renewal = try #require(try Self.renewals(b).first, "the trial renews into the paid plan")
        #expect(renewal["price"]?.stringValue == "2.99" && renewal["offer"] == .null)

        // Lapse, then subscribe again: the trial was spent.
        _ = try b.sim(#"{"op":"auto_renew","productID":"vip_monthly","enabled":false}"#)
        _ = try b.sim(#"{"op":"advance","seconds":\#(40 * Self.day)}"#)
        _ = b.drain()
        let again = try Self.subscribe(b)
        #expect(again["price"]?.stringValue == "2.99" && again["offer"] == .null)
        b.close()
    }

    @Test("pay as you go: three months at the offer's price (a \"7\" each, with the offer), then the regular price")
    func payAsYouGo() throws {
        let env = TestEnv(catalog: try Self.catalog("""
        "introductoryOffer" : { "displayPrice" : "0.99", "numberOfPeriods" : 3, "paymentMode" : "payAsYouGo", "subscriptionPeriod" : "P1M" },
        """))
        let b = try env.open()
        _ = b.drain()
        let first = try Self.subscribe(b)
        #expect(first["price"]?.stringValue == "0.99" && Self.offer(first)?["paymentMode"]?.stringValue == "payAsYouGo")
        var prices: [String] = []
        var offers: [String] = []
        for _ in 0..<3 {
            _ = try b.sim(#"{"op":"advance","seconds":\#(31 * Self.day)}"#)
            for r in try Self.renewals(b) {
                prices.append(r["price"]?.stringValue ?? "?")
                offers.append(Self.offer(r)?["type"]?.stringValue ?? "none")
            }
        }
        #expect(prices == ["0.99", "0.99", "2.99"], "3 periods at the offer's price in all, the first one included")
        #expect(offers == ["introductory", "introductory", "none"])
        b.close()
    }

    @Test("the offer the \"999\" lists is the one a purchase is charged: a free trial lists price 0 (not its displayPrice); a trial whose period is no ISO 8601 duration is neither listed nor applied (the catalog is read once)")
    func listedIsCharged() throws {
        let intro = { (ms: [JSONValue]) -> JSONValue? in
            Self.items(ms, "999").last?["items"]?.arrayValue?.first { $0["id"]?.stringValue == "vip_monthly" }?["introductoryOffer"]
        }
        let free = TestEnv(catalog: try Self.catalog("""
        "introductoryOffer" : { "displayPrice" : "0.99", "numberOfPeriods" : 500, "paymentMode" : "free", "subscriptionPeriod" : "P3D" },
        """))
        let b = try free.open()
        _ = b.drain()
        try b.c.requestProducts(["vip_monthly"])
        #expect(intro(b.drain()) == .object(["paymentMode": .string("free"), "period": .string("P3D"), "periods": .number("120"),
                                             "price": .string("0")]), "a free trial costs 0; periods at most 120")
        #expect(try Self.subscribe(b)["price"]?.stringValue == "0")
        b.close()

        let bad = TestEnv(catalog: try Self.catalog("""
        "introductoryOffer" : { "numberOfPeriods" : 1, "paymentMode" : "free", "subscriptionPeriod" : "one week" },
        """))
        let c = try bad.open()
        _ = c.drain()
        try c.c.requestProducts(["vip_monthly"])
        #expect(intro(c.drain()) == .null, "listed before, though no purchase took it")
        let first = try Self.subscribe(c)
        #expect(first["price"]?.stringValue == "2.99" && Self.offer(first) == .null)
        c.close()
    }

    @Test("Ask to Buy and an interrupted payment charge what the player asked for once approved or resolved, also after a restart: the units (5 coins packs at 4.95) and the win-back offer (1.49)")
    func pendingKeepsQuantityAndOffer() throws {
        let env = TestEnv(catalog: try Self.catalog(Self.winBack))
        var b = try env.open()
        _ = b.drain()
        // Lapsed: the win-back offer is the player's to take.
        _ = try Self.subscribe(b)
        _ = try b.sim(#"{"op":"auto_renew","productID":"vip_monthly","enabled":false}"#)
        _ = try b.sim(#"{"op":"advance","seconds":\#(10 * Self.day)}"#)
        _ = b.drain()

        _ = try b.sim(#"{"op":"ask_to_buy","enabled":true}"#)
        let coins = try b.c.buy(productID: "coins_100", clickMs: 0, quantity: 5)
        let vip = try b.c.buy(productID: "vip_monthly", clickMs: 0, winBackOfferID: "wb_half")
        #expect(Self.items(b.drain(), "pending").count == 2)
        _ = try b.sim(#"{"op":"ask_to_buy","enabled":false}"#)
        b.close()   // approved while the game is closed: the store kept what was asked

        b = try env.open()
        _ = b.drain()
        let ids = try #require(try b.sim(#"{"op":"pending"}"#)["pending"]?.arrayValue).compactMap { $0["id"]?.stringValue }
        #expect(ids.count == 2)
        for id in ids { _ = try b.sim("{\"op\":\"approve\",\"id\":\"\(id)\"}") }
        let rs = b.drainResults()
        let c = try #require(rs.first { $0.keyValue == coins })
        #expect(c["result"]?.stringValue == "0" && c["quantity"]?.int64Value == 5 && c["price"]?.stringValue == "4.95", "\(c)")
        let v = try #require(rs.first { $0.keyValue == vip })
        #expect(v["result"]?.stringValue == "0" && v["price"]?.stringValue == "1.49" && Self.offer(v)?["type"]?.stringValue == "winBack", "\(v)")
        try b.confirmAll(rs)

        _ = try b.sim(#"{"op":"interrupt_next"}"#)
        let three = try b.c.buy(productID: "coins_100", clickMs: 0, quantity: 3)
        _ = b.drain()
        let id = try #require(try b.sim(#"{"op":"pending"}"#)["pending"]?.arrayValue?.first?["id"]?.stringValue)
        _ = try b.sim("{\"op\":\"resolve\",\"id\":\"\(id)\"}")
        let r = try #require(b.drainResults().first { $0.keyValue == three })
        #expect(r["quantity"]?.int64Value == 3 && r["price"]?.stringValue == "2.97", "\(r)")
        try b.confirm(three)
        b.close()
    }

    @Test("win-back: none while subscribed; once lapsed the \"999\" lists the catalog's win-back offer; iap_buy_offer buys it (its price, offer winBack); taken, it is listed no more and cannot be bought again; an unknown offer is a \"7\" result 5, nothing charged")
    func winBack() throws {
        let env = TestEnv(catalog: try Self.catalog(Self.winBack))
        let b = try env.open()
        _ = b.drain()
        let wbOf = { (ms: [JSONValue]) -> [JSONValue]? in
            Self.items(ms, "999").last?["items"]?.arrayValue?.first { $0["id"]?.stringValue == "vip_monthly" }?["winBackOffers"]?.arrayValue
        }
        try b.c.requestProducts(["vip_monthly"])
        #expect(wbOf(b.drain()) == [], "never subscribed: no win-back offer")

        let trial = try Self.subscribe(b)
        #expect(Self.offer(trial)?["type"]?.stringValue == "introductory")
        try b.c.requestProducts(["vip_monthly"])
        #expect(wbOf(b.drain()) == [], "subscribed: no win-back offer")
        let refused = try b.c.buy(productID: "vip_monthly", clickMs: 0, winBackOfferID: "wb_half")
        let no = try #require(b.drainResults().first { $0.keyValue == refused })
        #expect(no["result"]?.stringValue == "5", "not eligible while subscribed: nothing charged")
        try b.confirm(refused)

        _ = try b.sim(#"{"op":"auto_renew","productID":"vip_monthly","enabled":false}"#)
        _ = try b.sim(#"{"op":"advance","seconds":\#(10 * Self.day)}"#)
        _ = b.drain()
        try b.c.requestProducts(["vip_monthly"])
        let listed = try #require(wbOf(b.drain())?.first, "lapsed: the win-back offer is listed")
        #expect(listed == .object(["id": .string("wb_half"), "type": .string("winBack"), "paymentMode": .string("payAsYouGo"),
                                   "period": .string("P1M"), "periods": .number("2"), "price": .string("1.49")]))

        let unknown = try b.c.buy(productID: "vip_monthly", clickMs: 0, winBackOfferID: "no_such_offer")
        let u = try #require(b.drainResults().first { $0.keyValue == unknown })
        #expect(u["result"]?.stringValue == "5" && u["transactionID"]?.stringValue == "")
        try b.confirm(unknown)

        let won = try Self.subscribe(b, offer: "wb_half")
        #expect(won["result"]?.stringValue == "0" && won["price"]?.stringValue == "1.49")
        #expect(Self.offer(won) == .object(["type": .string("winBack"), "id": .string("wb_half"), "paymentMode": .string("payAsYouGo"),
                                             "period": .string("P1M")]))
        let start = try #require(won["purchaseDate"]?.int64Value)
        #expect((won["expiresDate"]?.int64Value ?? 0) - start >= 28 * Self.dayMs, "one offer period: a month")
        _ = try b.sim(#"{"op":"advance","seconds":\#(31 * Self.day)}"#)
        #expect(try Self.renewals(b).map { $0["price"]?.stringValue } == ["1.49"], "the offer's second period")

        _ = try b.sim(#"{"op":"auto_renew","productID":"vip_monthly","enabled":false}"#)
        _ = try b.sim(#"{"op":"advance","seconds":\#(40 * Self.day)}"#)
        _ = b.drain()
        try b.c.requestProducts(["vip_monthly"])
        #expect(wbOf(b.drain()) == [], "taken once: not offered again")
        let twice = try b.c.buy(productID: "vip_monthly", clickMs: 0, winBackOfferID: "wb_half")
        let t = try #require(b.drainResults().first { $0.keyValue == twice })
        #expect(t["result"]?.stringValue == "5")
        try b.confirm(twice)
        b.close()

        // The simulator keeps which offer a transaction used across a
        // restart: the offer stays taken.
        let again = try env.open()
        let ent = Self.items(again.drain(), "entitlements").last?["items"]?.arrayValue ?? []
        #expect(ent.isEmpty, "lapsed again: nothing owned")
        try again.c.requestProducts(["vip_monthly"])
        #expect(wbOf(again.drain()) == [], "still taken after a restart")
        again.close()
    }

    @Test("bad offer IDs are refused at once with IAP_E_INVALID_ARG, nothing stored; a win-back offer buys one unit")
    func badOfferIDs() throws {
        let env = TestEnv()
        let b = try env.open()
        _ = b.drain()
        for bad in ["", String(repeating: "x", count: 256), "a\u{1}b"] {
            #expect(throws: IAPError.self) { try b.c.buy(productID: "vip_monthly", clickMs: 0, winBackOfferID: bad) }
        }
        #expect(throws: IAPError.self) { try b.c.buy(productID: "coins_100", clickMs: 0, quantity: 2, winBackOfferID: "wb") }
        #expect(b.drain().isEmpty, "nothing started")
        #expect(b.c.liveRecordCount == 0)
        b.close()
    }

    @Test("the manage sheet of one group: a \"sheet\" naming the group; a cancel there turns that group's renewal off; an unknown group is refused at once")
    func manageOneGroup() throws {
        let env = TestEnv()
        let b = try env.open()
        _ = b.drain()
        _ = try Self.subscribe(b)
        _ = b.drain()
        #expect(throws: IAPError.self) { try b.c.showSheet(.manageSubscriptionGroup(groupID: "no_such_group")) }
        #expect(throws: IAPError.self) { try b.c.showSheet(.manageSubscriptionGroup(groupID: "")) }
        _ = try b.sim(#"{"op":"sheet_next","sheet":"manageSubscriptions","outcome":"cancel","productID":"vip_monthly"}"#)
        try b.c.showSheet(.manageSubscriptionGroup(groupID: Self.group))
        let msgs = b.drain()
        let sheet = try #require(Self.items(msgs, "sheet").first)
        #expect(sheet["sheet"]?.stringValue == "manageSubscriptions" && sheet["subscriptionGroupID"]?.stringValue == Self.group)
        #expect(sheet["outcome"]?.stringValue == "dismissed")
        let groups = try b.sim(#"{"op":"status"}"#)["groups"]?.arrayValue ?? []
        let vip = try #require(groups.first { $0["groupID"]?.stringValue == Self.group }, "\(groups)")
        #expect(vip["willAutoRenew"] == .bool(false), "cancelled in its group's sheet")
        b.close()
    }
}
