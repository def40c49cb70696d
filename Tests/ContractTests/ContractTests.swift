import Foundation
import IAPCore
import Testing

/// Every suite that plays the stand-in's App Store (one per process, like
/// StoreKit) runs inside this one, serialized.
@Suite("Store contract", .serialized)
enum StoreContract {}

extension StoreContract {
    /// docs/CONTRACT.md, C1–C8: the same test functions, the same expectations, for
    /// the simulated store and for the StoreKit backend over the stand-in. A
    /// difference is a bug in one of them.
    @Suite("C1-C8 on every store")
    struct DeliveryContract {
        static let backends = BackendKind.available

        func prepare(_ kind: BackendKind) -> (Backend, Env) { kind.prepared() }

        // MARK: C1

        @Test("C1: a charged purchase reaches the game after every restart until confirmed, also after a reinstall",
              arguments: backends)
        func noLostPurchase(_ kind: BackendKind) async throws {
            let (s, env) = prepare(kind)
            var b = try await s.open(env)
            let key: Int64 = 1_700_000_000_101
            #expect(try b.buy("coins_100", key) == key)
            let r = try #require(await b.result(key: key))
            #expect(r["result"]?.stringValue == "0")
            #expect(r["origin"]?.stringValue == "game")
            #expect(r["productID"]?.stringValue == "coins_100")
            #expect(r["price"]?.stringValue == "0.99")
            #expect(r["currency"]?.stringValue == "USD")
            let txn = try #require(r.transactionID)
            b.close()

            for launch in 1...2 {
                b = try await s.open(env)
                try await s.barrier(b)
                let again = b.results(transaction: txn)
                #expect(again.count == 1, "launch \(launch): exactly one \"7\" for the unconfirmed purchase")
                #expect(again.first?.key == key)
                #expect(again.first?["result"]?.stringValue == "0")
                b.close()
            }

            // A reinstall deletes the outbox; the store's unfinished queue
            // brings the purchase back, with the game's key (C1, C3, C5); a
            // reinstall is a new install, so its origin is "store" (C7).
            env.reinstall()
            b = try await s.open(env)
            let back = try #require(await b.result("the purchase after a reinstall") { $0.transactionID == txn })
            #expect(back.key == key)
            #expect(back["origin"]?.stringValue == "store")
            try b.confirm(key)
            b.close()

            b = try await s.open(env)
            try await s.barrier(b)
            #expect(b.results(transaction: txn).isEmpty, "confirmed: never again")
            b.close()
        }

        // MARK: C2

        @Test("C2: a result is in the outbox file at the moment the game can see it", arguments: backends)
        func durableBeforeVisible(_ kind: BackendKind) async throws {
            let (s, env) = prepare(kind)
            let b = try await s.open(env)
            let seen = Locked<[(key: Int64, inFile: Bool)]>([])
            let outboxPath = env.dataDir + "/" + Outbox.fileName
            let copies = env.root + "/copies"
            try POSIX.prepareDirectory(copies, role: "copies")
            // The callback runs the moment a message is handed over: read the
            // outbox file right then, as a crash at that instant would leave it.
            b.c.queue.setListener { text in
                let bytes = Array(String(cString: text).utf8)
                guard let m = try? JSONParser.parse(bytes: bytes), m["type"]?.stringValue == "7", let k = m.key else { return }
                let onDisk = ContractSupport.outboxHoldsKey(outboxPath, key: k, scratch: copies + "/\(k)")
                seen.withLock { $0.append((k, onDisk)) }
            }
            let keys: [Int64] = [1_700_000_000_201, 1_700_000_000_202, 1_700_000_000_203]
            for (i, k) in keys.enumerated() { _ = try b.buy(i == 1 ? "remove_ads" : "coins_100", k) }
            await TestBridge.eventually("three results through the callback") { seen.withLock { $0.count } >= 3 }
            for (k, inFile) in seen.withLock({ $0 }) {
                #expect(inFile, "the \"7\" with key \(k) was visible before its record was in the outbox file")
            }
            #expect(Set(seen.withLock { $0.map(\.key) }) == Set(keys))
            b.close()
        }

