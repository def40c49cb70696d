import Foundation
@_spi(Testing) import IAPCore
@testable import IAPKit
import Testing

@Suite("IAPKit: the Swift API")
struct IAPKitTests {
    @Test("a purchase's result comes typed under the key buy returned, with the transaction's facts; confirmed, it is never delivered again")
    func buyConfirm() async throws {
        let install = Install()
        let b = try install.open()
        let key = try b.buy(productID: "coins_100", quantity: 3)
        let r = try #require(await result(b, key: key))
        #expect(r.result == .success && r.shouldGrant && r.quantity == 3 && r.origin == .game && !r.alreadyOwned)
        let t = try #require(r.transaction)
        #expect(t.productID == "coins_100" && t.kind == .consumable && t.quantity == 3 && t.environment == "simulator")
        #expect(!t.id.isEmpty && t.price == "2.97" && t.currency == "USD", "\(t)")
        try b.confirm(key: key)
        try b.flush()
        try b.close()

        let again = try install.open()
        let events = try await drain(again)
        #expect(results(events).isEmpty, "\(events)")
        #expect(events.contains { if case .store(let s) = $0 { return s.canMakePayments } else { return false } })
        try again.close()
    }

    @Test("dropped without confirming: the result comes back under the same key, once; confirmed, never again")
    func dropThenReopen() async throws {
        let install = Install()
        var key: Int64 = 0
        var txn = ""
        do {
            let b = try install.open()
            key = try b.buy(productID: "coins_100")
            let r = try #require(await result(b, key: key))
            txn = try #require(r.transaction?.id)
            // The game is shown the result and drops the bridge, unconfirmed.
        }
        try await grantedOnce(install, key: key, transaction: txn)
    }

    @Test("the process dies before the confirm (the bridge's own crash hook): same key, granted once")
    func crashHook() async throws {
        let install = Install()
        let b = try install.open()
        let key = try b.buy(productID: "remove_ads")
        let r = try #require(await result(b, key: key))
        #expect(r.shouldGrant && r.transaction?.kind == .nonConsumable)
        b.core.crashForTesting()
        try await grantedOnce(install, key: key, transaction: try #require(r.transaction?.id))
    }

    @Test("a Swift game killed with SIGKILL after it was shown its result, before its confirm: same key, granted once")
    func killedGame() async throws {
        let exe = binDir + "/iap-swift-crash-game"
        try #require(FileManager.default.isExecutableFile(atPath: exe), "build the package first: \(exe)")
        let install = Install()
        let p = Process()
        p.executableURL = URL(fileURLWithPath: exe)
        p.arguments = ["--catalog", sampleCatalog, "--dir", install.dataDir, "--product", "coins_100"]
        var env = ProcessInfo.processInfo.environment
        env["SWIFT_BACKTRACE"] = "enable=no"
        p.environment = env
        let pipe = Pipe()
        p.standardOutput = pipe
        try p.run()
        // Reads lines until the game says it was shown its result.
        var text = ""
        let start = Date()
        while !text.contains("\nRESULT ") && !text.hasPrefix("RESULT ") && p.isRunning
                && Date().timeIntervalSince(start) < Double(deadlineSeconds) {
            let chunk = pipe.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
        #expect(p.terminationReason == .uncaughtSignal && p.terminationStatus == SIGKILL, "\(text)")
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("RESULT ") }, "no result: \(text)")
        let parts = line.split(separator: " ")
        try #require(parts.count == 4)
        let key = try #require(Int64(parts[1]))
        #expect(parts[2] == "0")
        #expect(text.contains("KEY \(key)\n"))
        try await grantedOnce(install, key: key, transaction: String(parts[3]))
    }

    /// After a run that was shown the result under `key` and never
    /// confirmed it: the next open delivers it again, under that key, once;
    /// confirmed, the open after that delivers nothing.
    private func grantedOnce(_ install: Install, key: Int64, transaction: String) async throws {
        let b = try install.open()
        let events = try await drain(b)
        let again = results(events)
        #expect(again.count == 1, "\(events)")
        let r = try #require(again.first)
        #expect(r.key == key && r.shouldGrant && r.transaction?.id == transaction && r.origin == .game)
        try b.confirm(key: key)
        #expect(throws: IAPKitError.self) { try b.confirm(key: key) }
        try b.close()

        let last = try install.open()
        let none = try await drain(last)
        #expect(results(none).isEmpty, "delivered again after its confirm: \(none)")
        try last.close()
    }

