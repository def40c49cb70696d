#if !canImport(StoreKit)
import Foundation
import IAPCore
@testable import IAPStoreKit
import StoreKitStandIn
import Testing

extension StoreContract {
    /// Issue 13, part B, StoreKit only (over the stand-in): the OS-version
    /// switches, the renewal states StoreKit reports, and how StoreKit's
    /// errors and missing scenes reach the game.
    @Suite("StoreKit requests (stand-in)")
    struct StoreKitRequestsTests {
        func launch(_ env: Env) async throws -> (TestBridge, StoreKitStore) {
            try await StoreKitBackend().launchStandIn(env)
        }

        static let vipGroup = StandInSubscription.vipGroup

        func subscribe(_ b: TestBridge) async throws -> JSONValue { try await StandInSubscription.subscribe(b) }

        func lastGroup(_ b: TestBridge) -> JSONValue? { StandInSubscription.lastGroup(b) }

        @Test("iOS 15: the app transaction and the offer code sheet answer IAP_E_NOT_SUPPORTED; messages are left to StoreKit (no listener)")
        func iOS15() async throws {
            let env = StoreKitBackend().freshEnv()
            StandIn.osVersion = (15, 4)
            let (b, _) = try await launch(env)
            for (what, call) in [("app transaction", { try b.c.appTransaction() }), ("offer code", { try b.c.showSheet(.offerCode) })] as [(String, () throws -> Void)] {
                do {
                    try call()
                    Issue.record("\(what) accepted on iOS 15")
                } catch let e as IAPError {
                    #expect(e.code == .notSupported && e.message.contains("iOS 16"), "\(what): \(e)")
                }
            }
            #expect(StandIn.messageListeners == 0, "below iOS 16 there is no Message API: StoreKit shows its messages itself")
            // What iOS 15 has works: status, the manage and refund sheets.
            try b.c.subscriptionStatus(productIDs: ["vip_monthly"])
            try b.c.showSheet(.manageSubscriptions)
            await b.wait(for: "the status and the sheet") { ms in
                ms.contains { $0["type"]?.stringValue == "subscription" } && ms.contains { $0["type"]?.stringValue == "sheet" }
            }
            #expect(StandIn.sheetsShown == ["manageSubscriptions"])
            b.close()
        }

        @Test("grace period and price increase as StoreKit reports them (RenewalInfo), announced through Status.updates")
        func renewalStates() async throws {
            let env = StoreKitBackend().freshEnv()
            let (b, _) = try await launch(env)
            _ = try await subscribe(b)
            let graceEnd = Date().addingTimeInterval(16 * 86_400)
            StandIn.setRenewal(group: Self.vipGroup, StandIn.Renewal(state: .inGracePeriod, isInBillingRetry: true,
                                                                      gracePeriodExpirationDate: graceEnd))
            await b.wait(for: "grace period") { _ in self.lastGroup(b)?["state"]?.stringValue == "inGracePeriod" }
            let g = try #require(lastGroup(b))
            #expect(g["active"] == .bool(true), "VIP survives the grace period")
            #expect(g["gracePeriodExpiresDate"]?.int64Value == StoreKitMapping.ms(graceEnd))
            StandIn.setRenewal(group: Self.vipGroup, StandIn.Renewal(state: .subscribed, priceIncreaseStatus: .pending, renewalPrice: Decimal(string: "3.99")))
            await b.wait(for: "price increase pending") { _ in self.lastGroup(b)?["priceIncreaseStatus"]?.stringValue == "pending" }
            #expect(lastGroup(b)?["renewalPrice"]?.stringValue == "3.99")
            StandIn.setRenewal(group: Self.vipGroup, StandIn.Renewal(state: .expired, willAutoRenew: false,
                                                                      expirationReason: .didNotConsentToPriceIncrease))
            await b.wait(for: "expired") { _ in self.lastGroup(b)?["state"]?.stringValue == "expired" }
            let e = try #require(lastGroup(b))
            #expect(e["expirationReason"]?.stringValue == "didNotConsentToPriceIncrease" && e["renewalDate"] == .null)
            #expect(e["active"] == .bool(false) && e["willAutoRenew"] == .bool(false))
            b.close()
        }

        @Test("renewal info whose signature fails: verified false and not active, even when StoreKit says subscribed")
        func unverifiedStatus() async throws {
            let env = StoreKitBackend().freshEnv()
            let (b, _) = try await launch(env)
            _ = try await subscribe(b)
            StandIn.setRenewal(group: Self.vipGroup, StandIn.Renewal(state: .subscribed, verified: false))
            await b.wait(for: "the unverified status") { _ in self.lastGroup(b)?["verified"] == .bool(false) }
            #expect(lastGroup(b)?["state"]?.stringValue == "subscribed" && lastGroup(b)?["active"] == .bool(false))
            b.close()
        }

