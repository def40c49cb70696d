import Foundation
import IAPCore
import Testing

extension StoreContract {
    /// Issue 22, items 4 and 7, on every store. A game that reads only
    /// `"entitlements"` must stop granting a subscription the moment its
    /// status says it ended while the game runs (an expiry, a grace period
    /// running out), and be told nothing when the list did not change (a
    /// billing retry ending). An expired subscription is bought again; auto-
    /// renew turned on after the end revives nothing (Apple's rules).
    @Suite("Subscription life on every store")
    struct SubscriptionLifeContract {
        static let backends = BackendKind.available
        static let dayMs: Int64 = 86_400_000

        func prepare(_ kind: BackendKind) -> (Backend, Env) { kind.prepared() }

        static func lastGroup(_ b: TestBridge, reason: String? = nil) -> JSONValue? {
            b.messages(type: "subscription").last { reason == nil || $0["reason"]?.stringValue == reason }?["groups"]?.arrayValue?.first
        }

        static func ownsVIP(_ m: JSONValue) -> Bool {
            (m["items"]?.arrayValue ?? []).contains { $0["productID"]?.stringValue == "vip_monthly" }
        }

        static func entitlementChanges(_ b: TestBridge) -> [JSONValue] {
            b.messages(type: "entitlements").filter { $0["reason"]?.stringValue == "change" }
        }

        static func vipResults(_ b: TestBridge) -> [JSONValue] { b.results.filter { $0["productID"]?.stringValue == "vip_monthly" } }

        /// Buys vip_monthly and confirms it once the entitlements list it; its "7".
        func subscribe(_ b: TestBridge, key: Int64) async throws -> JSONValue {
            let k = try b.buy("vip_monthly", key)
            let r = try #require(await b.result(key: k))
            #expect(r["result"]?.stringValue == "0")
            try b.confirm(k)
            await b.wait(for: "the subscription among the entitlements") { _ in Self.entitlementChanges(b).contains(where: Self.ownsVIP) }
            return r
        }

        /// Asks for vip_monthly's status; the answer's group.
        func requestStatus(_ b: TestBridge) async throws -> JSONValue {
            let asked = b.messages(type: "subscription").filter { $0["reason"]?.stringValue == "request" }.count
            try b.c.subscriptionStatus(productIDs: ["vip_monthly"])
            await b.wait(for: "the status answer") { _ in
                b.messages(type: "subscription").filter { $0["reason"]?.stringValue == "request" }.count > asked
            }
            return try #require(Self.lastGroup(b, reason: "request"))
        }

        /// Waits until what the store reported so far is handled (a status
        /// change's entitlements come from another task on StoreKit).
        func settle(_ s: Backend, _ b: TestBridge) async throws {
            try await s.barrier(b)
            try? await Task.sleep(nanoseconds: 200_000_000)
            try await s.barrier(b)
        }

        // MARK: Item 4: entitlements follow every status change

        @Test("issue 22 item 4: a subscription that expires while the game runs: \"subscription\" expired and \"entitlements\" (change) without it, once",
              arguments: backends)
        func expiryWhileRunning(_ kind: BackendKind) async throws {
            let (s, env) = prepare(kind)
            let b = try await s.open(env)
            let r = try await subscribe(b, key: 1_830_000_000_001)
            try s.setAutoRenew(false, b)
            try await settle(s, b)
            let changes = Self.entitlementChanges(b).count
            #expect(Self.entitlementChanges(b).last.map(Self.ownsVIP) == true, "turning auto-renew off takes nothing away")

            try s.advance(days: 32, b)
            await b.wait(for: "the expiry announced") { _ in Self.lastGroup(b, reason: "change")?["state"]?.stringValue == "expired" }
            let g = try #require(Self.lastGroup(b, reason: "change"))
            #expect(g["transactionID"] == r["transactionID"] && g["active"] == .bool(false) && g["willAutoRenew"] == .bool(false))
            #expect(g["expirationReason"]?.stringValue == "autoRenewDisabled")
            await b.wait(for: "\"entitlements\" without the expired subscription") { _ in
                Self.entitlementChanges(b).dropFirst(changes).contains { !Self.ownsVIP($0) }
            }
            let all = b.messages
            let lost = all.firstIndex { $0["type"]?.stringValue == "entitlements" && $0["reason"]?.stringValue == "change" && !Self.ownsVIP($0) }
            let ended = all.firstIndex {
                $0["type"]?.stringValue == "subscription" && $0["groups"]?.arrayValue?.first?["state"]?.stringValue == "expired"
            }
            #expect(lost != nil && ended != nil && lost! < ended!, "the entitlements come just before the status that explains them")
            try await settle(s, b)
            #expect(Self.entitlementChanges(b).count == changes + 1, "one \"entitlements\" for one change")
            #expect(Self.entitlementChanges(b).last.map(Self.ownsVIP) == false)
            #expect(Self.vipResults(b).count == 1, "nothing renewed")
            b.close()
        }

