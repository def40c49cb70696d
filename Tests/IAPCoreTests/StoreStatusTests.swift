import Foundation
import IAPCore
import Testing

/// The "store" message: whether the player may pay (parental controls) and
/// the App Store country, at open and on change; the simulator's ops
/// `payments_allowed` and `storefront` play both, across restarts.
@Suite("Store status")
struct StoreStatusTests {
    static func of(_ ms: [JSONValue], _ type: String) -> [JSONValue] { ms.filter { $0["type"]?.stringValue == type } }

    @Test("at open: payments allowed, the catalog's storefront; parental controls refuse purchases (result 4) until lifted, across a restart")
    func paymentsAllowed() throws {
        let env = TestEnv()
        var b = try env.open()
        let open = try #require(Self.of(b.drain(), "store").first)
        #expect(open["reason"]?.stringValue == "open" && open["canMakePayments"] == .bool(true))
        #expect(open["storefront"]?.stringValue == "USA")

        _ = try b.sim(#"{"op":"payments_allowed","enabled":false}"#)
        let change = try #require(Self.of(b.drain(), "store").first)
        #expect(change["reason"]?.stringValue == "change" && change["canMakePayments"] == .bool(false))
        let k = try b.buy("coins_100", 0)
        let r = try #require(b.drainResults().first)
        #expect(r.keyValue == k && r["result"]?.stringValue == "4", "a purchase under parental controls is refused")
        try b.confirm(k)
        #expect(try b.transactions().isEmpty, "nothing charged")
        b.close()

        b = try env.open()
        #expect(Self.of(b.drain(), "store").first?["canMakePayments"] == .bool(false), "the store remembers")
        _ = try b.sim(#"{"op":"payments_allowed","enabled":true}"#)
        #expect(Self.of(b.drain(), "store").first?["canMakePayments"] == .bool(true))
        let k2 = try b.buy("coins_100", 0)
        #expect(b.drainResults().first { $0.keyValue == k2 }?["result"]?.stringValue == "0")
        b.close()
    }

    @Test("a storefront change is announced; prices come in its currency; bad country codes are refused")
    func storefront() throws {
        let env = TestEnv()
        let b = try env.open()
        _ = b.drain()
        _ = try b.sim(#"{"op":"storefront","countryCode":"FRA"}"#)
        let change = try #require(Self.of(b.drain(), "store").first)
        #expect(change["storefront"]?.stringValue == "FRA" && change["reason"]?.stringValue == "change")
        try b.c.requestProducts(["coins_100"])
        let items = try #require(Self.of(b.drain(), "999").first?["items"]?.arrayValue)
        #expect(items.first?["currency"]?.stringValue == "EUR")
        // The same country again: no message.
        _ = try b.sim(#"{"op":"storefront","countryCode":"FRA"}"#)
        #expect(Self.of(b.drain(), "store").isEmpty)
        for bad in [#"{"op":"storefront","countryCode":"fr"}"#, #"{"op":"storefront","countryCode":"FRANCE"}"#, #"{"op":"storefront"}"#] {
            do {
                _ = try b.sim(bad)
                Issue.record("accepted \(bad)")
            } catch let e as IAPError {
                #expect(e.code == .invalidArgument, "\(bad): \(e)")
            }
        }
        b.close()
    }

    @Test("a result delivered again after a storefront change keeps the currency it was charged in (USD), with its storefront")
    func redeliveredKeepsCurrency() throws {
        let env = TestEnv()
        var b = try env.open()
        _ = b.drain()
        let key = try b.buy("coins_100", 0)
        let first = try #require(b.drainResults().first { $0.keyValue == key })
        #expect(first["currency"]?.stringValue == "USD" && first["storefront"]?.stringValue == "USA")
        _ = try b.sim(#"{"op":"storefront","countryCode":"FRA"}"#)
        b.close()   // not confirmed: delivered again at the next open
        b = try env.open()
        let again = try #require(b.drainResults().first { $0.keyValue == key })
        #expect(again["currency"]?.stringValue == "USD" && again["price"]?.stringValue == "0.99" && again["storefront"]?.stringValue == "USA",
                "re-delivered in the new storefront's currency: \(again)")
        try b.confirm(key)
        b.close()
    }

    @Test("intro-offer eligibility in the \"999\" items: true before the first subscription in the group, false after, null without an offer")
    func introOfferEligibility() throws {
        let env = TestEnv()
        let b = try env.open()
        _ = b.drain()
        func items() throws -> [String: JSONValue] {
            try b.c.requestProducts(["vip_monthly", "vip_yearly", "coins_100"])
            let list = try #require(Self.of(b.drain(), "999").first?["items"]?.arrayValue)
            var out: [String: JSONValue] = [:]
            for i in list { if let id = i["id"]?.stringValue { out[id] = i } }
            return out
        }
        let before = try items()
        let withOffer = before.values.filter { $0["introductoryOffer"] != .null }
        try #require(!withOffer.isEmpty, "the sample catalog has a subscription with an introductory offer")
        for i in withOffer { #expect(i["introOfferEligible"] == .bool(true), "\(i)") }
        #expect(before["coins_100"]?["introOfferEligible"] == .null)
        _ = try b.buy("vip_monthly", 0)
        _ = b.drainResults()
        let after = try items().values.filter { $0["introductoryOffer"] != .null }
        #expect(after.count == withOffer.count, "\(after)")
        for i in after {
            #expect(i["introOfferEligible"] == .bool(false), "spent once subscribed in the group: \(i)")
        }
        b.close()
    }

    @Test("family sharing: a family member's purchase arrives as a store-initiated \"7\" and an entitlement, both with ownershipType familyShared; unshareable products are refused")
    func familyShare() throws {
        let env = TestEnv()
        let b = try env.open()
        _ = b.drain()
        _ = try b.sim(#"{"op":"family_share","productID":"remove_ads"}"#)
        let ms = b.drain()
        let r = try #require(b.results(ms).first)
        #expect(r["ownershipType"]?.stringValue == "familyShared" && r["origin"]?.stringValue == "store")
        let ent = try #require(Self.of(ms, "entitlements").last?["items"]?.arrayValue?.first)
        #expect(ent["productID"]?.stringValue == "remove_ads" && ent["ownershipType"]?.stringValue == "familyShared")
        try b.confirm(try #require(r.keyValue))
        // The player's own purchase says so too.
        let k = try b.buy("vip_monthly", 0)
        #expect(b.drainResults().first { $0.keyValue == k }?["ownershipType"]?.stringValue == "purchased")
        for bad in [#"{"op":"family_share","productID":"coins_100"}"#, #"{"op":"family_share","productID":"vip_monthly"}"#] {
            #expect(throws: IAPError.self, "\(bad)") { _ = try b.sim(bad) }
        }
        b.close()
    }

    @Test("several units of a consumable in one purchase: the \"7\" says how many and what they cost together; across a restart too")
    func quantity() throws {
        let env = TestEnv()
        var b = try env.open()
        _ = b.drain()
        let k = try b.c.buy(productID: "coins_100", clickMs: 0, quantity: 3)
        let r = try #require(b.drainResults().first { $0.keyValue == k })
        #expect(r["quantity"] == .number("3") && r["price"]?.stringValue == "2.97", "\(r)")
        b.close()
        b = try env.open()
        let again = try #require(b.drainResults().first { $0.keyValue == k })
        #expect(again["quantity"] == .number("3") && again["price"]?.stringValue == "2.97", "rebuilt from the store's facts: \(again)")
        try b.confirm(k)
        #expect(throws: IAPError.self) { _ = try b.c.buy(productID: "remove_ads", clickMs: 0, quantity: 2) }
        #expect(throws: IAPError.self) { _ = try b.c.buy(productID: "coins_100", clickMs: 0, quantity: 11) }
        b.close()
    }

    @Test("several units bought as the bridge closes (the payment sheet still up): they land at the next start, all of them")
    func quantityAcrossClose() throws {
        let env = TestEnv()
        env.purchaseDelayMs = 60_000
        var b = try env.open()
        _ = b.drain()
        let k = try b.c.buy(productID: "coins_100", clickMs: 0, quantity: 3)
        b.close()
        env.purchaseDelayMs = 0
        b = try env.open()
        let r = try #require(b.drainResults().first { $0.keyValue == k }, "the purchase in flight at close lands at the next start")
        #expect(r["result"]?.stringValue == "0" && r["quantity"] == .number("3") && r["price"]?.stringValue == "2.97", "\(r)")
        #expect(r["origin"]?.stringValue == "game", "this install's click: \(r)")
        try b.confirm(k)
        b.close()
    }

    @Test("a purchase in flight at close keeps its install's token: it lands as this install's click; after a reinstall its re-delivery is another install's (origin store), key kept")
    func flightKeepsToken() throws {
        let env = TestEnv()
        env.purchaseDelayMs = 60_000
        var b = try env.open()
        _ = b.drain()
        let k = try b.c.buy(productID: "coins_100", clickMs: 0)
        b.close()
        env.purchaseDelayMs = 0
        b = try env.open()
        let landed = try #require(b.drainResults().first { $0.keyValue == k }, "the purchase lands at the next start")
        #expect(landed["origin"]?.stringValue == "game", "\(landed)")
        b.close()  // not confirmed
        env.reinstall()
        b = try env.open()
        let again = try #require(b.drainResults().first { $0.keyValue == k }, "re-delivered after the reinstall, key kept")
        #expect(again["origin"]?.stringValue == "store", "the token names the install that bought: \(again)")
        try b.confirm(k)
        b.close()
    }
}
