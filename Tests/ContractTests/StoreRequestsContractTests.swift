import Foundation
import IAPCore
import Testing

extension StoreContract {
    /// Issue 13, part B, on every store: subscription status, the refund
    /// sheet, the app transaction and StoreKit messages give the same
    /// messages on the simulator and on the StoreKit backend (stand-in).
    @Suite("Store requests on every store")
    struct StoreRequestsContract {
        static let backends = BackendKind.available

        func prepare(_ kind: BackendKind) -> (Backend, Env) { kind.prepared() }

        func group(_ m: JSONValue?) -> JSONValue? { m?["groups"]?.arrayValue?.first }

        @Test("subscription status: none before, subscribed after a purchase (also at the next open), billing retry announced as a change",
              arguments: backends)
        func subscriptionStatus(_ kind: BackendKind) async throws {
            let (s, env) = prepare(kind)
            var b = try await s.open(env)
            try b.c.subscriptionStatus(productIDs: ["vip_monthly", "coins_100", "no_such_product"])
            await b.wait(for: "the status answer") { ms in ms.contains { $0["type"]?.stringValue == "subscription" && $0["reason"]?.stringValue == "request" } }
            let none = try #require(b.messages(type: "subscription").first { $0["reason"]?.stringValue == "request" })
            #expect(group(none)?["state"]?.stringValue == "none" && group(none)?["active"] == .bool(false))
            #expect(Set(none["invalid"]?.arrayValue?.compactMap(\.stringValue) ?? []) == ["coins_100", "no_such_product"])

            let key = try b.buy("vip_monthly", 1_800_000_000_001)
            let r = try #require(await b.result(key: key))
            try b.confirm(key)
            try b.c.subscriptionStatus(productIDs: [])
            await b.wait(for: "the status after the purchase") { ms in
                ms.contains { $0["type"]?.stringValue == "subscription" && $0["groups"]?.arrayValue?.first?["state"]?.stringValue == "subscribed" }
            }
            let sub = try #require(b.messages(type: "subscription").last { self.group($0)?["state"]?.stringValue == "subscribed" })
            let g = try #require(group(sub))
            #expect(g["transactionID"] == r["transactionID"] && g["productID"]?.stringValue == "vip_monthly")
            #expect(g["willAutoRenew"] == .bool(true) && g["active"] == .bool(true) && g["verified"] == .bool(true))
            #expect(g["renewalProductID"]?.stringValue == "vip_monthly" && g["renewalDate"] == g["expiresDate"])
            b.close()

            b = try await s.open(env)
            await b.wait(for: "the status at open") { ms in
                ms.contains { $0["type"]?.stringValue == "subscription" && $0["reason"]?.stringValue == "open" }
            }
            #expect(group(b.messages(type: "subscription").first)?["state"]?.stringValue == "subscribed")
            try s.billingRetry(b)
            await b.wait(for: "billing retry announced") { ms in
                ms.contains { $0["type"]?.stringValue == "subscription" && $0["reason"]?.stringValue == "change"
                    && $0["groups"]?.arrayValue?.first?["state"]?.stringValue == "inBillingRetryPeriod" }
            }
            let retry = try #require(b.messages(type: "subscription").last)
            #expect(group(retry)?["active"] == .bool(false), "no access in billing retry")
            b.close()
        }

        @Test("refund sheet: cancelled, then submitted and granted (a \"revoked\" follows); one sheet message each", arguments: backends)
        func refundSheet(_ kind: BackendKind) async throws {
            let (s, env) = prepare(kind)
            let b = try await s.open(env)
            let key = try b.buy("remove_ads", 1_800_000_000_101)
            let txn = try #require(await b.result(key: key)?.transactionID)
            try b.confirm(key)

            try s.nextRefund(approve: false, b)
            try b.c.showSheet(.refund(transactionID: txn))
            await b.wait(for: "the cancelled sheet") { ms in ms.contains { $0["type"]?.stringValue == "sheet" } }
            #expect(b.messages(type: "sheet").first?["outcome"]?.stringValue == "userCancelled")

            try s.nextRefund(approve: true, b)
            try b.c.showSheet(.refund(transactionID: txn))
            await b.wait(for: "the refund") { ms in ms.contains { $0["type"]?.stringValue == "revoked" } }
            let sheets = b.messages(type: "sheet")
            #expect(sheets.count == 2 && sheets.last?["outcome"]?.stringValue == "success" && sheets.last?["transactionID"]?.stringValue == txn)
            #expect(b.messages(type: "revoked").first?["transactionID"]?.stringValue == txn)
            b.close()
        }

        @Test("app transaction: an \"app\" message with the original version and date", arguments: backends)
        func appTransaction(_ kind: BackendKind) async throws {
            let (s, env) = prepare(kind)
            let b = try await s.open(env)
            try b.c.appTransaction()
            await b.wait(for: "the app transaction") { ms in ms.contains { $0["type"]?.stringValue == "app" } }
            let app = try #require(b.messages(type: "app").first)
            #expect(!(app["originalAppVersion"]?.stringValue ?? "").isEmpty && app["verified"] == .bool(true))
            #expect((app["originalPurchaseDate"]?.int64Value ?? 0) > 0 && app["error"] == nil)
            // Issue 22: the account's stable ID for the app, the first platform, no pre-order.
            #expect(app["appTransactionID"]?.stringValue?.isEmpty == false)
            #expect(app["originalPlatform"]?.stringValue == "iOS" && app["preorderDate"] == .null)
            b.close()
        }