        @Test("issue 22 item 4: the grace period keeps the subscription in \"entitlements\"; its end (billing retry) takes it away; the retry ending changes no entitlements",
              arguments: backends)
        func graceAndRetry(_ kind: BackendKind) async throws {
            let (s, env) = prepare(kind)
            env.billingGrace = true
            let b = try await s.open(env)
            _ = try await subscribe(b, key: 1_830_000_000_101)
            try await settle(s, b)
            let changes = Self.entitlementChanges(b).count

            try s.graceBegins(b)
            await b.wait(for: "the grace period announced") { _ in Self.lastGroup(b, reason: "change")?["state"]?.stringValue == "inGracePeriod" }
            #expect(Self.lastGroup(b, reason: "change")?["active"] == .bool(true))
            try await settle(s, b)
            #expect(Self.entitlementChanges(b).count == changes, "in the grace period the player keeps the subscription: nothing changed")
            #expect(b.messages(type: "entitlements").last.map(Self.ownsVIP) == true)

            try s.graceEnds(b)
            await b.wait(for: "billing retry announced") { _ in Self.lastGroup(b, reason: "change")?["state"]?.stringValue == "inBillingRetryPeriod" }
            #expect(Self.lastGroup(b, reason: "change")?["active"] == .bool(false))
            await b.wait(for: "\"entitlements\" without the lapsed subscription") { _ in
                Self.entitlementChanges(b).dropFirst(changes).contains { !Self.ownsVIP($0) }
            }
            try await settle(s, b)
            #expect(Self.entitlementChanges(b).count == changes + 1)

            try s.retryEnds(b)
            await b.wait(for: "the end of billing retry announced") { _ in Self.lastGroup(b, reason: "change")?["state"]?.stringValue == "expired" }
            #expect(Self.lastGroup(b, reason: "change")?["expirationReason"]?.stringValue == "billingError")
            try await settle(s, b)
            #expect(Self.entitlementChanges(b).count == changes + 1, "billing retry granted nothing: its end changes no entitlements")
            #expect(Self.vipResults(b).count == 1, "nothing was charged")
            b.close()
        }

        // MARK: A change of the subscription made outside the game

        /// The game killed before its confirm: `b` closed, the app
        /// reinstalled if asked (the outbox gone, the store's history kept),
        /// opened again; returns once transaction `txn` came again and what
        /// the store reported before is handled.
        func relaunch(_ s: Backend, _ env: Env, _ b: TestBridge, reinstall: Bool, until txn: String) async throws -> TestBridge {
            b.close()
            if reinstall { env.reinstall() }
            let again = try await s.open(env)
            await again.wait(for: "transaction \(txn) again") { _ in !again.results(transaction: txn).isEmpty }
            try await s.barrier(again)
            return again
        }

        @Test("a re-subscription made outside the game (it carries the purchase token of the click that started the subscription, as StoreKit's chain does) is the store's: its own negative key, origin store, the same after a restart and a reinstall; never a second success of the click's key",
              arguments: backends)
        func changeOutsideTheGame(_ kind: BackendKind) async throws {
            let (s, env) = prepare(kind)
            var b = try await s.open(env)
            let first = try await subscribe(b, key: 0)  // the SDK's key: the wall clock's milliseconds
            let k1 = try #require(first.key)
            try s.setAutoRenew(false, b)
            try s.advance(days: 40, b)
            #expect(try await requestStatus(b)["state"]?.stringValue == "expired")

            // The player subscribes again from the App Store's settings.
            let txn = try s.externalPurchase("vip_monthly", b)
            await b.wait(for: "the re-subscription's \"7\"") { _ in !b.results(transaction: txn).isEmpty }
            let again = try #require(b.results(transaction: txn).first)
            let k2 = try #require(again.key)
            #expect(again["result"]?.stringValue == "0" && again["origin"]?.stringValue == "store", "\(again)")
            #expect(k2 < 0 && k2 != k1, "a key of its own, not the click's \(k1): \(k2)")
            #expect(again["clickKey"] == nil)
            #expect(b.results(key: k1).count == 1, "one success under the click's key")

            // Unconfirmed at a restart, and after a reinstall (the outbox
            // gone, the store's history kept): the same key (C4, C11).
            for reinstall in [false, true] {
                b = try await relaunch(s, env, b, reinstall: reinstall, until: txn)
                #expect(b.results(transaction: txn).map(\.key) == [k2], "reinstalled \(reinstall)")
                #expect(b.results(key: k1).isEmpty)
            }
            try b.confirm(k2)
            b.close()
        }

