@testable import IAPCore
import Testing

/// The typed record of a stored result (outbox format version 2): every
/// field comes back as written, and damage is refused, never guessed.
@Suite("Result facts codec (outbox format 2)")
struct ResultFactsCodecTests {
    /// A transaction with every optional field set and every flag on.
    static let full = StoreTransaction(
        id: "2000000000000042", originalID: "2000000000000040", productID: "vip_monthly é😀 \"q\"",
        kind: .autoRenewableSubscription, purchaseDateMs: 1_700_000_000_150, expiresDateMs: 1_702_592_000_150,
        revocationDateMs: 1_701_000_000_000, revocationReason: "developerIssue", price: "2.99", currency: "EUR", quantity: 3,
        token: PurchaseToken(key: 1_700_000_000_123, install: 77), verified: true, jws: String(repeating: "a.b.c", count: 20_000),
        environment: "sandbox", isUpgraded: true, isRenewal: true, alreadyOwned: true, familyShared: true, storefront: "FRA",
        offer: TransactionOffer(kind: .winBack, id: "wb1", paymentMode: .payAsYouGo, period: "P1M"))
    /// The same with every optional field absent and every flag off.
    static let bare = StoreTransaction(id: "", originalID: "", productID: "", kind: .consumable, purchaseDateMs: -1,
                                       price: "", currency: "", quantity: 0, verified: false, environment: "")

    static var samples: [ResultFacts] {
        var out: [ResultFacts] = []
        for t in [full, bare] {
            out.append(.purchase(t, origin: .game, alreadyOwned: true, clickKey: -9_000_000_000_000_000_000))
            out.append(.purchase(t, origin: .store, alreadyOwned: false, clickKey: nil))
            out.append(.revocation(t, origin: .store))
        }
        for kind in ProductKind.allCases {
            var t = full
            t.kind = kind
            out.append(.purchase(t, origin: .game, alreadyOwned: false, clickKey: 1))
        }
        for kind in TransactionOffer.Kind.allCases {
            for mode in TransactionOffer.PaymentMode.allCases + [nil] {
                var t = bare
                t.offer = TransactionOffer(kind: kind, id: mode == nil ? nil : "o", paymentMode: mode, period: mode == nil ? nil : "P3D")
                out.append(.purchase(t, origin: .game, alreadyOwned: false, clickKey: nil))
            }
        }
        for f in PurchaseFailure.allCases { out.append(.failure(productID: "coins_100", failure: f, detail: "why: \(f) ✓")) }
        out.append(.failure(productID: "", failure: .unknown, detail: ""))
        out.append(.edited(productID: "coins_500"))
        out.append(.edited(productID: ""))
        return out
    }

    @Test("records read with one Seen, as an open reads a log, are what each reads alone: whatever repeats, changes or is cut")
    func sharedSeen() throws {
        // Values that repeat, change, keep their length with other bytes
        // ("0.99"/"0.98"), or are empty, field by field, in every order.
        let products = ["coins_100", "coins_101", "", "vip_monthly é😀"], prices = ["0.99", "0.98", ""]
        let currencies = ["USD", "EUR", ""], environments = ["sandbox", "xcode", ""], storefronts: [String?] = ["USA", "FRA", nil]
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func pick<T>(_ a: [T]) -> T {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return a[Int(state >> 33) % a.count]
        }
        var seen = ResultFactsCodec.Seen()
        for i in 0..<3_000 {
            var t = i % 2 == 0 ? Self.full : Self.bare
            t.productID = pick(products)
            t.kind = pick(ProductKind.allCases)
            t.price = pick(prices)
            t.currency = pick(currencies)
            t.environment = pick(environments)
            t.storefront = pick(storefronts)
            let f: ResultFacts = i % 5 == 4 ? .revocation(t, origin: pick(PurchaseOrigin.allCases))
                : .purchase(t, origin: pick(PurchaseOrigin.allCases), alreadyOwned: false, clickKey: nil)
            let bytes = ResultFactsCodec.encoded(f)
            var r = ByteReader(bytes)
            #expect(ResultFactsCodec.decode(&r, seen: &seen) == f && r.remaining == 0, "record \(i): \(f)")
            // A record cut short is refused with the shared Seen too, and
            // leaves it as it was for the next.
            var cut = ByteReader(Array(bytes.prefix(40 + i % 60)))
            #expect(ResultFactsCodec.decode(&cut, seen: &seen) == nil || bytes.count <= 40 + i % 60)
        }
        // A kind name of a cached kind's length but other bytes is not
        // taken for it: refused, as when read alone.
        var t = Self.bare
        t.kind = .consumable
        let good = ResultFactsCodec.encoded(.purchase(t, origin: .game, alreadyOwned: false, clickKey: nil))
        var r = ByteReader(good)
        #expect(ResultFactsCodec.decode(&r, seen: &seen) != nil)
        let name = Array("consumable".utf8)
        let at = try #require((0...(good.count - name.count)).first { Array(good[$0..<($0 + name.count)]) == name })
        var bad = good
        bad[at + 3] = UInt8(ascii: "X")
        var rb = ByteReader(bad)
        #expect(ResultFactsCodec.decode(&rb, seen: &seen) == nil)
        #expect(ResultFactsCodec.decode(bad) == nil)
    }

