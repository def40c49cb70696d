#if !canImport(StoreKit)
import Foundation
import IAPCore
@testable import IAPStoreKit
import StoreKitStandIn
import Testing

extension StoreContract {
    /// Issue 13, "Wrong today": what the backend does on the iOS versions
    /// players run now, over the stand-in (whose iOS version and screen are
    /// scripted: `StandIn.osVersion`, `StandIn.screen`).
    @Suite("StoreKit on today's iOS (stand-in)")
    struct StoreKitTodayTests {
        func fresh() -> Env { StoreKitBackend().freshEnv() }

        func launch(_ env: Env, storekit: String = "") async throws -> (TestBridge, StoreKitStore) {
            try await StoreKitBackend(storekitExtra: storekit).launchStandIn(env)
        }

        func barrier(_ b: TestBridge) async throws { try await StoreKitBackend().barrier(b) }

        // MARK: 1. The purchase call per iOS version

        @Test("Family sharing: a family member's purchase arrives with ownershipType familyShared (Transaction.ownershipType)")
        func familyShared() async throws {
            let env = fresh()
            let (b, _) = try await launch(env)
            let id = try #require(StandIn.familyShare("remove_ads"))
            let r = try #require(await b.result("the shared transaction") { $0.transactionID == String(id) })
            #expect(r["ownershipType"]?.stringValue == "familyShared" && r["origin"]?.stringValue == "store")
            b.close()
        }

        @Test("\"store\": AppStore.canMakePayments and the storefront at open; a storefront change through Storefront.updates")
        func storeStatus() async throws {
            let env = fresh()
            StandIn.canMakePayments = false
            StandIn.storefront = "GBR"
            let (b, _) = try await launch(env)
            await b.wait(for: "the store status at open") { ms in
                ms.contains { $0["type"]?.stringValue == "store" && $0["reason"]?.stringValue == "open" }
            }
            let open = try #require(b.messages(type: "store").first)
            #expect(open["canMakePayments"] == .bool(false) && open["storefront"]?.stringValue == "GBR")
            StandIn.storefront = "FRA"
            await b.wait(for: "the storefront change") { ms in
                ms.contains { $0["type"]?.stringValue == "store" && $0["reason"]?.stringValue == "change" && $0["storefront"]?.stringValue == "FRA" }
            }
            b.close()
            StandIn.canMakePayments = true
        }

        struct RouteCase: Sendable, CustomTestStringConvertible {
            let major: Int
            let minor: Int
            let screen: StandIn.Screen
            let expected: StandIn.PurchaseRoute
            var testDescription: String { "iOS \(major).\(minor), \(screen) -> \(expected.rawValue)" }
        }

        static let routes: [RouteCase] = [
            RouteCase(major: 15, minor: 0, screen: .foregroundWithKeyWindow, expected: .plain),
            RouteCase(major: 16, minor: 4, screen: .foregroundWithKeyWindow, expected: .plain),
            RouteCase(major: 17, minor: 0, screen: .foregroundWithKeyWindow, expected: .scene),
            RouteCase(major: 18, minor: 1, screen: .foregroundWithKeyWindow, expected: .scene),
            RouteCase(major: 18, minor: 2, screen: .foregroundWithKeyWindow, expected: .viewController),
            RouteCase(major: 26, minor: 0, screen: .foregroundWithKeyWindow, expected: .viewController),
            RouteCase(major: 18, minor: 2, screen: .foregroundWithoutKeyWindow, expected: .scene),
            RouteCase(major: 17, minor: 0, screen: .backgroundOnly, expected: .plain),
        ]

        @Test("Each iOS version takes its purchase call: confirmIn view controller (18.2+), scene (17+), else options only",
              arguments: routes)
        func purchaseRoute(_ c: RouteCase) async throws {
            let env = fresh()
            StandIn.osVersion = (c.major, c.minor)
            StandIn.screen = c.screen
            let (b, _) = try await launch(env)
            let key: Int64 = 1_810_000_000_001
            _ = try b.buy("coins_100", key)
            let r = try #require(await b.result(key: key))
            #expect(r["result"]?.stringValue == "0")
            #expect(StandIn.purchaseCalls.last?.route == c.expected)
            b.close()
        }

