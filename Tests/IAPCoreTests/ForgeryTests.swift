import Foundation
@_spi(Testing) import IAPCore
import Testing

/// C11: the outbox is evidence, not authority. The file is on the player's
/// device: edited, replayed, restored from a backup or copied from another
/// device, it must never make the game grant an unpaid item. Each test
/// forges the file with the outbox's own (public) frame format, as a tool
/// would, and checks what the game is shown.
@Suite("Forged outboxes (C11)")
struct ForgeryTests {
    static func path(_ env: TestEnv) -> String { env.dataDir + "/" + Outbox.fileName }

    static func append(_ env: TestEnv, _ entries: [OutboxEntry]) throws {
        var bytes = try POSIX.readFile(path(env)) ?? []
        for e in entries { RecordFrame.encode(e.encoded(), into: &bytes) }
        try POSIX.replaceFile(path(env), with: bytes)
    }

    /// A result record as format 1 wrote it (its rendered JSON): what an
    /// outbox an earlier version left holds, read at open through the
    /// migration to format 2.
    static func v1Put(id: UInt64, key: Int64, kind: RecordKind, transactionID: String, message: [UInt8]) -> [UInt8] {
        var p: [UInt8] = [1]
        for i in 0..<8 { p.append(UInt8((id >> (8 * UInt64(i))) & 0xff)) }
        for i in 0..<8 { p.append(UInt8((UInt64(bitPattern: key) >> (8 * UInt64(i))) & 0xff)) }
        p.append(kind.rawValue)
        let t = Array(transactionID.utf8)
        p += [UInt8(t.count & 0xff), UInt8(t.count >> 8)] + t
        let n = UInt32(message.count)
        p += [UInt8(n & 0xff), UInt8((n >> 8) & 0xff), UInt8((n >> 16) & 0xff), UInt8(n >> 24)] + message
        return p
    }

    static func appendV1(_ env: TestEnv, id: UInt64, key: Int64, kind: RecordKind, transactionID: String, message: [UInt8]) throws {
        var bytes = try POSIX.readFile(path(env)) ?? []
        RecordFrame.encode(v1Put(id: id, key: key, kind: kind, transactionID: transactionID, message: message), into: &bytes)
        try POSIX.replaceFile(path(env), with: bytes)
    }

    /// The facts with their transaction changed (a player's tool editing a record).
    static func edited(_ f: ResultFacts, clickKey newClick: Int64?? = .none, _ change: (inout StoreTransaction) -> Void = { _ in }) -> ResultFacts {
        switch f {
        case .purchase(var t, let origin, let owned, var click):
            change(&t)
            if let newClick { click = newClick }
            return .purchase(t, origin: origin, alreadyOwned: owned, clickKey: click)
        case .revocation(var t, let origin):
            change(&t)
            return .revocation(t, origin: origin)
        case .failure, .edited:
            return f
        }
    }

    static func records(_ env: TestEnv) throws -> [OutboxRecord] {
        let bytes = try POSIX.readFile(path(env)) ?? []
        return RecordFrame.scan(bytes).records.compactMap { p -> OutboxRecord? in
            if case .put(let r) = OutboxEntry.decode(p) { return r } else { return nil }
        }
    }

    static func of(_ ms: [JSONValue], _ type: String) -> [JSONValue] { ms.filter { $0["type"]?.stringValue == type } }

    /// One purchase shown to the game and left unconfirmed; its key.
    static func livePurchase(_ env: TestEnv) throws -> Int64 {
        let b = try env.open()
        _ = b.drain()
        let key = try b.buy("coins_100", 0)
        _ = b.drainResults()
        b.close()
        return key
    }

    /// One purchase, granted and confirmed; the outbox file as it was before
    /// the confirm is returned (a backup the player kept).
    static func grantedPurchase(_ env: TestEnv, product: String = "coins_100") throws -> (backup: [UInt8], key: Int64) {
        let b = try env.open()
        _ = b.drain()
        let key = try b.buy(product, 0)
        _ = b.drainResults()
        b.c.flush()
        let backup = try POSIX.readFile(path(env)) ?? []
        try b.confirm(key)
        b.c.flush()
        b.close()
        return (backup, key)
    }