    @Test("every form and every field comes back as written")
    func roundTrip() {
        for f in Self.samples {
            let bytes = ResultFactsCodec.encoded(f)
            #expect(ResultFactsCodec.decode(bytes) == f, "\(f)")
        }
    }

    @Test("the message rendered from decoded facts is byte for byte the one rendered from the written facts")
    func sameRendering() {
        for f in Self.samples {
            guard let decoded = ResultFactsCodec.decode(ResultFactsCodec.encoded(f)) else { Issue.record("\(f)"); continue }
            #expect(decoded.message(key: 42)?.json == f.message(key: 42)?.json)
        }
        #expect(ResultFacts.edited(productID: "x").message(key: 1) == nil)
    }

    @Test("a record cut short at any byte is refused")
    func truncated() {
        for f in Self.samples.prefix(8) {
            let bytes = ResultFactsCodec.encoded(f)
            for n in stride(from: 0, to: bytes.count, by: bytes.count > 4_000 ? 97 : 1) {
                #expect(ResultFactsCodec.decode(Array(bytes.prefix(n))) == nil, "\(f) cut at \(n)")
            }
        }
    }

    @Test("bytes after the facts, an unknown form, unknown flag bits, a name or origin no enum has and bad UTF-8 are refused")
    func damage() {
        let purchase = ResultFacts.purchase(Self.bare, origin: .game, alreadyOwned: false, clickKey: nil)
        let bytes = ResultFactsCodec.encoded(purchase)
        #expect(ResultFactsCodec.decode(bytes + [0]) == nil)
        for form: UInt8 in [0, 5, 0xFF] { #expect(ResultFactsCodec.decode([form] + bytes.dropFirst()) == nil) }
        // The transaction's presence mask follows the form byte: a bit this version does not know.
        var unknownBit = bytes
        unknownBit[2] |= 0x80
        #expect(ResultFactsCodec.decode(unknownBit) == nil)
        // The purchase's flags byte is last: bits above alreadyOwned and clickKey.
        var flags = bytes
        flags[flags.count - 1] = 4
        #expect(ResultFactsCodec.decode(flags) == nil)
        // A failure whose name is not a PurchaseFailure.
        let failure = ResultFactsCodec.encoded(.failure(productID: "p", failure: .cancelled, detail: "d"))
        let renamed = failure.replacing(Array("cancelled".utf8), with: Array("cancelleX".utf8))
        #expect(ResultFactsCodec.decode(renamed) == nil)
        // An origin that is not a PurchaseOrigin (same length: only the word differs).
        for origin in PurchaseOrigin.allCases {
            let revoked = ResultFactsCodec.encoded(.revocation(Self.bare, origin: origin))
            #expect(ResultFactsCodec.decode(revoked) == .revocation(Self.bare, origin: origin))
            let word = Array(origin.rawValue.utf8)
            let edited = revoked.replacing(word, with: Array(repeating: UInt8(ascii: "x"), count: word.count))
            #expect(edited != revoked && ResultFactsCodec.decode(edited) == nil, "origin \(origin) edited")
        }
        // A string that is not UTF-8.
        let badText = ResultFactsCodec.encoded(.edited(productID: "ab")).dropLast(2) + [0xC3, 0x28]
        #expect(ResultFactsCodec.decode(Array(badText)) == nil)
        // A length running past the end.
        var long = ResultFactsCodec.encoded(.edited(productID: "ab"))
        long[1] = 0xFF
        #expect(ResultFactsCodec.decode(long) == nil)
    }

    @Test("random bytes never trap")
    func randomBytes() {
        var rng = SystemRandomNumberGenerator()
        let seeds = Self.samples.map(ResultFactsCodec.encoded)
        for i in 0..<5_000 {
            var b = seeds[i % seeds.count]
            guard !b.isEmpty else { continue }
            for _ in 0..<(1 + Int(rng.next() % 4)) { b[Int(rng.next() % UInt64(b.count))] = UInt8(truncatingIfNeeded: rng.next()) }
            _ = ResultFactsCodec.decode(b)
        }
    }
}
