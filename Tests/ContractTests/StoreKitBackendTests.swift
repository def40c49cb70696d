#if !canImport(StoreKit)
import Foundation
@_spi(Testing) import IAPCore
@testable import IAPStoreKit
import StoreKitStandIn
import Testing

extension StoreContract {
    /// What only the StoreKit backend has to get right: the mapping of every
    /// StoreKit answer and error, the token, the JWS, a `finish()` that hangs,
    /// the sweep at launch, `AppStore.sync()` only on restore, promoted
    /// purchases. Driven through the stand-in.
    @Suite("StoreKit backend over the stand-in")
    struct StoreKitBackendTests {
        func fresh() -> Env { StoreKitBackend().freshEnv() }

        /// An app launch on `env`: a new backend instance and coordinator.
        func launch(_ env: Env, finishTimeoutMs: Int = 2_000,
                    updatesRedeliver: Bool = true) async throws -> (TestBridge, StoreKitStore) {
            try await StoreKitBackend(finishTimeoutMs: finishTimeoutMs).launchStandIn(env, updatesRedeliver: updatesRedeliver)
        }

        func barrier(_ b: TestBridge) async throws { try await StoreKitBackend().barrier(b) }

        // MARK: Purchase answers and errors

        struct ErrorCase: Sendable, CustomTestStringConvertible {
            let name: String
            let error: any Error
            let expected: PurchaseFailure
            var testDescription: String { "\(name) -> \(expected.rawValue)" }
        }

        struct OtherError: Error {}

        /// Every case of StoreKitError (16.2:1265-1274) and
        /// Product.PurchaseError (16.2:821-835), plus what else can be thrown.
        static let errors: [ErrorCase] = [
            ErrorCase(name: "StoreKitError.unknown", error: StoreKitError.unknown, expected: .unknown),
            ErrorCase(name: "StoreKitError.userCancelled", error: StoreKitError.userCancelled, expected: .cancelled),
            ErrorCase(name: "StoreKitError.networkError", error: StoreKitError.networkError(URLError(.timedOut)), expected: .networkError),
            ErrorCase(name: "StoreKitError.systemError", error: StoreKitError.systemError(OtherError()), expected: .unknown),
            ErrorCase(name: "StoreKitError.notAvailableInStorefront", error: StoreKitError.notAvailableInStorefront, expected: .productUnavailable),
            ErrorCase(name: "StoreKitError.notEntitled", error: StoreKitError.notEntitled, expected: .notAllowed),
            ErrorCase(name: "PurchaseError.invalidQuantity", error: Product.PurchaseError.invalidQuantity, expected: .unknown),
            ErrorCase(name: "PurchaseError.productUnavailable", error: Product.PurchaseError.productUnavailable, expected: .productUnavailable),
            ErrorCase(name: "PurchaseError.purchaseNotAllowed", error: Product.PurchaseError.purchaseNotAllowed, expected: .notAllowed),
            ErrorCase(name: "PurchaseError.ineligibleForOffer", error: Product.PurchaseError.ineligibleForOffer, expected: .productUnavailable),
            ErrorCase(name: "PurchaseError.invalidOfferIdentifier", error: Product.PurchaseError.invalidOfferIdentifier, expected: .unknown),
            ErrorCase(name: "PurchaseError.invalidOfferPrice", error: Product.PurchaseError.invalidOfferPrice, expected: .unknown),
            ErrorCase(name: "PurchaseError.invalidOfferSignature", error: Product.PurchaseError.invalidOfferSignature, expected: .unknown),
            ErrorCase(name: "PurchaseError.missingOfferParameters", error: Product.PurchaseError.missingOfferParameters, expected: .unknown),
            ErrorCase(name: "URLError", error: URLError(.notConnectedToInternet), expected: .networkError),
            ErrorCase(name: "another error", error: OtherError(), expected: .unknown),
        ]

        @Test("Every error a purchase can throw reaches the game as the simulator's result code for it", arguments: errors)
        func purchaseErrors(_ c: ErrorCase) async throws {
            #expect(StoreKitMapping.failure(for: c.error) == c.expected)
            let env = fresh()
            let (b, _) = try await launch(env)
            StandIn.nextPurchases(.failure(c.error))
            let key: Int64 = 1_800_000_000_001
            _ = try b.buy("coins_100", key)
            let r = try #require(await b.result(key: key))
            #expect(r["result"]?.stringValue == c.expected.resultCode)
            #expect(r["resultName"]?.stringValue == c.expected.rawValue)
            #expect(StandIn.ledger.isEmpty, "nothing charged")
            b.close()
        }

