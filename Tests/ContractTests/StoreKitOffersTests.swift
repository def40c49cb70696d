#if !canImport(StoreKit)
import Foundation
import IAPCore
@testable import IAPStoreKit
import StoreKitStandIn
import Testing

extension StoreContract {
    /// Issue 22: subscription offers over the StoreKit stand-in, per iOS
    /// version (`StandIn.osVersion`): the offer on the "7" and the
    /// entitlement from `Transaction.offer` (17.2+) or the deprecated fields
    /// below it, win-back offers (18+) and the manage sheet of one group (17+).
    @Suite("StoreKit offers (stand-in)")
    struct StoreKitOffersTests {
        func fresh() -> Env { StoreKitBackend().freshEnv() }

        func launch(_ env: Env) async throws -> (TestBridge, StoreKitStore) {
            try await StoreKitBackend().launchStandIn(env)
        }

        /// vip_monthly as the sample catalog has it (a one-week free trial),
        /// plus a win-back offer: half price for two months.
        static func sellVIPWithWinBack() {
            let vip = StandIn.product(
                id: "vip_monthly", type: .autoRenewable, displayName: "VIP Monthly", description: "VIP", price: 2.99,
                displayPrice: "$2.99", currencyCode: "USD", subscriptionGroupID: StandInSubscription.vipGroup,
                period: .month, introductoryOffer: (mode: .freeTrial, period: .week, periodValue: 1, count: 1, price: 0),
                winBackOffers: [(id: "wb_half", mode: .payAsYouGo, period: .month, periodValue: 1, count: 2, price: 1.49)])
            StandIn.sell(StoreKitBackend.catalogProducts().filter { $0.id != "vip_monthly" } + [vip])
        }

