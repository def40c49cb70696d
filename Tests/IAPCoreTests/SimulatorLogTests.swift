import Foundation
import IAPCore
@testable import IAPSimulator
import Testing

/// The simulated store's log keeps its charges in a binary form; charges an
/// earlier version wrote as JSON are still read, in the same log.
@Suite("Simulated store's log: binary charges, JSON ones still read")
struct SimulatorLogTests {
    /// Charges with every optional field present and absent, every flag,
    /// and each offer field alone.
    static func variety() -> [SimTransaction] {
        var out: [SimTransaction] = []
        let offers: [TransactionOffer?] = [
            nil, TransactionOffer(kind: .introductory), TransactionOffer(kind: .winBack, id: "wb1"),
            TransactionOffer(kind: .code, paymentMode: .oneTime), TransactionOffer(kind: .promotional, period: "P1W"),
            TransactionOffer(kind: .winBack, id: "wb-é", paymentMode: .freeTrial, period: "P1M"),
        ]
        var id: Int64 = 1_500_000_000_000_001
        for mask in 0..<64 {
            for offer in offers {
                var t = SimTransaction(id: id, originalID: mask & 1 != 0 ? id : 1_500_000_000_000_000, productID: "vip_monthly",
                                       kind: mask & 2 != 0 ? .autoRenewableSubscription : .consumable,
                                       purchaseMs: 1_700_000_000_000 + Int64(mask), price: mask & 4 != 0 ? "0.99" : "12345.6789")
                t.expiresMs = mask & 8 != 0 ? 1_702_592_000_000 : nil
                t.token = mask & 16 != 0 ? PurchaseToken(key: 1_700_000_000_123 + Int64(mask), install: 0x2AB_CDEF) : nil
                t.verified = mask & 32 == 0
                t.storeInitiated = mask % 3 == 0
                t.familyShared = mask % 5 == 0
                t.quantity = Int64(1 + mask % 10)
                t.storefront = mask % 7 == 0 ? nil : "FRA"
                t.offer = offer
                out.append(t)
                id += 1
            }
        }
        return out
    }

    static func same(_ a: SimTransaction, _ b: SimTransaction) -> Bool {
        a.storeTransaction(currency: "EUR") == b.storeTransaction(currency: "EUR") && a.quantity == b.quantity
            && a.storeInitiated == b.storeInitiated && a.price == b.price && a.token == b.token
    }

    @Test("a charge reads back as it was written: 384 charges, every optional field present and absent")
    func roundTrip() throws {
        let all = SimulatorLogTests.variety()
        #expect(all.count == 384)
        for t in all {
            let bytes = t.encoded()
            #expect(bytes.first == SimTransaction.binaryTag)
            let back = try #require(SimTransaction.decode(binary: bytes))
            #expect(SimulatorLogTests.same(t, back), "charge \(t.id) changed on the way back")
            #expect(back.encoded() == bytes)
        }
    }

    @Test("charges read with one Seen, in one array of frames, as the state log's open reads them, are what each reads alone")
    func sharedSeen() throws {
        // Products, kinds and prices that repeat, change, or keep their
        // length with other bytes, in the order of a shuffled log.
        var all = SimulatorLogTests.variety()
        let products = ["vip_monthly", "vip_monthlx", "coins_100", ""]
        for i in all.indices {
            all[i].productID = products[(i * 7) % products.count]
            if i % 11 == 0 { all[i].price = "0.98" }
        }
        var log: [UInt8] = []
        var spans: [Range<Int>] = []
        for t in all {
            let start = log.count
            log += t.encoded()
            spans.append(start..<log.count)
            log += [0xAA, 0xBB]  // what lies between two payloads in a log: a frame header's bytes
        }
        var seen = SimTransaction.Seen()
        for (t, span) in zip(all, spans) {
            let shared = try #require(SimTransaction.decode(binary: log, span, seen: &seen))
            let alone = try #require(SimTransaction.decode(binary: Array(log[span])))
            #expect(SimulatorLogTests.same(shared, alone) && SimulatorLogTests.same(shared, t), "charge \(t.id)")
        }
        // A span one byte short or long is no charge, with the shared Seen too.
        for span in spans.prefix(50) {
            #expect(SimTransaction.decode(binary: log, span.lowerBound..<(span.upperBound - 1), seen: &seen) == nil)
            #expect(SimTransaction.decode(binary: log, span.lowerBound..<(span.upperBound + 1), seen: &seen) == nil)
        }
    }