        @Test("On iOS 18.2 the plain purchase(options:) fails with \"Could not get confirmation scene ID\" (what the backend avoids)")
        func plainCallFailsOn182() async throws {
            _ = fresh()
            StandIn.osVersion = (18, 2)
            let p = try #require(StoreKitBackend.catalogProducts().first { $0.id == "coins_100" })
            await #expect { try await Self.plainPurchase(p) } throws: { error in
                guard case .systemError(let inner)? = error as? StoreKitError else { return false }
                return String(describing: inner) == "Could not get confirmation scene ID"
            }
            #expect(StandIn.ledger.isEmpty)
            // Its result, were it made, is not "nothing was charged": a charge may follow.
            #expect(StoreKitMapping.failure(for: StoreKitError.systemError(StandIn.ConfirmationSceneError())) == .unknown)
        }

        /// `purchase(options:)` is @MainActor (26.2:1649) and its result is
        /// not Sendable in the 16.2 interface the stand-in follows: called
        /// and dropped on the main actor.
        @MainActor
        static func plainPurchase(_ p: Product) async throws { _ = try await p.purchase(options: []) }

        // MARK: 2. Unverified transactions

        @Test("Unverified: result 6, not finished after the confirm; once it verifies, one success under the click's key, then finished")
        func unverifiedThenVerified() async throws {
            let env = fresh()
            var (b, _) = try await launch(env)
            StandIn.nextPurchases(.unverified(.invalidSignature))
            let key: Int64 = 1_810_000_000_010
            _ = try b.buy("coins_100", key)
            let r = try #require(await b.result(key: key))
            #expect(r["result"]?.stringValue == "6")
            let txn = try #require(r.transactionID.flatMap(UInt64.init))
            try b.confirm(key)
            #expect(b.c.flush() == nil)
            try await barrier(b)
            #expect(!StandIn.finishCalls.contains(txn))
            b.close()

            // Still unverified at the next launch: nothing again (its tombstone), not finished.
            (b, _) = try await launch(env)
            try await barrier(b)
            #expect(b.results(transaction: String(txn)).isEmpty)
            #expect(!StandIn.finishCalls.contains(txn))
            b.close()

            // It verifies: one success, under the click's key (its 6 was confirmed).
            StandIn.verify(txn)
            (b, _) = try await launch(env)
            let s = try #require(await b.result("the verified transaction") { $0.transactionID == String(txn) })
            #expect(s["result"]?.stringValue == "0")
            #expect(s.key == key)
            #expect(s["origin"]?.stringValue == "game")
            try b.confirm(key)
            await TestBridge.eventually("finished once verified and confirmed") { StandIn.isFinished(txn) }
            b.close()

            (b, _) = try await launch(env)
            try await barrier(b)
            #expect(b.results(transaction: String(txn)).isEmpty, "delivered as a success once")
            b.close()
        }

        // MARK: 3. What a failure or a pending answer says

        @Test("A .pending answer is not called Ask to Buy (StoreKit does not say); failures after which a charge can follow say so")
        func pendingAndFailureTexts() async throws {
            let env = fresh()
            let (b, _) = try await launch(env)
            StandIn.nextPurchases(.pending, .failure(StoreKitError.unknown))
            _ = try b.buy("remove_ads", 1_810_000_000_020)
            await b.wait(for: "pending") { ms in ms.contains { $0["type"]?.stringValue == "pending" } }
            #expect(b.messages(type: "pending").first?["reason"]?.stringValue == "actionRequired")
            _ = try b.buy("coins_100", 1_810_000_000_021)
            let r = try #require(await b.result(key: 1_810_000_000_021))
            let text = r["message"]?.stringValue ?? ""
            #expect(text.contains("arrives later"))
            #expect(!text.contains("nothing was charged"))
            b.close()
        }