        // MARK: C3

        @Test("C3: the store transaction is finished only after the game confirms", arguments: backends)
        func finishAfterConfirm(_ kind: BackendKind) async throws {
            let (s, env) = prepare(kind)
            var b = try await s.open(env)
            let key: Int64 = 1_700_000_000_301
            _ = try b.buy("coins_100", key)
            let txn = try #require(await b.result(key: key)?.transactionID)
            try await s.barrier(b)
            #expect(try !s.isFinished(txn, b), "not finished before the confirm")
            b.close()

            b = try await s.open(env)
            try await s.barrier(b)
            #expect(try !s.isFinished(txn, b), "a restart does not finish it")
            try b.confirm(key)
            await TestBridge.eventually("the transaction finished after the confirm") { try s.isFinished(txn, b) }
            b.close()
        }

        // MARK: C4

        @Test("C4: a purchase the store delivers twice (update stream and purchase result) reaches the game once",
              arguments: backends)
        func deliveredTwice(_ kind: BackendKind) async throws {
            let (s, env) = prepare(kind)
            var b = try await s.open(env)
            let key: Int64 = 1_700_000_000_401
            try s.deliverNextPurchaseTwice(env)
            _ = try b.buy("coins_100", key)
            let txn = try #require(await b.result(key: key)?.transactionID)
            try await s.barrier(b)
            #expect(b.results(transaction: txn).count == 1)
            #expect(b.results(transaction: txn).first?.key == key, "the game's key, not an SDK key")
            try b.confirm(key)
            b.close()

            b = try await s.open(env)
            try await s.barrier(b)
            #expect(b.results(transaction: txn).isEmpty)
            b.close()
        }

        @Test("C4: a confirmed purchase the store delivers again (finish lost in a crash) is not shown again, and gets finished",
              arguments: backends)
        func redeliveredAfterConfirm(_ kind: BackendKind) async throws {
            let (s, env) = prepare(kind)
            var b = try await s.open(env)
            let key: Int64 = 1_700_000_000_402
            _ = try b.buy("remove_ads", key)
            let txn = try #require(await b.result(key: key)?.transactionID)
            env.faults.dropFinishes = true  // the app dies between the durable confirm and finish()
            try b.confirm(key)
            #expect(try !s.isFinished(txn, b))
            b.close()

            env.faults.dropFinishes = false
            for launch in 1...2 {
                b = try await s.open(env)
                try await s.barrier(b)
                #expect(b.results(transaction: txn).isEmpty, "launch \(launch): the confirmed purchase is not shown again")
                await TestBridge.eventually("the re-delivered transaction finished") { try s.isFinished(txn, b) }
                b.close()
            }
        }

        // MARK: C5

        @Test("C5: a purchase approved by a parent after a restart arrives with the game's key", arguments: backends)
        func askToBuyAcrossRestart(_ kind: BackendKind) async throws {
            let (s, env) = prepare(kind)
            var b = try await s.open(env)
            let key: Int64 = 1_700_000_000_501
            try s.askToBuyNext(b)
            _ = try b.buy("remove_ads", key)
            await b.wait(for: "the pending message") { ms in
                // StoreKit's .pending does not say it is Ask to Buy: "actionRequired".
                ms.contains { $0["type"]?.stringValue == "pending" && $0.key == key
                    && ["askToBuy", "actionRequired"].contains($0["reason"]?.stringValue ?? "") }
            }
            #expect(b.results(key: key).isEmpty, "nothing to grant while pending")
            b.close()

            b = try await s.open(env)
            try s.approvePending(b)
            let r = try #require(await b.result(key: key))
            #expect(r["result"]?.stringValue == "0")
            #expect(r["origin"]?.stringValue == "game")
            #expect(r["productID"]?.stringValue == "remove_ads")
            try b.confirm(key)
            b.close()
        }

