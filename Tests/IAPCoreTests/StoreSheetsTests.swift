import Foundation
import IAPCore
import Testing

/// The system sheets (manage subscriptions, refund request, offer code) and
/// the app transaction on the simulated store, answering as a player would
/// (scripted with sheet_next).
@Suite("Sheets and app transaction")
struct StoreSheetsTests {
    static func of(_ ms: [JSONValue], _ type: String) -> [JSONValue] { ms.filter { $0["type"]?.stringValue == type } }

    static func buy(_ b: Bridge, _ product: String) throws -> (key: Int64, txn: String) {
        let k = try b.buy(product, 0)
        let r = try #require(b.drainResults().first { $0.keyValue == k })
        try b.confirm(k)
        return (k, r["transactionID"]?.stringValue ?? "")
    }

    @Test("refund: approved by default (success, then a \"revoked\" to confirm), cancelled, declined, unknown transaction")
    func refund() throws {
        let env = TestEnv()
        let b = try env.open()
        _ = b.drain()
        let (_, txn) = try Self.buy(b, "remove_ads")
        _ = b.drain()

        _ = try b.sim(#"{"op":"sheet_next","sheet":"refund","outcome":"cancel"}"#)
        try b.c.showSheet(.refund(transactionID: txn))
        var msgs = b.drain()
        #expect(Self.of(msgs, "sheet").first?["outcome"]?.stringValue == "userCancelled")
        #expect(Self.of(msgs, "revoked").isEmpty)

        _ = try b.sim(#"{"op":"sheet_next","sheet":"refund","outcome":"decline"}"#)
        try b.c.showSheet(.refund(transactionID: txn))
        msgs = b.drain()
        #expect(Self.of(msgs, "sheet").first?["outcome"]?.stringValue == "success", "submitted; Apple declines later")
        #expect(Self.of(msgs, "revoked").isEmpty)

        try b.c.showSheet(.refund(transactionID: txn))
        msgs = b.drain()
        let sheet = try #require(Self.of(msgs, "sheet").first)
        #expect(sheet["outcome"]?.stringValue == "success" && sheet["transactionID"]?.stringValue == txn)
        let revoked = try #require(Self.of(msgs, "revoked").first, "the granted refund arrives as a revocation")
        #expect(revoked["transactionID"]?.stringValue == txn)
        try b.confirm(try #require(revoked.keyValue))

        try b.c.showSheet(.refund(transactionID: txn))
        #expect(Self.of(b.drain(), "sheet").first?["outcome"]?.stringValue == "error", "already refunded")
        try b.c.showSheet(.refund(transactionID: "123"))
        let unknown = try #require(Self.of(b.drain(), "sheet").first)
        #expect(unknown["outcome"]?.stringValue == "error" && (unknown["message"]?.stringValue ?? "").contains("123"))
        b.close()
    }

    @Test("one sheet at a time: IAP_E_BUSY until the first answers; bad transaction IDs are refused before anything opens")
    func oneSheetAtATime() throws {
        let env = TestEnv()
        let b = try env.open()
        _ = b.drain()
        // The player keeps the first sheet up: every other sheet is refused.
        _ = try b.sim(#"{"op":"sheet_next","sheet":"manageSubscriptions","outcome":"hold"}"#)
        try b.c.showSheet(.manageSubscriptions)
        #expect(Self.of(b.drain(), "sheet").isEmpty, "still up")
        for other in [StoreSheet.offerCode, .manageSubscriptions, .refund(transactionID: "1")] {
            do {
                try b.c.showSheet(other)
                Issue.record("\(other.name) opened while a sheet was up")
            } catch let e {
                #expect(e.code == .busy && e.message.contains("manageSubscriptions"), "\(e)")
            }
        }
        _ = try b.sim(#"{"op":"sheet_close"}"#)
        let closed = Self.of(b.drain(), "sheet")
        #expect(closed.count == 1 && closed.first?["outcome"]?.stringValue == "dismissed")
        #expect(throws: IAPError.self, "nothing up any more") { _ = try b.sim(#"{"op":"sheet_close"}"#) }
        try b.c.showSheet(.offerCode)
        #expect(Self.of(b.drain(), "sheet").first?["sheet"]?.stringValue == "offerCode")
        for bad in ["", "12a", "-5", "1.5", String(repeating: "9", count: 21), "99999999999999999999"] {
            do {
                try b.c.showSheet(.refund(transactionID: bad))
                Issue.record("accepted transaction ID \"\(bad)\"")
            } catch let e {
                #expect(e.code == .invalidArgument, "\(bad): \(e)")
            }
        }
        try b.c.showSheet(.manageSubscriptions)
        #expect(Self.of(b.drain(), "sheet").count == 1, "a refused call left no sheet up")
        b.close()
    }

    @Test("manage subscriptions: the player turns auto-renew off; the status and the end of the subscription follow")
    func manageCancels() throws {
        let env = TestEnv()
        let b = try env.open()
        _ = b.drain()
        _ = try Self.buy(b, "vip_monthly")
        _ = b.drain()
        _ = try b.sim(#"{"op":"sheet_next","sheet":"manageSubscriptions","outcome":"cancel","productID":"vip_monthly"}"#)
        try b.c.showSheet(.manageSubscriptions)
        let msgs = b.drain()
        let g = try #require(Self.of(msgs, "subscription").last?["groups"]?.arrayValue?.first)
        #expect(g["willAutoRenew"] == .bool(false) && g["expirationReason"]?.stringValue == "autoRenewDisabled")
        #expect(g["state"]?.stringValue == "subscribed" && g["renewalDate"] == .null)
        #expect(Self.of(msgs, "sheet").last?["outcome"]?.stringValue == "dismissed")
        _ = try b.sim(#"{"op":"advance","seconds":\#(32 * 86_400)}"#)
        let after = b.drain()
        #expect(b.results(after).isEmpty, "no renewal")
        #expect(Self.of(after, "subscription").last?["groups"]?.arrayValue?.first?["state"]?.stringValue == "expired")
        b.close()
    }

    @Test("offer code: a redeemed code's purchase is a store-initiated \"7\" granted once; a dismissed sheet grants nothing")
    func offerCode() throws {
        let env = TestEnv()
        let b = try env.open()
        _ = b.drain()
        try b.c.showSheet(.offerCode)
        var msgs = b.drain()
        #expect(b.results(msgs).isEmpty && Self.of(msgs, "sheet").first?["outcome"]?.stringValue == "dismissed")
        _ = try b.sim(#"{"op":"sheet_next","sheet":"offerCode","outcome":"redeem","productID":"vip_monthly"}"#)
        try b.c.showSheet(.offerCode)
        msgs = b.drain()
        let r = try #require(b.results(msgs).first)
        #expect(r["origin"]?.stringValue == "store" && r["productID"]?.stringValue == "vip_monthly" && (r.keyValue ?? 0) < 0)
        try b.confirm(try #require(r.keyValue))
        b.close()
        let again = try env.open()
        #expect(again.drainResults().isEmpty, "confirmed: never delivered again")
        again.close()
        for bad in [#"{"op":"sheet_next","sheet":"offerCode","outcome":"redeem"}"#, #"{"op":"sheet_next","sheet":"nope","outcome":"dismiss"}"#,
                    #"{"op":"sheet_next","sheet":"refund","outcome":"dismiss"}"#] {
            let b2 = try env.open()
            #expect(throws: IAPError.self, "\(bad)") { _ = try b2.sim(bad) }
            b2.close()
        }
    }

    @Test("app transaction: the version and date the player first got the game survive updates and reinstalls; app_transaction sets them")
    func appTransaction() throws {
        let env = TestEnv()
        env.extraConfig = #","storeMessages":"show""#
        var b = try env.open()
        _ = b.drain()
        try b.c.appTransaction()
        let first = try #require(Self.of(b.drain(), "app").first)
        #expect(first["originalAppVersion"]?.stringValue == "1.0" && first["verified"] == .bool(true))
        let date = try #require(first["originalPurchaseDate"]?.int64Value)
        let appID = try #require(first["appTransactionID"]?.stringValue)
        #expect(appID.count >= 10 && appID.allSatisfy(\.isNumber), "\(appID)")
        #expect(first["originalPlatform"]?.stringValue == "iOS" && first["preorderDate"] == .null)
        b.close()
        env.reinstall()
        b = try env.open()
        _ = b.drain()
        try b.c.appTransaction()
        let again = try #require(Self.of(b.drain(), "app").first)
        #expect(again["originalPurchaseDate"]?.int64Value == date, "the store remembers, not the app")
        #expect(again["appTransactionID"]?.stringValue == appID, "the account's ID for the app survives a reinstall")
        _ = try b.sim(#"{"op":"app_transaction","originalAppVersion":"0.9","purchaseDate":1500000000000}"#)
        try b.c.appTransaction()
        let set = try #require(Self.of(b.drain(), "app").first)
        #expect(set["originalAppVersion"]?.stringValue == "0.9" && set["originalPurchaseDate"]?.int64Value == 1_500_000_000_000)
        #expect(set["appTransactionID"]?.stringValue == appID && set["preorderDate"] == .null)
        #expect(throws: IAPError.self) { _ = try b.sim(#"{"op":"app_transaction"}"#) }
        // A pre-order: reported, and kept across a restart.
        _ = try b.sim(#"{"op":"app_transaction","originalAppVersion":"0.9","preorderDate":1490000000000}"#)
        b.close()
        b = try env.open()
        _ = b.drain()
        try b.c.appTransaction()
        let pre = try #require(Self.of(b.drain(), "app").first)
        #expect(pre["preorderDate"]?.int64Value == 1_490_000_000_000 && pre["appTransactionID"]?.stringValue == appID)
        #expect(throws: IAPError.self) { _ = try b.sim(#"{"op":"app_transaction","originalAppVersion":"1","preorderDate":-5}"#) }
        b.close()
    }
}