        @Test("a StoreKit message with \"storeMessages\": \"defer\" waits for iap_show_store_messages; shown once", arguments: backends)
        func deferredMessage(_ kind: BackendKind) async throws {
            let (s, env) = prepare(kind)
            env.deferStoreMessages = true
            let b = try await s.open(env)
            let key = try b.buy("vip_monthly", 1_800_000_000_201)
            _ = try #require(await b.result(key: key))
            try b.confirm(key)
            try s.priceIncreaseMessage(b)
            await b.wait(for: "the deferred message") { ms in ms.contains { $0["type"]?.stringValue == "storeMessage" } }
            let m = try #require(b.messages(type: "storeMessage").first)
            #expect(m["reason"]?.stringValue == "priceIncreaseConsent" && m["state"]?.stringValue == "deferred")
            try b.c.showStoreMessages()
            await b.wait(for: "the message shown") { ms in ms.contains { $0["type"]?.stringValue == "storeMessage" && $0["state"]?.stringValue == "shown" } }
            try b.c.showStoreMessages()
            try await s.barrier(b)
            #expect(b.messages(type: "storeMessage").count == 2, "deferred once, shown once")
            b.close()
        }
        @Test("\"store\": parental controls seen at open, a storefront change announced", arguments: backends)
        func storeStatus(_ kind: BackendKind) async throws {
            let (s, env) = prepare(kind)
            var b = try await s.open(env)
            try s.setPaymentsAllowed(false, b)
            b.close()
            b = try await s.open(env)
            await b.wait(for: "the store status at open") { ms in ms.contains { $0["type"]?.stringValue == "store" && $0["reason"]?.stringValue == "open" } }
            let open = try #require(b.messages(type: "store").first { $0["reason"]?.stringValue == "open" })
            #expect(open["canMakePayments"] == .bool(false) && open["storefront"]?.stringValue == "USA")
            try s.setPaymentsAllowed(true, b)
            try s.changeStorefront("FRA", b)
            await b.wait(for: "the storefront change") { ms in
                ms.contains { $0["type"]?.stringValue == "store" && $0["reason"]?.stringValue == "change" && $0["storefront"]?.stringValue == "FRA" }
            }
            b.close()
        }

        @Test("family sharing: a family member's purchase is a store-initiated \"7\" with ownershipType familyShared, and an entitlement",
              arguments: backends)
        func familySharing(_ kind: BackendKind) async throws {
            let (s, env) = prepare(kind)
            let b = try await s.open(env)
            try s.familyShare("remove_ads", b)
            let r = try #require(await b.result("the shared purchase") { $0["productID"]?.stringValue == "remove_ads" })
            #expect(r["ownershipType"]?.stringValue == "familyShared" && r["origin"]?.stringValue == "store" && (r.key ?? 0) < 0)
            await b.wait(for: "the entitlement") { ms in
                ms.contains { $0["type"]?.stringValue == "entitlements"
                    && ($0["items"]?.arrayValue ?? []).contains { $0["ownershipType"]?.stringValue == "familyShared" } }
            }
            b.close()
        }

        @Test("a purchase promoted on the App Store: a \"promoted\" message; the game's iap_buy buys it with the game's key",
              arguments: backends)
        func promoted(_ kind: BackendKind) async throws {
            let (s, env) = prepare(kind)
            let b = try await s.open(env)
            try s.promote("remove_ads", b)
            await b.wait(for: "the promoted message") { ms in ms.contains { $0["type"]?.stringValue == "promoted" } }
            #expect(b.messages(type: "promoted").first?["productID"]?.stringValue == "remove_ads")
            #expect(b.results.isEmpty, "nothing bought before the game decides")
            let key = try b.buy("remove_ads", 1_800_000_000_301)
            let r = try #require(await b.result(key: key))
            #expect(r["result"]?.stringValue == "0" && r["origin"]?.stringValue == "game")
            b.close()
        }

        @Test("manage subscriptions and offer code sheets: dismissed; a redeemed code's purchase is a store-initiated \"7\"",
              arguments: backends)
        func manageAndOfferCode(_ kind: BackendKind) async throws {
            let (s, env) = prepare(kind)
            let b = try await s.open(env)
            try b.c.showSheet(.manageSubscriptions)
            await b.wait(for: "the manage sheet") { ms in ms.contains { $0["type"]?.stringValue == "sheet" } }
            #expect(b.messages(type: "sheet").first?["sheet"]?.stringValue == "manageSubscriptions")
            #expect(b.messages(type: "sheet").first?["outcome"]?.stringValue == "dismissed")
            try s.nextOfferCode("vip_monthly", b)
            try b.c.showSheet(.offerCode)
            let r = try #require(await b.result("the redeemed subscription") { $0["productID"]?.stringValue == "vip_monthly" })
            #expect(r["origin"]?.stringValue == "store" && (r.key ?? 0) < 0)
            await b.wait(for: "the offer code sheet") { _ in b.messages(type: "sheet").count == 2 }
            #expect(b.messages(type: "sheet").last?["outcome"]?.stringValue == "dismissed")
            b.close()
        }
    }
}