    @Test("a success appended for a transaction the store never made is not delivered, is reported, and is gone at the next open")
    func inventedTransaction() throws {
        let env = TestEnv()
        _ = try Self.grantedPurchase(env)
        let fake = Array(#"{"type":"7","key":"424242","productID":"coins_100","result":"0","resultName":"success","transactionID":"9999999","originalTransactionID":"9999999","price":"0.99","currency":"USD","quantity":1,"kind":"consumable","purchaseDate":1,"expiresDate":null,"origin":"game","alreadyOwned":false,"environment":"simulator"}"#.utf8)
        try Self.appendV1(env, id: 1000, key: 424242, kind: .purchase, transactionID: "9999999", message: fake)
        let b = try env.open()
        let ms = b.drain()
        #expect(b.results(ms).isEmpty, "an invented purchase was delivered")
        #expect(Self.of(ms, "unvouched").map { $0["transactionID"]?.stringValue } == ["9999999"])
        b.close()
        let again = try env.open()
        let later = again.drain()
        #expect(again.results(later).isEmpty && Self.of(later, "unvouched").isEmpty, "the dropped record stays dropped")
        again.close()
    }

    @Test("a backup of dataDir restored after the items were granted delivers nothing again")
    func restoredBackup() throws {
        let env = TestEnv()
        let (backup, key) = try Self.grantedPurchase(env)
        try POSIX.replaceFile(Self.path(env), with: backup)
        let b = try env.open()
        let ms = b.drain()
        #expect(b.results(ms).isEmpty, "a restored backup granted key \(key) again")
        #expect(Self.of(ms, "unvouched").count == 1)
        b.close()
    }

    @Test("one device's outbox copied to another (another store) delivers nothing there")
    func copiedToAnotherDevice() throws {
        let env = TestEnv()
        _ = try Self.livePurchase(env)  // not confirmed: live on this device
        let other = TestEnv()
        try FileManager.default.createDirectory(atPath: other.dataDir, withIntermediateDirectories: true)
        try POSIX.replaceFile(Self.path(other), with: try POSIX.readFile(Self.path(env)) ?? [])
        let ob = try other.open()
        let ms = ob.drain()
        #expect(ob.results(ms).isEmpty, "another device's purchase was granted here")
        #expect(Self.of(ms, "unvouched").count == 1)
        ob.close()
        // The device that paid still gets it.
        let mine = try env.open()
        #expect(mine.drainResults().count == 1)
        mine.close()
    }

    @Test("a live record copied under another key is one purchase, delivered once")
    func copiedUnderAnotherKey() throws {
        let env = TestEnv()
        let key = try Self.livePurchase(env)
        let r = try #require(try Self.records(env).first { $0.key == key })
        try Self.append(env, [.put(OutboxRecord(id: r.id + 100, key: key + 1, kind: .purchase, transactionID: r.transactionID,
                                               facts: r.facts))])
        let again = try env.open()
        let ms = again.drain()
        #expect(again.results(ms).map(\.keyValue) == [key], "one transaction, one result")
        #expect(Self.of(ms, "unvouched").map(\.keyValue) == [key + 1])
        again.close()
    }

    @Test("a forged record of a transaction the store never made, under a genuine record's key: only the forgery is reported; the genuine purchase is delivered under its key")
    func forgeryUnderGenuineKey() throws {
        let env = TestEnv()
        let key = try Self.livePurchase(env)
        let r = try #require(try Self.records(env).first { $0.key == key })
        // Appended after the genuine record (a higher ID): resolved after it
        // if the dropped were not dropped first.
        try Self.append(env, [.put(OutboxRecord(id: r.id + 100, key: key, kind: .purchase, transactionID: "9999999",
                                               facts: Self.edited(r.facts) { $0.id = "9999999"; $0.originalID = "9999999" }))])
        let again = try env.open()
        let ms = again.drain()
        #expect(again.results(ms).map(\.keyValue) == [key], "the genuine purchase, once, under its key")
        #expect(Self.of(ms, "unvouched").map { $0["transactionID"]?.stringValue } == ["9999999"],
                "only the forged record is reported, not the genuine transaction \(r.transactionID)")
        again.close()
    }