        // MARK: 4. Tokens of another install

        @Test("A transaction whose token another install made arrives as store-initiated (keeping its key); this install's and 1.x tokens are the game's")
        func otherInstallToken() async throws {
            let env = fresh()
            let (b, _) = try await launch(env)
            let other = (b.c.install &+ 1) & PurchaseToken.installMask
            let foreign = try #require(UUID(uuidString: PurchaseToken(key: 1_810_000_000_030, install: other).uuidString))
            let t1 = try #require(StandIn.externalPurchase("coins_100", appAccountToken: foreign))
            let r1 = try #require(await b.result("another install's") { $0.transactionID == String(t1) })
            #expect(r1["origin"]?.stringValue == "store", "not this install's click")
            #expect(r1.key == 1_810_000_000_030, "the key stays, so a game whose save knows it does not grant it twice")

            let own = try #require(UUID(uuidString: PurchaseToken(key: 1_810_000_000_031, install: b.c.install).uuidString))
            let t2 = try #require(StandIn.externalPurchase("coins_100", appAccountToken: own))
            let r2 = try #require(await b.result("this install's") { $0.transactionID == String(t2) })
            #expect(r2["origin"]?.stringValue == "game" && r2.key == 1_810_000_000_031)

            let old = try #require(UUID(uuidString: PurchaseToken(key: 1_810_000_000_032).uuidString))
            let t3 = try #require(StandIn.externalPurchase("coins_100", appAccountToken: old))
            let r3 = try #require(await b.result("a 1.x token") { $0.transactionID == String(t3) })
            #expect(r3["origin"]?.stringValue == "game" && r3.key == 1_810_000_000_032)
            b.close()
        }

        @Test("The install identifier is made once per dataDir and survives a reopen; a reinstall makes a new one")
        func installIdentifier() async throws {
            let env = fresh()
            var (b, _) = try await launch(env)
            let first = b.c.install
            #expect(first != 0 && first <= PurchaseToken.installMask)
            b.close()
            (b, _) = try await launch(env)
            #expect(b.c.install == first)
            b.close()
            env.reinstall()
            (b, _) = try await launch(env)
            #expect(b.c.install != first)
            b.close()
        }

        // MARK: 5. Renewal or purchase on iOS 15-16