    @Test("a damaged charge reads as nothing, never a trap: every cut, every flag this version does not know, a byte too many, a wrong first byte")
    func damaged() {
        var t = SimulatorLogTests.variety()[383]
        t.offer = TransactionOffer(kind: .winBack, id: "wb", paymentMode: .payAsYouGo, period: "P1M")
        let bytes = t.encoded()
        for n in 0..<bytes.count {
            #expect(SimTransaction.decode(binary: Array(bytes[..<n])) == nil, "cut at \(n) of \(bytes.count) read as a charge")
        }
        #expect(SimTransaction.decode(binary: bytes + [0]) == nil)
        #expect(SimTransaction.decode(binary: [0x7B] + bytes.dropFirst()) == nil)
        // Every bit of the flags' mask is known since the eighth
        // (inheritsToken); the offer's flags keep unknown ones. Its byte is
        // where the encoding of the same charge without the offer's period
        // first differs.
        var noPeriod = t
        noPeriod.offer = TransactionOffer(kind: .winBack, id: "wb", paymentMode: .payAsYouGo, period: nil)
        let other = noPeriod.encoded()
        guard let offerFlagsAt = bytes.indices.first(where: { $0 < other.count && bytes[$0] != other[$0] }) else {
            Issue.record("the offer's period changed no byte")
            return
        }
        var unknown = bytes
        unknown[offerFlagsAt] |= 0x80
        #expect(SimTransaction.decode(binary: unknown) == nil)
    }

    @Test("strings of any length are kept whole: a storefront of 70,000 bytes of two-byte characters reads back as it was")
    func longStrings() throws {
        var t = SimulatorLogTests.variety()[7]
        t.storefront = String(repeating: "é", count: 35_000)
        t.offer = TransactionOffer(kind: .winBack, id: String(repeating: "ü", count: 33_000), period: "P1M")
        let back = try #require(SimTransaction.decode(binary: t.encoded()))
        #expect(back.storefront == t.storefront && back.offer == t.offer)
    }

    /// The JSON an earlier version wrote for a charge.
    static func jsonCharge(id: Int64, product: String, kind: String, token: PurchaseToken?) -> [UInt8] {
        var w = JSONObjectWriter()
        w.string("e", "txn")
        w.int("id", id)
        w.int("orig", id)
        w.string("product", product)
        w.string("kind", kind)
        w.int("at", 1_700_000_000_000)
        w.int("exp", nil)
        w.string("token", token?.uuidString)
        w.bool("verified", true)
        w.string("price", "0.99")
        w.bool("store", false)
        return w.finish()
    }

    @Test("a log an earlier version wrote (JSON charges) keeps its purchases, and new charges go beside them in binary")
    func upgradeKeepsOldCharges() throws {
        let env = TestEnv()
        try FileManager.default.createDirectory(atPath: env.stateDir, withIntermediateDirectories: true)
        let oldConsumable: Int64 = 1_400_000_000_000_001, oldOwned: Int64 = 1_400_000_000_000_002
        var log: [UInt8] = []
        RecordFrame.encode(SimulatorLogTests.jsonCharge(id: oldConsumable, product: "coins_100", kind: "consumable",
                                                        token: PurchaseToken(key: 42)), into: &log)
        RecordFrame.encode(SimulatorLogTests.jsonCharge(id: oldOwned, product: "remove_ads", kind: "nonConsumable", token: nil),
                           into: &log)
        var fins = JSONObjectWriter()
        fins.string("e", "fins")
        fins.value("ids", .array([.number(String(oldOwned))]))
        RecordFrame.encode(fins.finish(), into: &log)
        try Data(log).write(to: URL(fileURLWithPath: env.stateDir + "/" + SimStateLog.fileName))

        func byID(_ b: Bridge) throws -> [String: JSONValue] {
            var out: [String: JSONValue] = [:]
            for t in try b.transactions() { out[t["transactionID"]?.stringValue ?? ""] = t }
            return out
        }
        var b = try env.open()
        var txns = try byID(b)
        #expect(txns.count == 2)
        #expect(txns[String(oldConsumable)]?["finished"] == .bool(false) && txns[String(oldConsumable)]?["key"] == .string("42"))
        #expect(txns[String(oldOwned)]?["finished"] == .bool(true) && txns[String(oldOwned)]?["kind"] == .string("nonConsumable"))
        _ = b.drain()
        let key = try b.buy("coins_100", 1_700_000_000_555)
        let new = try #require(b.drainResults().first { $0["key"]?.stringValue == String(key) }?["transactionID"]?.stringValue)
        b.close()

        // The log now holds both forms; a reopen reads all three charges.
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: env.stateDir + "/" + SimStateLog.fileName)))
        let scan = RecordFrame.scan(bytes)
        #expect(scan.records.filter { $0.first == SimTransaction.binaryTag }.count == 1)
        #expect(scan.records.filter { $0.first == UInt8(ascii: "{") }.count >= 3)
        b = try env.open()
        txns = try byID(b)
        #expect(Set(txns.keys) == [String(oldConsumable), String(oldOwned), new])
        #expect(txns[new]?["productID"] == .string("coins_100") && txns[new]?["key"] == .string(String(key)))
        #expect(txns[String(oldOwned)]?["finished"] == .bool(true))
        b.close()
    }
}
