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
    }
}
