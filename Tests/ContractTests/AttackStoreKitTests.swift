#if !canImport(StoreKit)
import Foundation
import IAPCore
@testable import IAPStoreKit
@testable import StoreKitStandIn
import Testing

extension StoreContract {
    /// Attacks on the StoreKit backend's subscription status and StoreKit
    /// messages (issue 13 part B), over the stand-in. A failure is a defect
    /// (see the review report).
    @Suite("Attack: StoreKit requests (stand-in)")
    struct AttackStoreKitTests {
        func launch(_ env: Env) async throws -> (TestBridge, StoreKitStore) {
            try await StoreKitBackend().launchStandIn(env)
        }

        static let vipGroup = StandInSubscription.vipGroup

        func subscribe(_ b: TestBridge) async throws { try await StandInSubscription.subscribe(b) }

        func lastGroup(_ b: TestBridge) -> JSONValue? { StandInSubscription.lastGroup(b) }

        @Test("billing retry as StoreKit reports it: willAutoRenew true with expirationReason billingError (the simulator says the same)")
        func expirationReasonWhileRenewing() async throws {
            let env = StoreKitBackend().freshEnv()
            let (b, _) = try await launch(env)
            try await subscribe(b)
            StandIn.setRenewal(group: Self.vipGroup, StandIn.Renewal(state: .inBillingRetryPeriod, willAutoRenew: true,
                                                                      expirationReason: .billingError, isInBillingRetry: true))
            await b.wait(for: "billing retry") { _ in self.lastGroup(b)?["state"]?.stringValue == "inBillingRetryPeriod" }
            let g = try #require(lastGroup(b))
            #expect(g["willAutoRenew"] == .bool(true) && g["expirationReason"]?.stringValue == "billingError")
            #expect(g["active"] == .bool(false))
            b.close()
        }

        @Test("the \"best\" of a group's statuses is one that grants access: a verified grace period beats an unverified subscribed")
        func bestPrefersVerified() async throws {
            let env = StoreKitBackend().freshEnv()
            let (b, _) = try await launch(env)
            try await subscribe(b)
            let real = try #require(try await Product.SubscriptionInfo.status(for: Self.vipGroup).first)
            let t = real.transaction.unsafePayloadValue
            let r = real.renewalInfo.unsafePayloadValue
            let forgedSubscribed = Product.SubscriptionInfo.Status(state: .subscribed, transaction: .unverified(t, .invalidSignature),
                                                                   renewalInfo: .unverified(r, .invalidSignature))
            let verifiedGrace = Product.SubscriptionInfo.Status(state: .inGracePeriod, transaction: .verified(t), renewalInfo: .verified(r))
            let best = StoreKitStatusMapping.best([forgedSubscribed, verifiedGrace], groupID: Self.vipGroup)
            #expect(best.grantsAccess, "best chose state \(best.state) verified \(best.verified): the player loses access")
            b.close()
        }

        @Test("a StoreKit message that arrives with no foreground scene is reported \"deferred\", not \"shown\", and is displayed (then reported shown) once a scene is in front")
        func shownWithoutScene() async throws {
            let env = StoreKitBackend().freshEnv()
            let (b, _) = try await launch(env)
            StandIn.screen = .backgroundOnly
            StandIn.sendMessage(.billingIssue)
            await b.wait(for: "the message") { ms in ms.contains { $0["type"]?.stringValue == "storeMessage" } }
            let m = try #require(b.messages(type: "storeMessage").first)
            // Shown at once is the default ("storeMessages": "show"), but no
            // scene is in front: the game is told it waits, and it waits.
            #expect(m["reason"]?.stringValue == "billingIssue")
            #expect(m["state"]?.stringValue == "deferred", "no scene in front, yet the game was told \(m["state"] ?? .null)")
            try? await Task.sleep(nanoseconds: 200_000_000)
            #expect(StandIn.displayedMessages.isEmpty, "displayed with no scene in front: \(StandIn.displayedMessages)")
            StandIn.screen = .foregroundWithKeyWindow
            try b.c.showStoreMessages()
            await b.wait(for: "shown") { _ in b.messages(type: "storeMessage").count == 2 }
            let all = b.messages(type: "storeMessage")
            #expect(all.map { $0["state"]?.stringValue ?? "" } == ["deferred", "shown"], "\(all)")
            #expect(all.map { $0["id"] } == [m["id"], m["id"]], "the same message, shown this time")
            #expect(StandIn.displayedMessages == ["billingIssue"],
                    "the game was told \"shown\" but StoreKit displayed \(StandIn.displayedMessages)")
            b.close()
        }

        @Test("deferred: iap_show_store_messages while no scene is in front reports \"deferred\" again and keeps the message; with a scene it is displayed and reported \"shown\"")
        func deferredShownWithoutScene() async throws {
            let env = StoreKitBackend().freshEnv()
            env.deferStoreMessages = true
            let (b, _) = try await launch(env)
            StandIn.sendMessage(.priceIncreaseConsent)
            await b.wait(for: "deferred") { ms in ms.contains { $0["type"]?.stringValue == "storeMessage" } }
            StandIn.screen = .noScene
            try b.c.showStoreMessages()
            await b.wait(for: "the answer with no scene") { _ in b.messages(type: "storeMessage").count == 2 }
            try? await Task.sleep(nanoseconds: 200_000_000)
            #expect(StandIn.displayedMessages.isEmpty, "displayed with no scene: \(StandIn.displayedMessages)")
            StandIn.screen = .foregroundWithKeyWindow
            try b.c.showStoreMessages()
            await b.wait(for: "shown") { _ in b.messages(type: "storeMessage").count == 3 }
            let states = b.messages(type: "storeMessage").map { $0["state"]?.stringValue ?? "" }
            #expect(states == ["deferred", "deferred", "shown"], "\(states)")
            #expect(StandIn.displayedMessages == ["priceIncreaseConsent"],
                    "states \(states) but displayed \(StandIn.displayedMessages)")
            b.close()
        }
    }
}
#endif