        @Test("C5: a purchase charged just before a crash (the result never reached the SDK) arrives at the next launch with the game's key",
              arguments: backends)
        func chargedThenCrashed(_ kind: BackendKind) async throws {
            let (s, env) = prepare(kind)
            var b = try await s.open(env)
            let before = Set(try s.transactionIDs(b))
            let key: Int64 = 1_700_000_000_502
            env.faults.dropPurchaseResults = true
            _ = try b.buy("coins_100", key)
            await TestBridge.eventually("the store charged") { try s.transactionIDs(b).count == before.count + 1 }
            let txn = try #require(try s.transactionIDs(b).first { !before.contains($0) })
            #expect(b.results(key: key).isEmpty)
            b.close()

            env.faults.dropPurchaseResults = false
            b = try await s.open(env)
            let r = try #require(await b.result("the re-delivered purchase") { $0.transactionID == txn })
            #expect(r.key == key)
            #expect(r["origin"]?.stringValue == "game")
            #expect(r["result"]?.stringValue == "0")
            try b.confirm(key)
            b.close()
        }

        // MARK: C6

        @Test("C6: a transaction whose signature does not verify is never a success, never an entitlement",
              arguments: backends)
        func unverifiedIsNotSuccess(_ kind: BackendKind) async throws {
            let (s, env) = prepare(kind)
            var b = try await s.open(env)
            let txn = try s.forge("remove_ads", b)
            let r = try #require(await b.result("the forged transaction") { $0.transactionID == txn })
            #expect(r["result"]?.stringValue == "6")
            #expect(r["resultName"]?.stringValue == "unverified")
            let key = try #require(r.key)
            b.close()

            b = try await s.open(env)
            try await s.barrier(b)
            #expect(b.results(transaction: txn).allSatisfy { $0["result"]?.stringValue == "6" })
            let owned = b.messages(type: "entitlements").flatMap { $0["items"]?.arrayValue ?? [] }
            #expect(!owned.contains { $0["productID"]?.stringValue == "remove_ads" }, "not owned")
            try b.confirm(key)
            b.close()
        }

        // MARK: C7

        @Test("C7: a key is never handed out twice: a used click key (live, answered or confirmed) is replaced by a fresh one", arguments: backends)
        func duplicateKeyReplaced(_ kind: BackendKind) async throws {
            let (s, env) = prepare(kind)
            let b = try await s.open(env)
            let key: Int64 = 1_700_000_000_701
            #expect(try b.buy("coins_100", key) == key)
            let k2 = try b.buy("remove_ads", key)
            #expect(k2 > key, "a live key is not handed out again")
            _ = try #require(await b.result(key: key))
            let k3 = try b.buy("coins_100", key)
            #expect(k3 > k2)
            try b.confirm(key)
            let k4 = try b.buy("coins_100", key)
            #expect(k4 > k3, "not even once confirmed")
            for k in [k2, k3, k4] { _ = try #require(await b.result(key: k)) }
            #expect(b.results(key: key).count == 1, "one result per key")
            let auto1 = try b.buy("coins_100", 0)
            let auto2 = try b.buy("coins_100", -5)
            #expect(auto1 > 0 && auto2 > 0 && auto1 != auto2 && auto1 != key && auto2 != key)
            b.close()
        }

        @Test("C7: purchases the game did not start get a stable SDK key and say so", arguments: backends)
        func storeOriginKeys(_ kind: BackendKind) async throws {
            let (s, env) = prepare(kind)
            var b = try await s.open(env)
            let txn = try s.externalPurchase("remove_ads", b)
            let r = try #require(await b.result("the external purchase") { $0.transactionID == txn })
            #expect(r["origin"]?.stringValue == "store")
            let key = try #require(r.key)
            #expect(key < 0)
            b.close()

            env.reinstall()  // the outbox is gone: the key is derived again from the transaction
            b = try await s.open(env)
            let again = try #require(await b.result("the external purchase after a reinstall") { $0.transactionID == txn })
            #expect(again.key == key)
            #expect(again["origin"]?.stringValue == "store")
            try b.confirm(key)
            b.close()
        }

        @Test("C7: a subscription renewal gets an SDK key, not the key of the click that started the subscription",
              arguments: backends)
        func renewalKeys(_ kind: BackendKind) async throws {
            let (s, env) = prepare(kind)
            let b = try await s.open(env)
            let key: Int64 = 1_700_000_000_703
            _ = try b.buy("vip_monthly", key)
            let first = try #require(await b.result(key: key))
            let txn = try #require(first.transactionID)
            try b.confirm(key)
            try s.renew(txn, b)
            let renewal = try #require(await b.result("the renewal") {
                $0["originalTransactionID"]?.stringValue == first["originalTransactionID"]?.stringValue && $0.transactionID != txn
            })
            #expect(renewal["origin"]?.stringValue == "store")
            #expect((renewal.key ?? 0) < 0)
            #expect(renewal["result"]?.stringValue == "0")
            #expect(renewal["kind"]?.stringValue == "autoRenewableSubscription")
            b.close()
        }