        @Test("iOS 16: a re-subscription through updates (same originalID, reason PURCHASE) answers the click; a renewal is the store's; isUpgraded is sent")
        func resubscribeIsNotRenewal() async throws {
            let env = fresh()
            StandIn.osVersion = (16, 4)
            let (b, _) = try await launch(env)
            let key: Int64 = 1_810_000_000_040
            _ = try b.buy("vip_monthly", key)
            let first = try #require(await b.result(key: key))
            #expect(first["isUpgraded"]?.boolValue == false)
            let firstID = try #require(first.transactionID.flatMap(UInt64.init))
            try b.confirm(key)

            let renewal = try #require(StandIn.renew(firstID))
            let rr = try #require(await b.result("the renewal") { $0.transactionID == String(renewal) })
            #expect(rr["origin"]?.stringValue == "store")
            try b.confirm(try #require(rr.key))

            // Bought again (Ask to Buy approved through updates): same chain, the game's click.
            StandIn.nextPurchases(.pending)
            let key2: Int64 = 1_810_000_000_041
            _ = try b.buy("vip_yearly", key2)
            await b.wait(for: "pending") { ms in ms.contains { $0["type"]?.stringValue == "pending" && $0.key == key2 } }
            let again = try #require(StandIn.approvePending())
            let ra = try #require(await b.result(key: key2))
            #expect(ra.transactionID == String(again))
            #expect(ra["originalTransactionID"]?.stringValue == String(firstID), "the chain continues")
            #expect(ra["origin"]?.stringValue == "game")
            b.close()
        }

        // MARK: 6. What was paid

        @Test("The price is what was paid (an introductory offer included), in the transaction's currency")
        func paidPrice() async throws {
            let env = fresh()
            let (b, _) = try await launch(env)
            let key: Int64 = 1_810_000_000_050
            _ = try b.buy("vip_monthly", key)   // a free trial: the first of its group
            let r = try #require(await b.result(key: key))
            #expect(Decimal(string: r["price"]?.stringValue ?? "") == 0)
            #expect(r["currency"]?.stringValue == "USD")
            _ = try b.buy("coins_100", key + 1)
            let c = try #require(await b.result(key: key + 1))
            #expect(c["price"]?.stringValue == "0.99")
            // A transaction without a price (Transaction.price is optional):
            // the list price times the quantity, as a priced one says.
            _ = try b.c.buy(productID: "coins_100", clickMs: key + 2, quantity: 3)
            let three = try #require(await b.result(key: key + 2))
            #expect(three["price"]?.stringValue == "2.97" && three["quantity"]?.int64Value == 3, "\(three)")
            StandIn.omitPrices = true
            _ = try b.c.buy(productID: "coins_100", clickMs: key + 3, quantity: 3)
            let unpriced = try #require(await b.result(key: key + 3))
            #expect(unpriced["price"]?.stringValue == "2.97", "no price on the transaction: the unit price was reported: \(unpriced)")
            StandIn.omitPrices = false
            b.close()
        }

        // MARK: 7. Promoted purchases

        @Test("Promoted: the game is told and decides; its iap_buy buys the intent's product with the win-back offer")
        func promotedAsk() async throws {
            let env = fresh()
            StandIn.promote("vip_monthly", winBackOfferID: "winback_1")   // before anyone listens: kept
            let (b, _) = try await launch(env)
            await b.wait(for: "the promoted message") { ms in ms.contains { $0["type"]?.stringValue == "promoted" } }
            let m = try #require(b.messages(type: "promoted").first)
            #expect(m["productID"]?.stringValue == "vip_monthly")
            #expect(m["offer"]?["id"]?.stringValue == "winback_1")
            #expect(m["offer"]?["type"]?.stringValue == "winBack")
            #expect(StandIn.purchaseCalls.isEmpty, "nothing bought without the game")
            let key: Int64 = 1_810_000_000_060
            _ = try b.buy("vip_monthly", key)
            let r = try #require(await b.result(key: key))
            #expect(r["result"]?.stringValue == "0" && r["origin"]?.stringValue == "game")
            #expect(StandIn.purchaseCalls.last?.winBackOfferID == "winback_1")

            StandIn.promote("remove_ads")
            await b.wait(for: "the second promoted message") { ms in
                ms.contains { $0["type"]?.stringValue == "promoted" && $0["productID"]?.stringValue == "remove_ads" }
            }
            #expect(b.messages(type: "promoted").last?["offer"] == .null)
            try await barrier(b)
            #expect(!StandIn.purchaseCalls.contains { $0.productID == "remove_ads" }, "ignored: not bought")
            b.close()
        }

        @Test("Promoted with \"promotedPurchases\": \"buy\": bought at once, an SDK key, origin store")
        func promotedBuy() async throws {
            let env = fresh()
            let (b, _) = try await launch(env, storekit: #""promotedPurchases":"buy""#)
            StandIn.promote("remove_ads")
            let r = try #require(await b.result("the promoted purchase") { $0["productID"]?.stringValue == "remove_ads" })
            #expect(r["origin"]?.stringValue == "store" && (r.key ?? 0) < 0)
            #expect(b.messages(type: "promoted").isEmpty)
            #expect(r["result"]?.stringValue == "0")
            #expect(StandIn.purchaseCalls.last?.productID == "remove_ads")
            #expect(StandIn.purchaseCalls.last?.appAccountToken == nil, "bought without a token")
            b.close()
            #expect(throws: IAPError.self) { _ = try StoreKitOptions.parse(.object(["promotedPurchases": .string("later")])) }
        }

        // MARK: 8. Refunds made while the app was closed

        /// With a history of 10,000 finished consumables before it
        /// (SKIncludeConsumableInAppPurchaseHistory keeps them in
        /// `Transaction.all`), the refunded one comes last: a scan with a cap
        /// (2,000, until issue 22) never reached it.
        @Test("A purchase refunded while the app was closed is reported at the next open, once, whatever its kind and however long ago; also after a history of 10,000",
              arguments: [("coins_100", 0, 0.0), ("coins_100", 10_000, 0.0), ("remove_ads", 0, 0.0), ("vip_monthly", 0, 0.0),
                          ("remove_ads", 0, 200.0)])
        func refundWhileClosed(product: String, history: Int, daysAway: Double) async throws {
            let env = fresh()
            if history > 0 {
                StandIn.includeConsumableHistory = true
                for _ in 0..<history { StandIn.seed("coins_100", finished: true) }
            }
            var (b, _) = try await launch(env)
            let key: Int64 = 1_810_000_000_070
            _ = try b.buy(product, key)
            let r = try #require(await b.result(key: key))
            let txn = try #require(r.transactionID.flatMap(UInt64.init))
            try b.confirm(key)
            await TestBridge.eventually("finished") { StandIn.isFinished(txn) }
            b.close()

            StandIn.refundWhileClosed(txn)
            // A player away for a season (the refund older than any scan window).
            if daysAway > 0 { StandIn.advanceClock(seconds: daysAway * 86_400) }
            (b, _) = try await launch(env)
            await b.wait(for: "the revoked message") { ms in
                ms.contains { $0["type"]?.stringValue == "revoked" && $0.transactionID == String(txn) }
            }
            let rv = try #require(b.messages(type: "revoked").first { $0.transactionID == String(txn) })
            #expect(rv["kind"]?.stringValue == (product == "coins_100" ? "consumable" : product == "remove_ads" ? "nonConsumable" : "autoRenewableSubscription"))
            try b.confirm(try #require(rv.key))
            #expect(b.c.flush() == nil)
            b.close()

            let finishes = StandIn.finishCalls.filter { $0 == txn }.count
            (b, _) = try await launch(env)
            try await barrier(b)
            #expect(b.messages(type: "revoked").isEmpty, "delivered once")
            // Finished long ago: the next launches ask StoreKit nothing more
            // of it (each finish() could wait finishTimeoutMs if StoreKit
            // hung). The finish queue runs in order: once a purchase
            // confirmed now is finished, any finish of the refund queued at
            // the open has run.
            let last = try #require(StandIn.externalPurchase("coins_100"))
            let lastKey = try #require(await b.result("the last purchase") { $0.transactionID == String(last) }?.key)
            try b.confirm(lastKey)
            #expect(b.c.flush() == nil)
            await TestBridge.eventually("the last purchase finished") { StandIn.isFinished(last) }
            #expect(StandIn.finishCalls.filter { $0 == txn }.count == finishes, "finish() called again at a later launch")
            b.close()
        }

        @Test("A purchase the game had not confirmed, refunded while the app was closed: StoreKit still lists it unfinished, and it is finished once the game confirmed its result and its refund")
        func unconfirmedRefundedWhileClosed() async throws {
            let env = fresh()
            var (b, _) = try await launch(env)
            let key: Int64 = 1_810_000_000_071
            _ = try b.buy("remove_ads", key)
            let r = try #require(await b.result(key: key))
            let txn = try #require(r.transactionID.flatMap(UInt64.init))
            b.close()  // killed before the confirm

            StandIn.refundWhileClosed(txn)
            (b, _) = try await launch(env)
            await b.wait(for: "the revoked message") { ms in
                ms.contains { $0["type"]?.stringValue == "revoked" && $0.transactionID == String(txn) }
            }
            for m in b.messages where ["7", "revoked"].contains(m["type"]?.stringValue ?? "") && m.transactionID == String(txn) {
                try b.confirm(try #require(m.key))
            }
            #expect(b.c.flush() == nil)
            await TestBridge.eventually("the refunded purchase finished") { StandIn.isFinished(txn) }
            b.close()
        }
    }
}
#endif