        @Test("The purchase carries the click key in appAccountToken (C5)")
        func tokenCarriesKey() async throws {
            let env = fresh()
            let (b, _) = try await launch(env)
            let key: Int64 = 1_800_000_000_002
            _ = try b.buy("remove_ads", key)
            _ = try #require(await b.result(key: key))
            let uuid = try #require(StandIn.purchaseCalls.last?.appAccountToken)
            #expect(uuid.uuidString == PurchaseToken(key: key, install: b.c.install).uuidString)
            #expect(PurchaseToken(uuidString: uuid.uuidString)?.key == key)
            #expect(PurchaseToken(uuidString: uuid.uuidString)?.install == b.c.install)
            #expect(StandIn.ledger.last?.appAccountToken == uuid)
            b.close()
        }

        @Test("A purchase answered .success(.unverified) is result 6, never 0; confirmed, it is never finished (C6)")
        func unverifiedPurchase() async throws {
            let env = fresh()
            let (b, _) = try await launch(env)
            StandIn.nextPurchases(.unverified(.invalidSignature))
            let key: Int64 = 1_800_000_000_003
            _ = try b.buy("remove_ads", key)
            let r = try #require(await b.result(key: key))
            #expect(r["result"]?.stringValue == "6")
            #expect(r["resultName"]?.stringValue == "unverified")
            let txn = try #require(r.transactionID.flatMap(UInt64.init))
            try b.confirm(key)
            #expect(b.c.flush() == nil)
            try await barrier(b)
            #expect(!StandIn.isFinished(txn) && !StandIn.finishCalls.contains(txn), "left unfinished for StoreKit to re-check")
            b.close()
        }

        @Test("Every result carries the JWS of its verification result")
        func jws() async throws {
            let env = fresh()
            let (b, _) = try await launch(env)
            let key: Int64 = 1_800_000_000_004
            _ = try b.buy("coins_100", key)
            let r = try #require(await b.result(key: key))
            let parts = try #require(r["jws"]?.stringValue).split(separator: ".")
            #expect(parts.count == 3)
            var payload = String(parts[1]).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            while payload.count % 4 != 0 { payload += "=" }
            let text = String(decoding: Data(base64Encoded: payload) ?? Data(), as: UTF8.self)
            #expect(text.contains("\"transactionId\":\"\(try #require(r.transactionID))\""))
            b.close()
        }

        @Test("Environment: the transaction's App Store environment, lowercased")
        func environment() async throws {
            let env = fresh()
            let (b, _) = try await launch(env)
            _ = try b.buy("coins_100", 1_800_000_000_005)
            #expect(await b.result(key: 1_800_000_000_005)?["environment"]?.stringValue == "xcode")
            StandIn.environment = "Sandbox"
            _ = try b.buy("coins_100", 1_800_000_000_006)
            #expect(await b.result(key: 1_800_000_000_006)?["environment"]?.stringValue == "sandbox")
            b.close()
        }

        @Test("Pending (Ask to Buy) is reported once; a declined request produces no transaction and no result")
        func pendingThenDeclined() async throws {
            let env = fresh()
            let (b, _) = try await launch(env)
            StandIn.nextPurchases(.pending)
            let key: Int64 = 1_800_000_000_007
            _ = try b.buy("remove_ads", key)
            await b.wait(for: "the pending message") { ms in ms.contains { $0["type"]?.stringValue == "pending" && $0.key == key } }
            StandIn.declinePending()
            try await barrier(b)
            #expect(b.results(key: key).isEmpty)
            #expect(b.messages(type: "pending").count == 1)
            b.close()
        }

        @Test("A product never requested is looked up at purchase; one the App Store does not sell ends as result 5")
        func unknownProductWithoutRequest() async throws {
            let env = fresh()
            let (b, _) = try await launch(env)
            let key: Int64 = 1_800_000_000_008
            #expect(try b.buy("no_such_product", key) == key)
            let r = try #require(await b.result(key: key))
            #expect(r["result"]?.stringValue == PurchaseFailure.productUnavailable.resultCode)
            try b.confirm(key)
            // Known now: refused at once, as after a product request.
            #expect { _ = try b.buy("no_such_product", key + 1) } throws: { ($0 as? IAPError)?.code == .unknownProduct }
            b.close()
        }