    @Test("a record edited to name a dearer product is dropped; the message is rebuilt from the store's facts")
    func editedProduct() throws {
        let env = TestEnv()
        let key = try Self.livePurchase(env)
        // Rewrite the file with the record's product changed (valid checksums).
        var out: [UInt8] = []
        for p in RecordFrame.scan(try POSIX.readFile(Self.path(env)) ?? []).records {
            if case .put(let r) = OutboxEntry.decode(p) {
                let facts = Self.edited(r.facts) { $0.productID = "coins_500" }
                RecordFrame.encode(OutboxEntry.put(OutboxRecord(id: r.id, key: r.key, kind: r.kind, transactionID: r.transactionID,
                                                                 facts: facts)).encoded(), into: &out)
            } else {
                RecordFrame.encode(p, into: &out)
            }
        }
        try POSIX.replaceFile(Self.path(env), with: out)
        let again = try env.open()
        let ms = again.drain()
        #expect(!again.results(ms).contains { $0["productID"]?.stringValue == "coins_500" }, "the edited product was delivered")
        #expect(Self.of(ms, "unvouched").map(\.keyValue) == [key])
        again.close()
    }

    /// How a player's tool rewrites the key of a live record (issue 21, item 4).
    enum KeyEdit: String, CaseIterable, Sendable, CustomTestStringConvertible {
        /// The next key: what a game that saves keys in order would not hold.
        case nextKey
        /// A key far above every key handed out.
        case farAbove
        /// A negative key, as the SDK gives store-initiated purchases.
        case negative
        /// A key of its own with `clickKey` naming the real one, as a charge
        /// that came after a failure of that click is stored.
        case asLateCharge

        var testDescription: String { rawValue }

        func forged(_ key: Int64) -> Int64 {
            switch self {
            case .nextKey: return key + 1
            case .farAbove: return key + 86_400_000
            case .negative: return -4_242_424_242
            case .asLateCharge: return -7_777_777_777
            }
        }
    }

    /// Rewrites the outbox with the record under `key` moved to `newKey`:
    /// the record's key and, for `asLateCharge`, a
    /// `clickKey` naming the old key; every checksum recomputed (the format
    /// is public).
    static func rewriteKey(_ env: TestEnv, from key: Int64, to newKey: Int64, clickKey: Bool) throws {
        var out: [UInt8] = []
        for p in RecordFrame.scan(try POSIX.readFile(path(env)) ?? []).records {
            if case .put(let r) = OutboxEntry.decode(p), r.key == key {
                let facts = clickKey ? edited(r.facts, clickKey: .some(key)) : r.facts
                RecordFrame.encode(OutboxEntry.put(OutboxRecord(id: r.id, key: newKey, kind: r.kind, transactionID: r.transactionID,
                                                                 facts: facts)).encoded(), into: &out)
            } else {
                RecordFrame.encode(p, into: &out)
            }
        }
        try POSIX.replaceFile(path(env), with: out)
    }

    @Test("a live consumable whose key a player rewrote (checksums recomputed) is not delivered under the new key; the real key's result, named by the store's purchase token, is delivered once", arguments: KeyEdit.allCases)
    func editedKey(_ edit: KeyEdit) throws {
        let env = TestEnv()
        // The game was shown the purchase, granted it and saved its key; it
        // was killed before its confirm. The player then edits the file.
        let key = try Self.livePurchase(env)
        var granted: Set<Int64> = [key]
        var grants = 1
        let forged = edit.forged(key)
        try Self.rewriteKey(env, from: key, to: forged, clickKey: edit == .asLateCharge)
        let forgedRecord = try #require(try Self.records(env).first { $0.key == forged })
        #expect(try Self.records(env).allSatisfy { $0.key != key }, "the file holds no record under the real key")

        let b = try env.open()
        let ms = b.drain()
        let results = b.results(ms)
        #expect(!results.contains { $0.keyValue == forged }, "\(edit): delivered under the edited key \(forged)")
        #expect(results.map(\.keyValue) == [key], "\(edit): the real key's result, once: \(results)")
        #expect(results.first?["transactionID"]?.stringValue == forgedRecord.transactionID)
        #expect(Self.of(ms, "unvouched").map(\.keyValue) == [forged])
        // The game's side: grant a "0" whose key it does not hold, confirm every result.
        for r in results where r["result"]?.stringValue == "0" {
            if let k = r.keyValue, granted.insert(k).inserted { grants += 1 }
        }
        try b.confirmAll(results)
        b.close()
        #expect(grants == 1, "\(edit): one purchase granted \(grants) times")

        let again = try env.open()
        let later = again.drain()
        #expect(again.results(later).isEmpty && Self.of(later, "unvouched").isEmpty, "\(edit): \(later)")
        let txn = try #require(try again.transactions().first { $0["transactionID"]?.stringValue == forgedRecord.transactionID })
        #expect(txn["finished"] == .bool(true))
        again.close()
    }

