#if !canImport(StoreKit)
import Foundation
import IAPCore
@testable import IAPStoreKit
import StoreKitStandIn
import Testing

extension StoreContract {
    /// Issue 22: StoreKit as iOS 26 ships it, over the stand-in (whose iOS
    /// version is scripted: `StandIn.osVersion`). Each test fails on the
    /// backend as it was before the issue.
    @Suite("StoreKit as iOS 26 ships it (stand-in)")
    struct StoreKit2026Tests {
        func fresh() -> Env { StoreKitBackend().freshEnv() }

        func launch(_ env: Env) async throws -> (TestBridge, StoreKitStore) {
            try await StoreKitBackend().launchStandIn(env)
        }

        // MARK: 1. Refunds while closed, however long the history: see
        // StoreKitTodayTests.refundWhileClosed(history: 10_000).

        // MARK: 2. Promoted purchases from launch

        /// iap_launch's listener, started and subscribed to PurchaseIntent.intents.
        func listenFromLaunch() async throws {
            #expect(StoreKitLaunch.listen())
            await TestBridge.eventually("the launch listener subscribed") { StandIn.intentListeners == 1 }
            #expect(PromotedIntents.shared.listensFromLaunch)
        }

        @Test("A promoted purchase tapped before iap_open is lost without iap_launch (the app ran without a listener)")
        func promotedBeforeOpenWithoutLaunch() async throws {
            let env = fresh()
            StandIn.intentsWaitForListener = false
            StandIn.promote("remove_ads")
            let (b, _) = try await launch(env)
            try await StoreKitBackend().barrier(b)
            #expect(b.messages(type: "promoted").isEmpty)
            b.close()
        }

        @Test("iap_launch: a promoted purchase tapped before iap_open is announced at open, bought with its offer")
        func promotedBeforeOpenWithLaunch() async throws {
            let env = fresh()
            StandIn.intentsWaitForListener = false
            try await listenFromLaunch()
            StandIn.promote("vip_monthly", winBackOfferID: "winback_7")
            let (b, _) = try await launch(env)
            await b.wait(for: "the promoted message") { ms in ms.contains { $0["type"]?.stringValue == "promoted" } }
            let m = try #require(b.messages(type: "promoted").first)
            #expect(m["productID"]?.stringValue == "vip_monthly" && m["offer"]?["id"]?.stringValue == "winback_7")
            #expect(StandIn.intentListeners == 1, "the bridge does not listen a second time")
            let key: Int64 = 1_820_000_000_400
            _ = try b.buy("vip_monthly", key)
            let r = try #require(await b.result(key: key))
            #expect(r["result"]?.stringValue == "0")
            #expect(StandIn.purchaseCalls.last?.winBackOfferID == "winback_7")
            b.close()
        }

        @Test("A promoted purchase the game did not answer before iap_close is announced again by the next bridge of the process, and still bought with its offer")
        func promotedSurvivesClose() async throws {
            let env = fresh()
            var (b, _) = try await launch(env)
            StandIn.promote("vip_monthly", winBackOfferID: "winback_8")
            await b.wait(for: "the promoted message") { ms in ms.contains { $0["type"]?.stringValue == "promoted" } }
            b.close()
            (b, _) = try await launch(env)
            await b.wait(for: "the promoted message again") { ms in ms.contains { $0["type"]?.stringValue == "promoted" } }
            let m = try #require(b.messages(type: "promoted").first)
            #expect(m["productID"]?.stringValue == "vip_monthly" && m["offer"]?["id"]?.stringValue == "winback_8")
            let key: Int64 = 1_820_000_000_500
            _ = try b.buy("vip_monthly", key)
            let r = try #require(await b.result(key: key))
            #expect(r["result"]?.stringValue == "0")
            #expect(StandIn.purchaseCalls.last?.winBackOfferID == "winback_8")
            b.close()
            // Answered: the next bridge announces nothing.
            (b, _) = try await launch(env)
            try await StoreKitBackend().barrier(b)
            #expect(b.messages(type: "promoted").isEmpty)
            b.close()
        }

        @Test("iap_launch with no bridge open: intents wait; a newer one for the same product replaces the older")
        func promotedWaitingReplaced() async throws {
            let env = fresh()
            StandIn.intentsWaitForListener = false
            try await listenFromLaunch()
            StandIn.promote("vip_monthly", winBackOfferID: "old_offer")
            StandIn.promote("remove_ads")
            StandIn.promote("vip_monthly", winBackOfferID: "new_offer")
            // The listener hears them on its own task: all three reach it
            // before the bridge opens (one arriving after the open would be
            // the open bridge's to announce, replacing nothing).
            await TestBridge.eventually("the three intents heard, the newer vip_monthly kept") {
                PromotedIntents.shared.waitingForTesting == ["remove_ads -", "vip_monthly new_offer"]
            }
            let (b, _) = try await launch(env)
            await b.wait(for: "two promoted messages") { ms in ms.filter { $0["type"]?.stringValue == "promoted" }.count >= 2 }
            try await StoreKitBackend().barrier(b)
            let ms = b.messages(type: "promoted")
            #expect(ms.count == 2)
            #expect(ms.contains { $0["productID"]?.stringValue == "remove_ads" })
            #expect(ms.contains { $0["productID"]?.stringValue == "vip_monthly" && $0["offer"]?["id"]?.stringValue == "new_offer" })
            b.close()
        }