    @Test("a cancelled purchase: result cancelled, nothing to grant, no transaction; confirmed, gone")
    func cancelled() async throws {
        let install = Install()
        let b = try install.open()
        try b.simulator(#"{"op":"cancel_next"}"#)
        let key = try b.buy(productID: "coins_100")
        let r = try #require(await result(b, key: key))
        #expect(r.result == .cancelled && !r.shouldGrant && r.transaction == nil && r.quantity == 0)
        #expect(r.message?.contains("cancelled") == true)
        try b.confirm(key: key)
        try b.close()
        let again = try install.open()
        #expect(results(try await drain(again)).isEmpty)
        try again.close()
    }

    @Test("bad input gives typed errors, never a trap")
    func typedErrors() async throws {
        // nil: no error; every error must be an IAPKitError.
        func code(_ body: () throws -> Void) -> IAPKitError.Code? {
            do { try body(); return nil } catch let e as IAPKitError { return e.code } catch {
                Issue.record("not an IAPKitError: \(error)")
                return nil
            }
        }
        let install = Install()
        #expect(code { _ = try PurchaseBridge(configJSON: "{") } == .badJSON)
        #expect(code { _ = try PurchaseBridge(configJSON: #"{"store":"simulator"}"#) } == .badConfig)
        #expect(code { _ = try PurchaseBridge(simulatorCatalog: "relative/dir", dataDir: "not/absolute") } == .badConfig)
        #expect(code { _ = try PurchaseBridge(simulatorCatalog: install.root + "/missing.storekit", dataDir: install.dataDir) } == .catalog)
        let b = try install.open()
        #expect(code { try b.buy(productID: "") } == .invalidArgument)
        #expect(code { try b.buy(productID: String(repeating: "x", count: 300)) } == .invalidArgument)
        #expect(code { try b.buy(productID: "coins_100", quantity: 0) } == .invalidArgument)
        #expect(code { try b.buy(productID: "coins_100", quantity: 11) } == .invalidArgument)
        #expect(code { try b.confirm(key: 424242) } == .unknownKey)
        #expect(code { try b.requestProducts([""]) } == .invalidArgument)
        #expect(code { try b.requestRefund(transactionID: "abc") } == .invalidArgument)
        #expect(code { try b.simulator("not json") } == .badJSON)
        #expect(code { try b.simulator(#"{"op":"no_such_op"}"#) } == .unknownOp)
        // A result not handed out yet cannot be confirmed (C9).
        let key = try b.buy(productID: "coins_100")
        #expect(code { try b.confirm(key: key) } == .notDelivered)
        let r = try #require(await result(b, key: key))
        try b.confirm(key: r.key)
        // The error names the C ABI's code.
        do throws(IAPKitError) { try b.confirm(key: 7) } catch { #expect(error.codeName == "IAP_E_UNKNOWN_KEY") }
        try b.close()
        try b.close()  // a second close does nothing
        #expect(code { try b.buy(productID: "coins_100") } == .closed)
        #expect(code { try b.confirm(key: key) } == .closed)
        #expect(code { try b.flush() } == .closed)
        // The stream ended with the bridge.
        var after = 0
        for await _ in b.events { after += 1 }
        #expect(after == 0)
    }

    @Test("products, entitlements after a restore, revocations and subscription status arrive typed")
    func typedEvents() async throws {
        let install = Install()
        let b = try install.open()
        try b.requestProducts(["vip_monthly", "nope"])
        let products = await take(b) { if case .products = $0 { return true } else { return false } }
        guard case .products(let list)? = products.last else { Issue.record("no products"); return }
        #expect(list.invalid == ["nope"] && list.products.count == 1)
        let vip = try #require(list.products.first)
        #expect(vip.kind == .autoRenewableSubscription && vip.subscriptionPeriod != nil && vip.subscriptionGroupID != nil)

        let key = try b.buy(productID: "remove_ads")
        let r = try #require(await result(b, key: key))
        try b.confirm(key: key)
        try b.restore()
        let restored = await take(b) {
            if case .entitlements(let e) = $0 { return e.reason == .restore } else { return false }
        }
        guard case .entitlements(let e)? = restored.last else { Issue.record("no restore answer"); return }
        #expect(e.owns("remove_ads"))

        try b.simulator(#"{"op":"refund","transactionID":"\#(r.transaction?.id ?? "")"}"#)
        let revoked = await take(b) { if case .revoked = $0 { return true } else { return false } }
        guard case .revoked(let rv)? = revoked.last else { Issue.record("no revocation"); return }
        #expect(rv.productID == "remove_ads" && rv.transactionID == r.transaction?.id && rv.kind == .nonConsumable)
        try b.confirm(key: rv.key)

        try b.subscriptionStatus(productIDs: ["vip_monthly"])
        let status = await take(b) {
            if case .subscriptions(let s) = $0 { return s.reason != .open } else { return false }
        }
        guard case .subscriptions(let s)? = status.last else { Issue.record("no status"); return }
        #expect(s.groups.count == 1 && s.groups.first?.active == false)
        try b.close()
    }

    @Test("README's \"Swift games\" example is samples/swift-demo/Shop.swift's code, line for line, at most 20 lines")
    func readmeMatchesSample() throws {
        let readme = try String(contentsOfFile: repoRoot + "/README.md", encoding: .utf8)
        let section = try #require(readme.components(separatedBy: "## Swift games").dropFirst().first)
        let block = try #require(section.components(separatedBy: "```swift\n").dropFirst().first?
            .components(separatedBy: "\n```").first)
        let shop = try String(contentsOfFile: repoRoot + "/samples/swift-demo/Shop.swift", encoding: .utf8)
        let code = shop.split(separator: "\n", omittingEmptySubsequences: false)
            .drop { $0.hasPrefix("import") || $0.hasPrefix("//") || $0.isEmpty }
            .joined(separator: "\n").trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(block == code)
        #expect(block.split(separator: "\n").count <= 20)
    }

    @Test("the README's example (samples/swift-demo) runs and grants 100 coins")
    func readmeExample() throws {
        let exe = binDir + "/iap-swift-demo"
        try #require(FileManager.default.isExecutableFile(atPath: exe), "build the package first: \(exe)")
        let install = Install()
        let p = Process()
        p.executableURL = URL(fileURLWithPath: exe)
        p.arguments = ["--catalog", sampleCatalog, "--dir", install.dataDir]
        let pipe = Pipe()
        p.standardOutput = pipe
        p.standardError = pipe
        try p.run()
        let out = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        #expect(p.terminationStatus == 0 && out.contains("coins: 100"), "\(out)")
    }
}