        @Test("A product request that fails answers \"999\" with an error")
        func productsError() async throws {
            let env = fresh()
            let (b, _) = try await launch(env)
            StandIn.productsError = StoreKitError.networkError(URLError(.notConnectedToInternet))
            try b.c.requestProducts(["coins_100"])
            await b.wait(for: "the product answer") { ms in ms.contains { $0["type"]?.stringValue == "999" } }
            let m = try #require(b.messages(type: "999").first)
            let error = m["error"]?.stringValue ?? ""
            #expect(!error.isEmpty)
            #expect(m["items"] == .array([]))
            b.close()
        }

        // MARK: Delivery

        @Test("The same transaction again through updates, before or after the confirm, is shown once; a confirmed one is finished again")
        func redeliveredInSession() async throws {
            let env = fresh()
            let (b, _) = try await launch(env)
            let key: Int64 = 1_800_000_000_009
            _ = try b.buy("coins_100", key)
            let txn = try #require(await b.result(key: key)?.transactionID.flatMap(UInt64.init))
            StandIn.redeliver(txn)  // the answer first, then the update stream
            try await barrier(b)
            #expect(b.results(transaction: String(txn)).count == 1)
            #expect(!StandIn.finishCalls.contains(txn), "no finish before the confirm (C3)")
            try b.confirm(key)
            await TestBridge.eventually("finished") { StandIn.isFinished(txn) }
            StandIn.redeliver(txn)
            try await barrier(b)
            #expect(b.results(transaction: String(txn)).count == 1, "never again after the confirm (C4)")
            await TestBridge.eventually("finished again for the re-delivery") { StandIn.finishCalls.filter { $0 == txn }.count == 2 }
            b.close()
        }

        @Test("Unfinished transactions are swept at open even when the update stream's launch delivery was missed")
        func sweepAtOpen() async throws {
            let env = fresh()
            let key: Int64 = 1_800_000_000_010
            let txn = try #require(StandIn.seed("coins_100", appAccountToken: UUID(uuidString: PurchaseToken(key: key).uuidString),
                                                finished: false))
            var (b, _) = try await launch(env, updatesRedeliver: false)
            let r = try #require(await b.result(key: key))
            #expect(r.transactionID == String(txn))
            #expect(r["origin"]?.stringValue == "game")
            env.faults.dropFinishes = true
            try b.confirm(key)
            b.close()