    @Test("a re-subscription made outside the game (it inherits the click's token) stored under the click's late key: kept while the click's own result is live (what an earlier version stored, not a forgery); once that result is confirmed, the late key is refused (a hand edit: the hash is public) and the transaction comes again under its store key, which the game granted",
          arguments: [false, true])
    func inheritedUnderLateKey(_ clickConfirmed: Bool) throws {
        let env = TestEnv()
        var b = try env.open()
        _ = b.drain()
        // Bought and granted, not confirmed (a kill): its result stays live.
        let k = try b.buy("vip_monthly", 0)
        #expect(b.results(b.drain()).map(\.keyValue) == [k])
        if clickConfirmed {
            try b.confirm(k)
            #expect(b.c.flush() == nil)
        }
        _ = try b.sim(#"{"op":"auto_renew","productID":"vip_monthly","enabled":false}"#)
        _ = try b.sim(#"{"op":"advance","seconds":\#(40 * 86_400)}"#)
        // Re-subscribed from the App Store's settings: the chain's token.
        let u = try #require(try b.sim(#"{"op":"external_purchase","productID":"vip_monthly"}"#)["transactionID"]?.stringValue)
        let shown = b.results(b.drain()).filter { $0["transactionID"]?.stringValue == u }
        let storeKey = try #require(shown.first?.keyValue)
        #expect(shown.count == 1 && storeKey < 0 && shown.first?["origin"]?.stringValue == "store", "\(shown)")
        b.close()
        // What versions before the inherited-token rule stored while the
        // click's result was live: the click's late key. The game was shown
        // and granted it under that key (or, with the click confirmed
        // first, a player moved it there by hand).
        let late = Coordinator.hashKey("c:\(k):" + u)
        try Self.rewriteKey(env, from: storeKey, to: late, clickKey: false)

        b = try env.open()
        let ms = b.drain()
        let again = b.results(ms).filter { $0["transactionID"]?.stringValue == u }
        if clickConfirmed {
            #expect(again.map(\.keyValue) == [storeKey], "under its store key (granted: ignored), never the late one: \(again)")
            #expect(Self.of(ms, "unvouched").map(\.keyValue) == [late], "\(Self.of(ms, "unvouched"))")
        } else {
            #expect(again.map(\.keyValue) == [late], "the key the game was shown, once: \(again)")
            #expect(Self.of(ms, "unvouched").isEmpty, "\(Self.of(ms, "unvouched"))")
        }
        try b.confirmAll(b.results(ms))
        b.close()
    }

    @Test("not a forgery: a charge that came after its click's failure is the click's success at the next open; with the failure unconfirmed, it waits for that confirm, then comes under the click's key", arguments: [false, true])
    func chargeAfterFailureKeepsItsKey(_ failureConfirmed: Bool) throws {
        let env = TestEnv()
        let b = try env.open()
        _ = b.drain()
        _ = try b.sim(#"{"op":"fail_next","error":"networkError","chargeLater":true}"#)
        let key = try b.buy("coins_100", 0)
        let failed = b.drainResults()
        #expect(failed.map(\.keyValue) == [key] && failed.first?["result"]?.stringValue == "3")
        if failureConfirmed { try b.confirmAll(failed) }
        let id = try #require(try b.sim(#"{"op":"pending"}"#)["pending"]?.arrayValue?.first?["id"]?.stringValue)
        let txn = try #require(try b.sim(#"{"op":"resolve","id":"\#(id)"}"#)["transactionID"]?.stringValue)
        let charged = b.drainResults().filter { $0["transactionID"]?.stringValue == txn }
        // One live result per key (C9): while the failure is live, the charge waits.
        #expect(charged.map(\.keyValue) == (failureConfirmed ? [key] : []), "\(charged)")
        b.close()

        let again = try env.open()
        let ms = again.drain()
        #expect(Self.of(ms, "unvouched").isEmpty, "\(Self.of(ms, "unvouched"))")
        var results = again.results(ms)
        if !failureConfirmed {
            // The failure comes again; once it is confirmed, the charge.
            #expect(results.map { $0["result"]?.stringValue } == ["3"] && results.map(\.keyValue) == [key], "\(results)")
            try again.confirm(key)
            results = again.drainResults()
        }
        #expect(results.filter { $0["transactionID"]?.stringValue == txn }.map(\.keyValue) == [key], "\(results)")
        #expect(results.first { $0["transactionID"]?.stringValue == txn }?["clickKey"] == nil)
        try again.confirm(key)
        #expect(again.c.flush() == nil)
        #expect(try again.transactions().first { $0["transactionID"]?.stringValue == txn }?["finished"] == .bool(true))
        again.close()
    }

    /// A success for `product` under `key`, naming `transaction`, as the
    /// SDK's writer would have written it.
    static func success(key: Int64, product: String, kind: String, transaction: String) -> [UInt8] {
        Array(#"{"type":"7","key":"\#(key)","productID":"\#(product)","result":"0","resultName":"success","transactionID":"\#(transaction)","originalTransactionID":"\#(transaction)","price":"0.99","currency":"USD","quantity":1,"kind":"\#(kind)","purchaseDate":1,"expiresDate":null,"origin":"game","alreadyOwned":false,"environment":"simulator"}"#.utf8)
    }

    /// Appends a forged success for coins_500 under `key` as a record of
    /// `kind` (in format 1, JSON text, or format 2, typed facts), opens, and
    /// checks that no success is delivered and the record is reported unvouched.
    static func expectForgedSuccessDropped(_ env: TestEnv, key: Int64, kind: RecordKind, transaction: String,
                                           claims productKind: String, format: Int) throws {
        let txn = kind == .failure ? "" : transaction
        if format == 1 {
            try appendV1(env, id: 5000, key: key, kind: kind, transactionID: txn,
                         message: success(key: key, product: "coins_500", kind: productKind, transaction: transaction))
        } else {
            let t = StoreTransaction(id: transaction, originalID: transaction, productID: "coins_500",
                                     kind: ProductKind(rawValue: productKind)!, purchaseDateMs: 1, price: "0.99", currency: "USD",
                                     environment: "simulator")
            try append(env, [.put(OutboxRecord(id: 5000, key: key, kind: kind, transactionID: txn,
                                               facts: .purchase(t, origin: .game, alreadyOwned: false, clickKey: nil)))])
        }
        let b = try env.open()
        let ms = b.drain()
        #expect(!b.results(ms).contains { $0["productID"]?.stringValue == "coins_500" || $0["result"]?.stringValue == "0" },
                "a forged \(kind) record was delivered as a success: \(b.results(ms))")
        #expect(of(ms, "unvouched").map(\.keyValue) == [key])
        b.close()
    }

    /// Remove Ads bought and confirmed: its (finished) transaction ID.
    static func ownedRemoveAds(_ env: TestEnv) throws -> String {
        let b = try env.open()
        _ = b.drain()
        let key = try b.buy("remove_ads", 0)
        let txn = try #require(b.drainResults().first { $0.keyValue == key }?["transactionID"]?.stringValue)
        try b.confirm(key)
        b.c.flush()
        b.close()
        return txn
    }

    @Test("a record that borrows an owned item's transaction to name another product is not delivered as that product", arguments: [1, 2])
    func borrowedOwnedTransaction(format: Int) throws {
        let env = TestEnv()
        let txn = try Self.ownedRemoveAds(env)
        // The player owns Remove Ads; the forged record says that purchase
        // was 500 coins (and a non-consumable, so ownership is what vouches).
        try Self.expectForgedSuccessDropped(env, key: 555, kind: .purchase, transaction: txn, claims: "nonConsumable", format: format)
    }

    @Test("a failure record whose message is a success grants nothing: it is rebuilt as the failure it is, or dropped", arguments: [1, 2])
    func failureRecordSayingSuccess(format: Int) throws {
        let env = TestEnv()
        _ = try Self.grantedPurchase(env)
        try Self.expectForgedSuccessDropped(env, key: 777, kind: .failure, transaction: "123", claims: "consumable", format: format)
    }

    @Test("a failure record keeps its failure: rebuilt from its result name, nothing else carried over")
    func failureRecordRebuilt() throws {
        let env = TestEnv()
        _ = try Self.grantedPurchase(env)
        let text = #"{"type":"7","key":"778","productID":"coins_100","result":"1","resultName":"cancelled","transactionID":"2000000000000009","originalTransactionID":"","price":"","currency":"","quantity":1,"origin":"game","message":"the player cancelled","extra":"x"}"#
        try Self.appendV1(env, id: 5000, key: 778, kind: .failure, transactionID: "", message: Array(text.utf8))
        let b = try env.open()
        let ms = b.drain()
        let r = try #require(b.results(ms).first { $0.keyValue == 778 })
        #expect(r["result"]?.stringValue == "1" && r["resultName"]?.stringValue == "cancelled")
        #expect(r["transactionID"]?.stringValue == "" && r["extra"] == nil && r["message"]?.stringValue == "the player cancelled")
        b.close()
    }

    @Test("a revocation record whose message is a success grants nothing", arguments: [1, 2])
    func revocationRecordSayingSuccess(format: Int) throws {
        let env = TestEnv()
        _ = try Self.grantedPurchase(env)
        try Self.expectForgedSuccessDropped(env, key: 779, kind: .revocation, transaction: "2000000000000001", claims: "consumable", format: format)
    }

    @Test("not a forgery: a genuine failure and revocation, left unconfirmed, come back unchanged at the next open")
    func genuineFailureAndRevocation() throws {
        let env = TestEnv()
        let b = try env.open()
        _ = b.drain()
        _ = try b.sim(#"{"op":"fail_next","error":"networkError"}"#)
        let failedKey = try b.buy("coins_100", 0)
        let paidKey = try b.buy("remove_ads", 0)
        let first = b.drainResults()
        let txn = try #require(first.first { $0.keyValue == paidKey }?["transactionID"]?.stringValue)
        try b.confirm(paidKey)
        b.c.flush()
        _ = try b.sim(#"{"op":"refund","transactionID":"\#(txn)"}"#)
        let shown = b.drain()
        b.close()
        let failure = try #require(first.first { $0.keyValue == failedKey })
        let revoked = try #require(Self.of(shown, "revoked").first)
        let again = try env.open()
        let ms = again.drain()
        #expect(again.results(ms).filter { $0.keyValue == failedKey } == [failure])
        #expect(Self.of(ms, "revoked") == [revoked])
        #expect(Self.of(ms, "unvouched").isEmpty)
        again.close()
    }

    @Test("not a forgery: a non-consumable's first result stays deliverable after a second click's confirm finished the shared transaction")
    func ownedFirstClickAfterSecondConfirmed() throws {
        let env = TestEnv()
        let b = try env.open()
        _ = b.drain()
        let k1 = try b.buy("remove_ads", 0)
        let k2 = try b.buy("remove_ads", 0)
        let rs = b.drainResults()
        #expect(rs.map(\.keyValue) == [k1, k2] && rs.last?["alreadyOwned"] == .bool(true))
        try b.confirm(k2)  // finishes the transaction both share
        b.c.flush()
        b.close()
        let again = try env.open()
        let ms = again.drain()
        #expect(again.results(ms).map(\.keyValue) == [k1], "the first click's result, still unconfirmed, was dropped")
        #expect(Self.of(ms, "unvouched").isEmpty)
        again.close()
    }

    @Test("a confirmed record's frame appended again is ignored: record IDs only increase")
    func replayedFrame() throws {
        let env = TestEnv()
        _ = try Self.grantedPurchase(env)
        let r = try #require(try Self.records(env).first)
        try Self.append(env, [.put(r)])
        let (box, report) = try Outbox.open(directory: env.dataDir)
        #expect(box.liveCount == 0 && report.staleRecords == 1)
        box.close()
        let b = try env.open()
        #expect(b.drainResults().isEmpty)
        b.close()
    }
}