        // MARK: C8

        @Test("C8: bad calls are answered with codes", arguments: backends)
        func badCalls(_ kind: BackendKind) async throws {
            let (s, env) = prepare(kind)
            let b = try await s.open(env)
            func code(_ body: () throws -> Void) -> IAPCode? {
                do { try body() } catch let e as IAPError { return e.code } catch { return nil }
                return .ok
            }
            #expect(code { _ = try b.buy("", 1) } == .invalidArgument)
            #expect(code { _ = try b.buy(String(repeating: "x", count: 300), 2) } == .invalidArgument)
            #expect(code { try b.c.confirm(key: 424_242) } == .unknownKey)
            #expect(code { try b.c.requestProducts(Array(repeating: "coins_100", count: 1001)) } == .invalidArgument)
            // A product the store said it does not sell.
            try b.c.requestProducts(["no_such_product"])
            await b.wait(for: "the product answer") { ms in ms.contains { $0["type"]?.stringValue == "999" } }
            #expect(code { _ = try b.buy("no_such_product", 3) } == .unknownProduct)
            b.close()
            #expect(code { _ = try b.buy("coins_100", 4) } == .closed)
            #expect(code { try b.c.confirm(key: 4) } == .closed)
            #expect(code { try b.c.restore() } == .closed)
            #expect(code { try b.c.requestProducts(["coins_100"]) } == .closed)
        }

        // MARK: The rest of the flow, same answers

        @Test("Several units of a consumable: the \"7\" carries the quantity and what they cost together", arguments: backends)
        func quantity(_ kind: BackendKind) async throws {
            let (s, env) = prepare(kind)
            let b = try await s.open(env)
            let key = try b.c.buy(productID: "coins_100", clickMs: 0, quantity: 2)
            let r = try #require(await b.result(key: key))
            #expect(r["result"]?.stringValue == "0" && r["quantity"] == .number("2"), "\(r)")
            #expect(r["price"]?.stringValue == "1.98", "what was paid for both: \(r)")
            try b.confirm(key)
            b.close()
        }