        @Test("The free trial's \"7\" and entitlement say introductory / freeTrial / P1W on every iOS: Transaction.offer (17.2; its period 18.4, the string form below), the deprecated offerType/offerID/offerPaymentModeStringRepresentation below 17.2",
              arguments: [(16, 0), (17, 0), (17, 2), (18, 0), (18, 4), (26, 0)])
        func trialOffer(_ major: Int, _ minor: Int) async throws {
            let env = fresh()
            StandIn.osVersion = (major, minor)
            let (b, _) = try await launch(env)
            let r = try await StandInSubscription.subscribe(b, key: 1_830_000_000_201)
            #expect(r["price"]?.stringValue == "0", "the trial is free")
            #expect(r["offer"] == .object(["type": .string("introductory"), "id": .null, "paymentMode": .string("freeTrial"),
                                           "period": .string("P1W")]), "iOS \(major).\(minor): \(r["offer"]?.serialized ?? "none")")
            await b.wait(for: "the entitlement") { _ in
                b.messages(type: "entitlements").last?["items"]?.arrayValue?.contains { $0["offer"]?["type"]?.stringValue == "introductory" } == true
            }
            b.close()
        }

        @Test("A regular-price purchase has offer null", arguments: [(17, 0), (26, 0)])
        func noOffer(_ major: Int, _ minor: Int) async throws {
            let env = fresh()
            StandIn.osVersion = (major, minor)
            let (b, _) = try await launch(env)
            let k = try b.buy("remove_ads", 1_830_000_000_301)
            let r = try #require(await b.result(key: k))
            #expect(r["result"]?.stringValue == "0" && r["offer"] == .null)
            b.close()
        }

        @Test("Win-back on iOS 18+: the lapsed player's \"999\" lists the offer the renewal info calls eligible; iap_buy_offer buys it with StoreKit's .winBackOffer option; the \"7\" says winBack; taken, it is gone",
              arguments: [(18, 0), (26, 0)])
        func winBack(_ major: Int, _ minor: Int) async throws {
            let env = fresh()
            StandIn.osVersion = (major, minor)
            Self.sellVIPWithWinBack()
            let (b, _) = try await launch(env)
            _ = try await StandInSubscription.subscribe(b, key: 1_830_000_000_401)
            let offers = { () async throws -> [JSONValue] in
                let before = b.messages(type: "999").count
                try b.c.requestProducts(["vip_monthly"])
                await b.wait(for: "the 999") { _ in b.messages(type: "999").count > before }
                return b.messages(type: "999").last?["items"]?.arrayValue?.first?["winBackOffers"]?.arrayValue ?? [.null]
            }
            #expect(try await offers() == [], "subscribed: nothing to win back")
            StandIn.setAutoRenew(group: StandInSubscription.vipGroup, false)
            StandIn.advanceClock(seconds: 10 * 86_400)
            let listed = try await offers()
            #expect(listed.count == 1 && listed.first?["id"]?.stringValue == "wb_half" && listed.first?["price"]?.stringValue == "1.49",
                    "\(listed)")
            let k = try b.c.buy(productID: "vip_monthly", clickMs: 1_830_000_000_402, winBackOfferID: "wb_half")
            let r = try #require(await b.result(key: k))
            #expect(r["result"]?.stringValue == "0" && r["price"]?.stringValue == "1.49")
            #expect(r["offer"]?["type"]?.stringValue == "winBack" && r["offer"]?["id"]?.stringValue == "wb_half")
            #expect(StandIn.purchaseCalls.last?.winBackOfferID == "wb_half")
            try b.confirm(k)
            StandIn.setAutoRenew(group: StandInSubscription.vipGroup, false)
            StandIn.advanceClock(seconds: 70 * 86_400)
            #expect(try await offers() == [], "taken: no longer eligible")
            let unknown = try b.c.buy(productID: "vip_monthly", clickMs: 1_830_000_000_403, winBackOfferID: "no_such_offer")
            let u = try #require(await b.result(key: unknown))
            #expect(u["result"]?.stringValue == "5", "an offer the product does not have: nothing charged")
            b.close()
        }

        @Test("Below iOS 18 there are no win-back offers: the \"999\" lists none and iap_buy_offer is a \"7\" result 4, nothing charged")
        func winBackBelow18() async throws {
            let env = fresh()
            StandIn.osVersion = (17, 6)
            Self.sellVIPWithWinBack()
            let (b, _) = try await launch(env)
            _ = try await StandInSubscription.subscribe(b, key: 1_830_000_000_501)
            StandIn.setAutoRenew(group: StandInSubscription.vipGroup, false)
            StandIn.advanceClock(seconds: 10 * 86_400)
            try b.c.requestProducts(["vip_monthly"])
            await b.wait(for: "the 999") { _ in !b.messages(type: "999").isEmpty }
            #expect(b.messages(type: "999").last?["items"]?.arrayValue?.first?["winBackOffers"] == .array([]))
            let calls = StandIn.purchaseCalls.count
            let k = try b.c.buy(productID: "vip_monthly", clickMs: 1_830_000_000_502, winBackOfferID: "wb_half")
            let r = try #require(await b.result(key: k))
            #expect(r["result"]?.stringValue == "4")
            #expect(StandIn.purchaseCalls.count == calls, "StoreKit was not asked to buy")
            b.close()
        }

        @Test("The manage sheet of one group: showManageSubscriptions(in:subscriptionGroupID:) on iOS 17+, a \"sheet\" naming the group; IAP_E_NOT_SUPPORTED below 17")
        func manageOneGroup() async throws {
            let env = fresh()
            StandIn.osVersion = (17, 0)
            let (b, _) = try await launch(env)
            try b.c.showSheet(.manageSubscriptionGroup(groupID: StandInSubscription.vipGroup))
            await b.wait(for: "the sheet") { _ in !b.messages(type: "sheet").isEmpty }
            let m = try #require(b.messages(type: "sheet").first)
            #expect(m["sheet"]?.stringValue == "manageSubscriptions" && m["subscriptionGroupID"]?.stringValue == StandInSubscription.vipGroup)
            #expect(StandIn.sheetsShown.last == "manageSubscriptions:\(StandInSubscription.vipGroup)")
            b.close()

            StandIn.osVersion = (16, 4)
            let (b2, _) = try await launch(env)
            do {
                try b2.c.showSheet(.manageSubscriptionGroup(groupID: StandInSubscription.vipGroup))
                Issue.record("iOS 16.4 has no sheet for one group")
            } catch {
                #expect(error.code == .notSupported)
            }
            b2.close()
        }
    }
}
#endif