            env.faults.dropFinishes = false
            (b, _) = try await launch(env, updatesRedeliver: false)
            try await barrier(b)
            #expect(b.results(transaction: String(txn)).isEmpty, "the tombstone recognizes the swept transaction")
            await TestBridge.eventually("finished by the sweep's re-delivery") { StandIn.isFinished(txn) }
            b.close()
        }

        @Test("iap_close cancels and waits for every task of the StoreKit backend: none left running, no event after (C8)")
        func closeEndsTasks() async throws {
            let env = fresh()
            let (b, store) = try await launch(env)
            let key: Int64 = 1_800_000_000_021
            _ = try b.buy("coins_100", key)
            _ = try #require(await b.result(key: key))
            try b.confirm(key)
            try b.c.requestProducts(["coins_100"])
            try b.c.restore()
            #expect(store.runningTaskCount > 0, "the update listener runs while the bridge is open")
            b.close()
            #expect(store.runningTaskCount == 0, "a task of the closed bridge still runs")
            #expect(store.runningFinishCount == 0, "a finish task or a time limit's timer of the closed bridge still runs")
        }

        @Test("a purchase whose payment sheet was still up at iap_close reaches the bridge the game opens next in the same process, with its key (StoreKit answers it only to the purchase call)")
        func purchaseAnsweredAfterClose() async throws {
            let env = fresh()
            var (b, _) = try await launch(env)
            let key: Int64 = 1_800_000_000_041
            StandIn.nextPurchases(.sheetHeld)
            _ = try b.buy("coins_100", key)
            await TestBridge.eventually("the purchase call was made") { StandIn.purchaseCalls.count > 0 }
            b.close()   // the sheet is still up: the close cannot cancel it
            (b, _) = try await launch(env)   // the same process: no launch re-delivery
            try await barrier(b)
            StandIn.closeHeldSheets()         // the player pays now
            let r = try #require(await b.result(key: key), "the purchase answered after the close never reached the open bridge")
            #expect(r["result"]?.stringValue == "0" && r["origin"]?.stringValue == "game")
            try b.confirm(key)
            let txn = try #require(r.transactionID.flatMap(UInt64.init))
            await TestBridge.eventually("finished after the confirm") { StandIn.isFinished(txn) }
            b.close()
        }

        @Test("a purchase answered while the close makes its last commit (the store stopped reporting, the bridge not gone yet) waits for the next bridge of the process instead of reaching the closing one")
        func purchaseAnsweredDuringClose() async throws {
            let env = fresh()
            var (b, store) = try await launch(env)
            let key: Int64 = 1_800_000_000_042
            StandIn.nextPurchases(.sheetHeld)
            _ = try b.buy("coins_100", key)
            await TestBridge.eventually("the purchase call was made") { StandIn.purchaseCalls.count > 0 }
            store.stopReporting()            // the close's first step
            StandIn.closeHeldSheets()         // the player pays in that window
            try await Task.sleep(nanoseconds: 200_000_000)
            #expect(b.results(key: key).isEmpty, "reported to a bridge that is closing")
            b.close()
            (b, _) = try await launch(env)
            let r = try #require(await b.result(key: key), "the purchase answered during the close never reached the next bridge")
            #expect(r["result"]?.stringValue == "0")
            try b.confirm(key)
            b.close()
        }

        @Test("iap_close with a finish() that hangs: the close's own last finish is given up within the close's limit, and nothing of the bridge runs after (C8): no finish task, no time limit's timer; the next launch finishes it")
        func closeWithHangingFinish() async throws {
            let env = fresh()
            var (b, store) = try await launch(env)   // finishes may take 10 s (the default limit)
            let key: Int64 = 1_800_000_000_031
            _ = try b.buy("coins_100", key)
            let txn = try #require(await b.result(key: key)?.transactionID.flatMap(UInt64.init))
            StandIn.finishHangs = true
            try b.confirm(key)
            await TestBridge.eventually("finish() called") { StandIn.finishCalls.contains(txn) }
            let t0 = SDKThread.nowMs()
            b.close()
            let closeMs = SDKThread.nowMs() - t0
            // A liveness bound, not a timing goal: the finish's own limit is 10 s.
            #expect(closeMs < 8_000, "iap_close waited \(closeMs) ms for a finish() that never returns")
            #expect(store.runningTaskCount == 0 && store.runningFinishCount == 0,
                    "after iap_close: \(store.runningTaskCount) store tasks, \(store.runningFinishCount) finish tasks or timers still running")
            #expect(!StandIn.isFinished(txn))
            StandIn.finishHangs = false
            (b, store) = try await launch(env)
            try await barrier(b)
            #expect(b.results(transaction: String(txn)).isEmpty, "confirmed: not shown again (C4)")
            await TestBridge.eventually("finished at the next launch") { StandIn.isFinished(txn) }
            b.close()
            StandIn.releaseHungFinishes(takeEffect: false)
        }

        @Test("A finish() that never returns does not wedge the bridge; the transaction is finished at the next launch")
        func hangingFinish() async throws {
            let env = fresh()
            var (b, store) = try await launch(env, finishTimeoutMs: 1000)  // B's finish, on a busy test machine, must not time out too
            let keyA: Int64 = 1_800_000_000_011, keyB: Int64 = 1_800_000_000_012
            _ = try b.buy("coins_100", keyA)
            _ = try b.buy("coins_100", keyB)
            let a = try #require(await b.result(key: keyA)?.transactionID.flatMap(UInt64.init))
            let bTxn = try #require(await b.result(key: keyB)?.transactionID.flatMap(UInt64.init))

            StandIn.finishHangs = true
            try b.confirm(keyA)
            await TestBridge.eventually("finish() called for A") { StandIn.finishCalls.contains(a) }
            StandIn.finishHangs = false
            try b.confirm(keyB)
            await TestBridge.eventually("B finished although A's finish() never returned") { StandIn.isFinished(bTxn) }
            #expect(!StandIn.isFinished(a))
            #expect(store.finishTimeoutCount == 1)
            await b.wait(for: "an error naming the finish that timed out") { ms in
                ms.contains { $0["type"]?.stringValue == "error" && ($0["message"]?.stringValue ?? "").contains(String(a)) }
            }
            // Still usable.
            _ = try b.buy("remove_ads", 1_800_000_000_013)
            #expect(await b.result(key: 1_800_000_000_013)?["result"]?.stringValue == "0")
            try b.confirm(1_800_000_000_013)
            b.close()

            (b, store) = try await launch(env)
            try await barrier(b)
            #expect(b.results(transaction: String(a)).isEmpty, "confirmed: not shown again (C4)")
            #expect(b.results(transaction: String(bTxn)).isEmpty)
            await TestBridge.eventually("A finished at the next launch") { StandIn.isFinished(a) }
            b.close()
            StandIn.releaseHungFinishes(takeEffect: false)
        }

        @Test("Restore calls AppStore.sync() (and opening never does); a failed sync is an error for op restore")
        func restore() async throws {
            let env = fresh()
            let (b, _) = try await launch(env)
            try await barrier(b)
            #expect(StandIn.syncCount == 0, "sync shows a sign-in prompt: only on the player's request")
            try b.c.restore()
            await b.wait(for: "the restore entitlements") { ms in
                ms.contains { $0["type"]?.stringValue == "entitlements" && $0["reason"]?.stringValue == "restore" }
            }
            #expect(StandIn.syncCount == 1)
            StandIn.syncError = StoreKitError.userCancelled
            try b.c.restore()
            await b.wait(for: "the restore error") { ms in
                ms.contains { $0["type"]?.stringValue == "error" && $0["op"]?.stringValue == "restore" }
            }
            #expect(b.messages.filter { $0["type"]?.stringValue == "entitlements" && $0["reason"]?.stringValue == "restore" }.count == 1)
            b.close()
        }

        @Test("Entitlements: owned and verified only; never consumables, unverified or revoked ones")
        func entitlementsFilter() async throws {
            let env = fresh()
            _ = StandIn.seed("remove_ads", finished: true)
            _ = StandIn.seed("season_pass", finished: true, verified: false)
            let refunded = try #require(StandIn.seed("vip_yearly", finished: true))
            StandIn.refund(refunded)
            _ = StandIn.seed("coins_100", finished: true)
            let (b, _) = try await launch(env)
            let open = try #require(b.messages(type: "entitlements").first)
            #expect((open["items"]?.arrayValue ?? []).compactMap { $0["productID"]?.stringValue } == ["remove_ads"])
            b.close()
        }

        @Test("Closing the bridge stops listening to StoreKit")
        func stopListening() async throws {
            let env = fresh()
            let (b, _) = try await launch(env)
            #expect(StandIn.updateListeners == 1 && StandIn.intentListeners == 1)
            b.close()
            await TestBridge.eventually("the listeners gone") { StandIn.updateListeners == 0 && StandIn.intentListeners == 0 }
        }

        @Test("simulate is not supported on StoreKit")
        func simulateNotSupported() async throws {
            let env = fresh()
            let (b, _) = try await launch(env)
            #expect { _ = try b.c.simulate(.object(["op": .string("transactions")])) } throws: {
                ($0 as? IAPError)?.code == .notSupported
            }
            b.close()
        }

        // MARK: Pure parts

        @Test("Renewals before iOS 17 (no Transaction.reason): reasonStringRepresentation says RENEWAL")
        func renewalFallback() {
            #expect(StoreKitMapping.isRenewal(reasonString: "RENEWAL"))
            #expect(!StoreKitMapping.isRenewal(reasonString: "PURCHASE"))
            #expect(!StoreKitMapping.isRenewal(reasonString: ""))
        }

        @Test("The \"storekit\" config object is checked strictly")
        func options() throws {
            #expect(try StoreKitOptions.parse(nil).finishTimeoutMs == 10_000)
            #expect(try StoreKitOptions.parse(.object(["finishTimeoutMs": .number("250")])).finishTimeoutMs == 250)
            for bad: JSONValue in [.object(["finishTimeoutMs": .number("0")]), .object(["finishTimeoutMs": .string("5")]),
                                   .object(["finishTimeoutMs": .number("600001")]), .object(["finishTimout": .number("5")]),
                                   .array([])] {
                #expect(throws: IAPError.self) { _ = try StoreKitOptions.parse(bad) }
            }
            let config = try BridgeConfig.parse(Array(#"{"store":"storekit","dataDir":"/tmp/x","storekit":{"colour":1}}"#.utf8))
            #expect { _ = try StoreKitFactory.make(config) } throws: { ($0 as? IAPError)?.code == .badConfig }
        }

        @Test("The backend uses StoreKit's API only, never the stand-in's test controls")
        func backendSourcesAreStoreKitOnly() throws {
            let dir = repoRoot + "/Sources/IAPStoreKit"
            let files = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(".swift") }
            #expect(files.count >= 5)
            for f in files {
                let text = try String(contentsOfFile: dir + "/" + f, encoding: .utf8)
                #expect(!text.contains("StandIn."), "\(f) uses the stand-in's test controls")
                if text.contains("import StoreKitStandIn") {
                    #expect(text.contains("#if canImport(StoreKit)\nimport StoreKit\n#else\nimport StoreKitStandIn\n#endif"),
                            "\(f) imports the stand-in other than in place of StoreKit")
                }
            }
        }
    }
}
#endif