        @Test("a status lookup that fails is an \"error\" with op subscription, not a wrong state")
        func statusError() async throws {
            let env = StoreKitBackend().freshEnv()
            let (b, _) = try await launch(env)
            _ = try await subscribe(b)
            StandIn.statusError = StoreKitError.networkError(URLError(.notConnectedToInternet))
            try b.c.subscriptionStatus(productIDs: ["vip_monthly"])
            await b.wait(for: "the error") { ms in ms.contains { $0["type"]?.stringValue == "error" && $0["op"]?.stringValue == "subscription" } }
            await b.wait(for: "the answer without the group") { ms in ms.contains { $0["type"]?.stringValue == "subscription" && $0["reason"]?.stringValue == "request" } }
            let answer = try #require(b.messages(type: "subscription").last { $0["reason"]?.stringValue == "request" })
            #expect(answer["groups"]?.arrayValue?.isEmpty == true)
            StandIn.statusError = nil
            b.close()
        }

        @Test("sheets: no foreground scene, a duplicate refund request, a failed refund and a StoreKit error each answer outcome error with a sentence")
        func sheetErrors() async throws {
            let env = StoreKitBackend().freshEnv()
            let (b, _) = try await launch(env)
            let txn = try #require(try await subscribe(b).transactionID)
            func sheet(_ s: StoreSheet) async throws -> JSONValue {
                let before = b.messages(type: "sheet").count
                try b.c.showSheet(s)
                await b.wait(for: "a sheet answer") { _ in b.messages(type: "sheet").count > before }
                return try #require(b.messages(type: "sheet").last)
            }
            StandIn.screen = .backgroundOnly
            var m = try await sheet(.manageSubscriptions)
            #expect(m["outcome"]?.stringValue == "error" && (m["message"]?.stringValue ?? "").contains("scene"))
            StandIn.screen = .foregroundWithKeyWindow
            StandIn.nextRefundAnswer = .error(.duplicateRequest)
            m = try await sheet(.refund(transactionID: txn))
            #expect(m["outcome"]?.stringValue == "error" && (m["message"]?.stringValue ?? "").contains("already requested"))
            m = try await sheet(.refund(transactionID: "99"))
            #expect(m["outcome"]?.stringValue == "error", "not this player's transaction")
            StandIn.sheetError = StoreKitError.unknown
            m = try await sheet(.offerCode)
            #expect(m["outcome"]?.stringValue == "error")
            StandIn.sheetError = nil
            m = try await sheet(.manageSubscriptions)
            #expect(m["outcome"]?.stringValue == "dismissed", "the bridge opens sheets again after errors")
            b.close()
        }

        @Test("offer code: the redeemed purchase comes through Transaction.updates as a store-initiated \"7\"")
        func offerCode() async throws {
            let env = StoreKitBackend().freshEnv()
            let (b, _) = try await launch(env)
            StandIn.nextOfferCodeProduct = "vip_monthly"
            try b.c.showSheet(.offerCode)
            let r = try #require(await b.result("the redeemed subscription") { $0["productID"]?.stringValue == "vip_monthly" })
            #expect(r["origin"]?.stringValue == "store" && (r.key ?? 0) < 0)
            await b.wait(for: "the sheet") { ms in ms.contains { $0["type"]?.stringValue == "sheet" } }
            #expect(b.messages(type: "sheet").first?["outcome"]?.stringValue == "dismissed")
            b.close()
        }

        @Test("StoreKit messages shown at once by default: display(in:) is called and the game is told; a billing issue keeps its reason")
        func messagesShownAtOnce() async throws {
            let env = StoreKitBackend().freshEnv()
            let (b, _) = try await launch(env)
            StandIn.sendMessage(.billingIssue)
            await b.wait(for: "the message") { ms in ms.contains { $0["type"]?.stringValue == "storeMessage" } }
            let m = try #require(b.messages(type: "storeMessage").first)
            #expect(m["reason"]?.stringValue == "billingIssue" && m["state"]?.stringValue == "shown")
            await TestBridge.eventually("displayed") { StandIn.displayedMessages == ["billingIssue"] }
            #expect(StandIn.displayedMessages == ["billingIssue"])
            b.close()
        }

        @Test("app transaction: an unverified one says verified false; a failing one answers with error")
        func appTransactionCases() async throws {
            let env = StoreKitBackend().freshEnv()
            StandIn.appTransaction = StandIn.AppInfo(originalAppVersion: "1.2", appVersion: "3.0", verified: false)
            let (b, _) = try await launch(env)
            try b.c.appTransaction()
            await b.wait(for: "app") { ms in ms.contains { $0["type"]?.stringValue == "app" } }
            let a = try #require(b.messages(type: "app").first)
            #expect(a["originalAppVersion"]?.stringValue == "1.2" && a["appVersion"]?.stringValue == "3.0" && a["verified"] == .bool(false))
            StandIn.appTransaction = StandIn.AppInfo(error: StoreKitError.networkError(URLError(.notConnectedToInternet)))
            try b.c.appTransaction()
            await b.wait(for: "app error") { _ in b.messages(type: "app").count == 2 }
            let failed = b.messages(type: "app").last?["error"]?.stringValue ?? ""
            #expect(failed.contains("could not"), "\(failed)")
            b.close()
        }
    }
}
#endif