        @Test("Intro-offer eligibility in \"999\": true before the first subscription in its group, false after", arguments: backends)
        func introOfferEligibility(_ kind: BackendKind) async throws {
            let (s, env) = prepare(kind)
            let b = try await s.open(env)
            func eligibility(_ n: Int) async throws -> JSONValue? {
                try b.c.requestProducts(["vip_monthly"])
                await b.wait(for: "product answer \(n)") { _ in b.messages(type: "999").count >= n }
                let item = b.messages(type: "999")[n - 1]["items"]?.arrayValue?.first
                #expect(item?["introductoryOffer"] != .null, "vip_monthly has an introductory offer in the sample catalog")
                return item?["introOfferEligible"]
            }
            #expect(try await eligibility(1) == .bool(true))
            let key = try b.buy("vip_monthly", 0)
            _ = try #require(await b.result(key: key))
            #expect(try await eligibility(2) == .bool(false), "spent once subscribed in the group")
            b.close()
        }

        @Test("The storefront of each purchase on its \"7\" and entitlement: USA, then FRA after the player moved; the old one keeps USA",
              arguments: backends)
        func transactionStorefront(_ kind: BackendKind) async throws {
            let (s, env) = prepare(kind)
            let b = try await s.open(env)
            let first = try b.buy("remove_ads", 1_700_000_000_901)
            let r1 = try #require(await b.result(key: first))
            #expect(r1["storefront"]?.stringValue == "USA")
            try b.confirm(first)
            try s.changeStorefront("FRA", b)
            let second = try b.buy("vip_monthly", 1_700_000_000_902)
            let r2 = try #require(await b.result(key: second))
            #expect(r2["storefront"]?.stringValue == "FRA")
            try b.confirm(second)
            await b.wait(for: "the entitlements listing both") { ms in
                ms.contains { m in m["type"]?.stringValue == "entitlements" && (m["items"]?.arrayValue?.count ?? 0) >= 2 }
            }
            let items = try #require(b.messages(type: "entitlements").last { ($0["items"]?.arrayValue?.count ?? 0) >= 2 }?["items"]?.arrayValue)
            var by: [String: JSONValue] = [:]
            for i in items { if let p = i["productID"]?.stringValue { by[p] = i["storefront"] } }
            #expect(by["remove_ads"] == .string("USA") && by["vip_monthly"] == .string("FRA"))
            b.close()
        }

        @Test("Family Sharing in \"999\": familyShareable as the catalog says (remove_ads true, the rest false), on every store",
              arguments: backends)
        func familyShareable(_ kind: BackendKind) async throws {
            let (s, env) = prepare(kind)
            let b = try await s.open(env)
            try b.c.requestProducts(["coins_100", "remove_ads", "vip_monthly"])
            await b.wait(for: "the product answer") { ms in ms.contains { $0["type"]?.stringValue == "999" } }
            let items = try #require(b.messages(type: "999").first?["items"]?.arrayValue)
            var shareable: [String: JSONValue] = [:]
            for i in items { if let id = i["id"]?.stringValue { shareable[id] = i["familyShareable"] } }
            #expect(shareable == ["coins_100": .bool(false), "remove_ads": .bool(true), "vip_monthly": .bool(false)])
            b.close()
        }