        // MARK: New facts

        @Test("\"app\": appTransactionID, originalPlatform (18.4; the string form below) and preorderDate as StoreKit gives them",
              arguments: [(16, 0), (18, 4)])
        func appTransactionFacts(_ major: Int, _ minor: Int) async throws {
            let env = fresh()
            StandIn.osVersion = (major, minor)
            StandIn.appTransaction = StandIn.AppInfo(appTransactionID: "8123456789", originalPlatform: "macOS",
                                                     preorderDate: Date(timeIntervalSince1970: 1_500_000_000))
            let (b, _) = try await launch(env)
            try b.c.appTransaction()
            await b.wait(for: "the app transaction") { ms in ms.contains { $0["type"]?.stringValue == "app" } }
            let app = try #require(b.messages(type: "app").first)
            #expect(app["appTransactionID"]?.stringValue == "8123456789")
            #expect(app["originalPlatform"]?.stringValue == "macOS")
            #expect(app["preorderDate"]?.int64Value == 1_500_000_000_000)
            b.close()
            StandIn.appTransaction = StandIn.AppInfo()
        }

        // MARK: 5. Deprecated and new APIs

        struct LookupCase: Sendable, CustomTestStringConvertible {
            let major: Int, minor: Int, call: String
            var testDescription: String { "iOS \(major).\(minor): \(call)" }
        }

        @Test("What is owned before a purchase: currentEntitlements(for:) from iOS 18.4, the deprecated currentEntitlement(for:) below",
              arguments: [LookupCase(major: 15, minor: 0, call: "currentEntitlement(for:)"),
                          LookupCase(major: 18, minor: 3, call: "currentEntitlement(for:)"),
                          LookupCase(major: 18, minor: 4, call: "currentEntitlements(for:)"),
                          LookupCase(major: 26, minor: 0, call: "currentEntitlements(for:)")])
        func entitlementLookup(_ c: LookupCase) async throws {
            let env = fresh()
            StandIn.osVersion = (c.major, c.minor)
            let (b, _) = try await launch(env)
            let first: Int64 = 1_820_000_000_100
            _ = try b.buy("remove_ads", first)
            let r = try #require(await b.result(key: first))
            #expect(r["alreadyOwned"] == .bool(false))
            let second = try b.buy("remove_ads", first + 1)
            let again = try #require(await b.result(key: second))
            #expect(again.transactionID == r.transactionID && again["alreadyOwned"] == .bool(true))
            #expect(StandIn.entitlementLookups == [c.call, c.call], "\(StandIn.entitlementLookups)")
            b.close()
        }

        @Test("StoreKitError.unsupported (iOS 18.4) is result \"4\" (not allowed), not \"8\" (unknown)")
        func unsupported() async throws {
            #expect(StoreKitMapping.failure(for: StoreKitError.unsupported) == .notAllowed)
            let env = fresh()
            let (b, _) = try await launch(env)
            StandIn.nextPurchases(.failure(StoreKitError.unsupported))
            let key: Int64 = 1_820_000_000_200
            _ = try b.buy("coins_100", key)
            let r = try #require(await b.result(key: key))
            #expect(r["result"]?.stringValue == "4")
            #expect(StandIn.ledger.isEmpty, "nothing charged")
            b.close()
        }

        @Test("A purchase cancelled in the confirmIn: sheet (scene, iOS 17; view controller, iOS 18.2) is result \"1\", nothing charged",
              arguments: [(17, 0, StandIn.PurchaseRoute.scene), (18, 2, .viewController), (15, 0, .plain)])
        func cancelledConfirmIn(_ major: Int, _ minor: Int, _ route: StandIn.PurchaseRoute) async throws {
            let env = fresh()
            StandIn.osVersion = (major, minor)
            let (b, _) = try await launch(env)
            StandIn.nextPurchases(.userCancelled)
            let key: Int64 = 1_820_000_000_300
            _ = try b.buy("coins_100", key)
            let r = try #require(await b.result(key: key))
            #expect(r["result"]?.stringValue == "1")
            #expect(StandIn.purchaseCalls.last?.route == route)
            #expect(StandIn.ledger.isEmpty, "nothing charged")
            b.close()
        }
    }
}
#endif