        @Test("a subscription bought with iap_buy after the store's clock moved 3 days past the device's (the simulator's advance; a device clock days slow) is its click's, and unconfirmed it comes under that key again after a restart and after a reinstall",
              arguments: backends)
        func boughtAfterClockMovedKeepsItsKey(_ kind: BackendKind) async throws {
            let (s, env) = prepare(kind)
            var b = try await s.open(env)
            try s.advance(days: 3, b)
            let k = try b.buy("vip_monthly", 0)
            let r = try #require(await b.result(key: k))
            let txn = try #require(r.transactionID)
            #expect(r["result"]?.stringValue == "0" && r["origin"]?.stringValue == "game", "\(r)")
            for reinstall in [false, true] {
                b = try await relaunch(s, env, b, reinstall: reinstall, until: txn)
                #expect(b.results(transaction: txn).map(\.key) == [k], "reinstalled \(reinstall): \(b.results(transaction: txn))")
                #expect(b.messages(type: "unvouched").isEmpty, "\(b.messages(type: "unvouched"))")
            }
            try b.confirm(k)
            b.close()
        }

        @Test("an Ask to Buy of a subscription approved 1 or 3 days after its click is still the click's (the first transaction to carry its token), and unconfirmed at a restart it comes again under that key, not as an edited record",
              arguments: backends, [1, 3] as [Int64])
        func approvedLateKeepsItsKey(_ kind: BackendKind, days: Int64) async throws {
            let (s, env) = prepare(kind)
            var b = try await s.open(env)
            try s.askToBuyNext(b)
            let k = try b.buy("vip_monthly", 0)
            await b.wait(for: "the pending answer") { _ in b.messages(type: "pending").contains { $0.key == k } }
            try s.advance(days: days, b)
            try s.approvePending(b)
            let r = try #require(await b.result(key: k))
            let txn = try #require(r.transactionID)
            #expect(r["result"]?.stringValue == "0" && r["origin"]?.stringValue == "game", "\(r)")
            // Granted, killed before the confirm: the same key at the next launch.
            b = try await relaunch(s, env, b, reinstall: false, until: txn)
            #expect(b.results(transaction: txn).map(\.key) == [k], "\(b.results(transaction: txn))")
            #expect(b.messages(type: "unvouched").isEmpty && b.messages(type: "error").isEmpty, "\(b.messages)")
            try b.confirm(k)
            b.close()
        }

        // MARK: Item 7: an expired subscription is bought again

        @Test("issue 22 item 7: after expiry, auto-renew on changes nothing (still expired, nothing charged 40 days on); buying again starts a new period that day, one charge",
              arguments: backends)
        func expiredIsBoughtAgain(_ kind: BackendKind) async throws {
            let (s, env) = prepare(kind)
            let b = try await s.open(env)
            let first = try await subscribe(b, key: 1_830_000_000_201)
            let firstID = try #require(first.transactionID)
            try s.setAutoRenew(false, b)
            try s.advance(days: 32, b)
            let ended = try await requestStatus(b)
            #expect(ended["state"]?.stringValue == "expired" && ended["transactionID"]?.stringValue == firstID)
            let charged = try s.transactionIDs(b).count

            try s.setAutoRenew(true, b)
            let renewOn = try await requestStatus(b)
            #expect(renewOn["state"]?.stringValue == "expired", "auto-renew on after the end revives nothing")
            #expect(renewOn["willAutoRenew"] == .bool(false) && renewOn["active"] == .bool(false))
            #expect(renewOn["transactionID"]?.stringValue == firstID)

            try s.advance(days: 40, b)
            let later = try await requestStatus(b)
            #expect(later["state"]?.stringValue == "expired" && later["willAutoRenew"] == .bool(false))
            #expect(later["transactionID"]?.stringValue == firstID, "no renewal in the group")
            #expect(try s.transactionIDs(b).count == charged, "no renewal charged, none backdated")
            #expect(Self.vipResults(b).count == 1)
            #expect(b.messages(type: "entitlements").last.map(Self.ownsVIP) == false)

            let now = try s.storeNowMs(b)
            let k = try b.buy("vip_monthly", 1_830_000_000_202)
            let again = try #require(await b.result(key: k))
            #expect(again["result"]?.stringValue == "0" && again["alreadyOwned"] == .bool(false))
            let againID = try #require(again.transactionID)
            #expect(againID != firstID, "a new purchase")
            let bought = again["purchaseDate"]?.int64Value ?? 0
            #expect(bought >= now - 1_000 && bought <= now + 60_000, "the new period starts the day it is bought, not at the old end")
            #expect((again["expiresDate"]?.int64Value ?? 0) - bought >= 28 * Self.dayMs, "a whole month from the purchase")
            #expect(try s.transactionIDs(b).count == charged + 1, "one charge")
            try b.confirm(k)
            let active = try await requestStatus(b)
            #expect(active["state"]?.stringValue == "subscribed" && active["active"] == .bool(true) && active["willAutoRenew"] == .bool(true))
            #expect(active["transactionID"]?.stringValue == againID && active["expiresDate"] == again["expiresDate"])
            await b.wait(for: "the new subscription among the entitlements") { _ in
                Self.entitlementChanges(b).last.map { m in
                    (m["items"]?.arrayValue ?? []).contains { $0["transactionID"]?.stringValue == againID }
                } == true
            }
            b.close()
        }
    }
}