        @Test("Products: the same \"999\" from every store for the same catalog", arguments: backends)
        func products(_ kind: BackendKind) async throws {
            let (s, env) = prepare(kind)
            let b = try await s.open(env)
            try b.c.requestProducts(["coins_100", "remove_ads", "vip_monthly", "season_pass", "coins_100", "nope"])
            await b.wait(for: "the product answer") { ms in ms.contains { $0["type"]?.stringValue == "999" } }
            let m = try #require(b.messages(type: "999").first)
            #expect(m["invalid"] == .array([.string("nope")]))
            #expect(m["products"] == .object(["coins_100": .string("0.99"), "remove_ads": .string("3.99"),
                                              "vip_monthly": .string("2.99"), "season_pass": .string("4.99")]))
            let items = m["items"]?.arrayValue ?? []
            #expect(items.compactMap { $0["id"]?.stringValue } == ["coins_100", "remove_ads", "vip_monthly", "season_pass"])
            let coins = try #require(items.first)
            #expect(coins["title"]?.stringValue == "100 Coins")
            #expect(coins["description"]?.stringValue == "A pouch of 100 gold coins 💰")
            #expect(coins["displayPrice"]?.stringValue == "$0.99")
            #expect(coins["currency"]?.stringValue == "USD")
            #expect(coins["kind"]?.stringValue == "consumable")
            let vip = try #require(items.first { $0["id"]?.stringValue == "vip_monthly" })
            #expect(vip["kind"]?.stringValue == "autoRenewableSubscription")
            #expect(vip["subscriptionPeriod"]?.stringValue == "P1M")
            #expect(vip["subscriptionGroupID"]?.stringValue == "6A0000A0")
            #expect(vip["introductoryOffer"] == .object(["paymentMode": .string("free"), "period": .string("P1W"),
                                                         "periods": .number("1"), "price": .string("0")]))
            let pass = try #require(items.first { $0["id"]?.stringValue == "season_pass" })
            #expect(pass["kind"]?.stringValue == "nonRenewingSubscription")
            #expect(pass["subscriptionPeriod"] == .null)
            b.close()
        }

        @Test("Failures: each store error reaches the game as the same result code, and nothing is charged",
              arguments: backends, [PurchaseFailure.cancelled, .networkError, .notAllowed, .productUnavailable, .unknown])
        func failures(_ kind: BackendKind, _ failure: PurchaseFailure) async throws {
            let (s, env) = prepare(kind)
            let b = try await s.open(env)
            let before = try s.transactionIDs(b)
            let key: Int64 = 1_700_000_000_801
            try s.failNext(failure, b)
            _ = try b.buy("coins_100", key)
            let r = try #require(await b.result(key: key))
            #expect(r["result"]?.stringValue == failure.resultCode)
            #expect(r["resultName"]?.stringValue == failure.rawValue)
            #expect(r["transactionID"]?.stringValue == "")
            #expect(try s.transactionIDs(b) == before)
            try b.confirm(key)
            b.close()
        }

        @Test("A store that errs after charging: the charge is the click's one success, under the click's key, once the game confirmed the failure; granted once, also after a restart (issue 21, item 6)",
              arguments: backends, [PurchaseFailure.unknown, .networkError])
        func chargedAfterError(_ kind: BackendKind, _ failure: PurchaseFailure) async throws {
            let (s, env) = prepare(kind)
            var b = try await s.open(env)
            let key: Int64 = 1_700_000_000_861
            try s.failNextThenCharge(failure, b)
            #expect(try b.buy("coins_100", key) == key)
            let r = try #require(await b.result(key: key))
            #expect(r["result"]?.stringValue == failure.resultCode)
            let text = r["message"]?.stringValue ?? ""
            #expect(text.contains("under this same key"), "the failure says what comes: \(text)")
            try b.confirm(key)  // the game handled the failure: nothing granted

            let txn = try s.chargeAfterFailure(b)
            let late = try #require(await b.result("the charge after the error") { $0.transactionID == txn })
            #expect(late.key == key, "the charge is not under the click's key")
            #expect(late["clickKey"] == nil)
            #expect(late["result"]?.stringValue == "0" && late["origin"]?.stringValue == "game")
            #expect(b.results(key: key).map { $0["result"]?.stringValue } == [failure.resultCode, "0"], "the failure, then the charge")
            b.close()

            // Not confirmed yet: the next launch delivers it again, under the
            // same key (the game ignores a key it granted): granted once.
            b = try await s.open(env)
            try await s.barrier(b)
            #expect(b.results(transaction: txn).map(\.key) == [key])
            #expect(b.results(key: key).count == 1, "the failure was confirmed: only the charge comes again")
            try b.confirm(key)
            await TestBridge.eventually("the charge finished") { try s.isFinished(txn, b) }
            b.close()

            b = try await s.open(env)
            try await s.barrier(b)
            #expect(b.results(transaction: txn).isEmpty, "delivered after its confirm")
            b.close()
        }

        @Test("Buying something owned again answers the owned transaction, alreadyOwned, with no new charge",
              arguments: backends)
        func alreadyOwned(_ kind: BackendKind) async throws {
            let (s, env) = prepare(kind)
            var b = try await s.open(env)
            let first: Int64 = 1_700_000_000_851, second: Int64 = 1_700_000_000_852
            _ = try b.buy("remove_ads", first)
            let r = try #require(await b.result(key: first))
            let txn = try #require(r.transactionID)
            #expect(r["alreadyOwned"] == .bool(false))
            try b.confirm(first)
            await TestBridge.eventually("finished") { try s.isFinished(txn, b) }
            b.close()
            // Two launches: the first forgets the finished transaction's tombstone.
            for _ in 1...2 {
                b = try await s.open(env)
                try await s.barrier(b)
                b.close()
            }
            b = try await s.open(env)
            let before = try s.transactionIDs(b).count
            // The key mark set before the restarts is above `second`: the SDK
            // hands out the next key instead (C7).
            let secondKey = try b.buy("remove_ads", second)
            let again = try #require(await b.result(key: secondKey))
            #expect(again.transactionID == txn)
            #expect(again["alreadyOwned"] == .bool(true))
            #expect(again["result"]?.stringValue == "0")
            #expect(try s.transactionIDs(b).count == before, "no new charge")
            try b.confirm(secondKey)
            b.close()
        }

        @Test("Entitlements: owned items at open and after a restore; a refund takes them away once", arguments: backends)
        func entitlementsRestoreRefund(_ kind: BackendKind) async throws {
            let (s, env) = prepare(kind)
            var b = try await s.open(env)
            let key: Int64 = 1_700_000_000_901
            _ = try b.buy("remove_ads", key)
            let txn = try #require(await b.result(key: key)?.transactionID)
            try b.confirm(key)
            b.close()

            func owns(_ m: JSONValue) -> Bool { (m["items"]?.arrayValue ?? []).contains { $0["productID"]?.stringValue == "remove_ads" } }
            b = try await s.open(env)
            #expect(b.messages(type: "entitlements").first.map(owns) == true, "owned at open")
            try b.c.restore()
            await b.wait(for: "the entitlements after a restore") { ms in
                ms.contains { $0["type"]?.stringValue == "entitlements" && $0["reason"]?.stringValue == "restore" && owns($0) }
            }

            try s.refund(txn, b)
            await b.wait(for: "the revocation") { ms in
                ms.contains { $0["type"]?.stringValue == "revoked" && $0.transactionID == txn }
            }
            let revoked = try #require(b.messages(type: "revoked").first { $0.transactionID == txn })
            #expect((revoked.key ?? 0) < 0)
            await b.wait(for: "entitlements without the refunded item") { ms in
                ms.contains { $0["type"]?.stringValue == "entitlements" && $0["reason"]?.stringValue == "change" && !owns($0) }
            }
            try b.confirm(try #require(revoked.key))
            b.close()

            b = try await s.open(env)
            try await s.barrier(b)
            #expect(b.messages(type: "revoked").isEmpty, "a confirmed revocation is not shown again")
            #expect(b.messages(type: "entitlements").first.map(owns) == false)
            b.close()
        }
    }
}

enum ContractSupport {
    /// Copies the outbox file aside and opens the copy: does it hold a live
    /// record with `key`?
    static func outboxHoldsKey(_ path: String, key: Int64, scratch: String) -> Bool {
        do {
            try POSIX.prepareDirectory(scratch, role: "scratch")
            guard let bytes = try POSIX.readFile(path) else { return false }
            try POSIX.replaceFile(scratch + "/" + Outbox.fileName, with: bytes, sync: false)
            let (box, _) = try Outbox.open(directory: scratch)
            defer { box.close() }
            return !box.records(withKey: key).isEmpty
        } catch {
            return false
        }
    }
}
