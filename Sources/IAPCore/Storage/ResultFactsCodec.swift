/// The binary form of `ResultFacts` inside an outbox result record (format
/// version 2). Little-endian; every string is a u32 length and UTF-8 bytes;
/// optional fields are named by a presence mask, and a mask bit this
/// version does not know makes the record undecodable (damage), never a
/// guess. Decoding never traps.
enum ResultFactsCodec {
    static let formPurchase: UInt8 = 1
    static let formFailure: UInt8 = 2
    static let formRevocation: UInt8 = 3
    static let formEdited: UInt8 = 4

    static func encoded(_ f: ResultFacts) -> [UInt8] {
        var w = ByteWriter()
        encode(f, into: &w)
        return w.out
    }

    /// The facts these bytes hold, all of them; nil when they are not.
    static func decode(_ bytes: [UInt8]) -> ResultFacts? {
        var r = ByteReader(bytes)
        guard let f = decode(&r), r.remaining == 0 else { return nil }
        return f
    }

    static func encode(_ f: ResultFacts, into w: inout ByteWriter) {
        switch f {
        case let .purchase(t, origin, owned, click):
            w.u8(formPurchase)
            encode(t, into: &w)
            w.str32(origin.rawValue)
            w.u8((owned ? 1 : 0) | (click != nil ? 2 : 0))
            if let click { w.i64(click) }
        case let .failure(productID, failure, detail):
            w.u8(formFailure)
            w.str32(productID)
            w.str32(failure.rawValue)
            w.str32(detail)
        case let .revocation(t, origin):
            w.u8(formRevocation)
            encode(t, into: &w)
            w.str32(origin.rawValue)
        case let .edited(productID):
            w.u8(formEdited)
            w.str32(productID)
        }
    }

    /// What the records of one log share, kept from one decode to the next
    /// (`ByteReader.str32(_:_:)`): an open reads them all with one.
    struct Seen {
        var product = Repeated<String>(), kind = Repeated<ProductKind>(), origin = Repeated<PurchaseOrigin>()
        var price = Repeated<String>(), currency = Repeated<String>(), environment = Repeated<String>()
        var storefront = Repeated<String>()
    }

    static func decode(_ r: inout ByteReader) -> ResultFacts? {
        var seen = Seen()
        return decode(&r, seen: &seen)
    }

    static func decode(_ r: inout ByteReader, seen: inout Seen) -> ResultFacts? {
        switch r.u8() {
        case formPurchase:
            guard let t = transaction(&r, seen: &seen), let origin = r.str32(&seen.origin, PurchaseOrigin.init(rawValue:)),
                  let flags = r.u8(), flags & ~3 == 0 else { return nil }
            var click: Int64? = nil
            if flags & 2 != 0 { guard let c = r.i64() else { return nil }; click = c }
            return .purchase(t, origin: origin, alreadyOwned: flags & 1 != 0, clickKey: click)
        case formFailure:
            guard let p = r.str32(), let name = r.str32(), let failure = PurchaseFailure(rawValue: name),
                  let detail = r.str32() else { return nil }
            return .failure(productID: p, failure: failure, detail: detail)
        case formRevocation:
            guard let t = transaction(&r, seen: &seen), let origin = r.str32(&seen.origin, PurchaseOrigin.init(rawValue:)) else { return nil }
            return .revocation(t, origin: origin)
        case formEdited:
            guard let p = r.str32() else { return nil }
            return .edited(productID: p)
        default:
            return nil
        }
    }

    // Presence bits of a transaction's optional fields and flags.
    private static let hasExpires: UInt16 = 1 << 0
    private static let hasRevocationDate: UInt16 = 1 << 1
    private static let hasRevocationReason: UInt16 = 1 << 2
    private static let hasToken: UInt16 = 1 << 3
    private static let hasJWS: UInt16 = 1 << 4
    private static let hasStorefront: UInt16 = 1 << 5
    private static let hasOffer: UInt16 = 1 << 6
    private static let isVerified: UInt16 = 1 << 7
    private static let isUpgraded: UInt16 = 1 << 8
    private static let isRenewal: UInt16 = 1 << 9
    private static let isAlreadyOwned: UInt16 = 1 << 10
    private static let isFamilyShared: UInt16 = 1 << 11
    private static let knownBits: UInt16 = (1 << 12) - 1

    static func encode(_ t: StoreTransaction, into w: inout ByteWriter) {
        var mask: UInt16 = 0
        if t.expiresDateMs != nil { mask |= hasExpires }
        if t.revocationDateMs != nil { mask |= hasRevocationDate }
        if t.revocationReason != nil { mask |= hasRevocationReason }
        if t.token != nil { mask |= hasToken }
        if t.jws != nil { mask |= hasJWS }
        if t.storefront != nil { mask |= hasStorefront }
        if t.offer != nil { mask |= hasOffer }
        if t.verified { mask |= isVerified }
        if t.isUpgraded { mask |= isUpgraded }
        if t.isRenewal { mask |= isRenewal }
        if t.alreadyOwned { mask |= isAlreadyOwned }
        if t.familyShared { mask |= isFamilyShared }
        w.u16(mask)
        w.str32(t.id)
        w.str32(t.originalID)
        w.str32(t.productID)
        w.str32(t.kind.rawValue)
        w.i64(t.purchaseDateMs)
        if let v = t.expiresDateMs { w.i64(v) }
        if let v = t.revocationDateMs { w.i64(v) }
        if let v = t.revocationReason { w.str32(v) }
        w.str32(t.price)
        w.str32(t.currency)
        w.i64(t.quantity)
        if let v = t.token { w.token(v) }
        if let v = t.jws { w.str32(v) }
        w.str32(t.environment)
        if let v = t.storefront { w.str32(v) }
        if let o = t.offer {
            w.str32(o.kind.rawValue)
            w.u8((o.id != nil ? 1 : 0) | (o.paymentMode != nil ? 2 : 0) | (o.period != nil ? 4 : 0))
            if let v = o.id { w.str32(v) }
            if let v = o.paymentMode { w.str32(v.rawValue) }
            if let v = o.period { w.str32(v) }
        }
    }

    static func transaction(_ r: inout ByteReader, seen: inout Seen) -> StoreTransaction? {
        guard let mask = r.u16(), mask & ~knownBits == 0 else { return nil }
        let idAt = r.pos + 4  // after its length
        guard let id = r.str32(), let originalID = r.str32(orSame: id, readAt: idAt),
              let productID = r.str32(&seen.product, { $0 }),
              let kind = r.str32(&seen.kind, ProductKind.init(rawValue:)), let purchased = r.i64()
        else { return nil }
        var t = StoreTransaction(id: id, originalID: originalID, productID: productID, kind: kind, purchaseDateMs: purchased,
                                 price: "", currency: "", environment: "")
        if mask & hasExpires != 0 { guard let v = r.i64() else { return nil }; t.expiresDateMs = v }
        if mask & hasRevocationDate != 0 { guard let v = r.i64() else { return nil }; t.revocationDateMs = v }
        if mask & hasRevocationReason != 0 { guard let v = r.str32() else { return nil }; t.revocationReason = v }
        guard let price = r.str32(&seen.price, { $0 }), let currency = r.str32(&seen.currency, { $0 }), let quantity = r.i64()
        else { return nil }
        t.price = price
        t.currency = currency
        t.quantity = quantity
        if mask & hasToken != 0 {
            guard let token = r.token() else { return nil }
            t.token = token
        }
        if mask & hasJWS != 0 { guard let v = r.str32() else { return nil }; t.jws = v }
        guard let environment = r.str32(&seen.environment, { $0 }) else { return nil }
        t.environment = environment
        if mask & hasStorefront != 0 { guard let v = r.str32(&seen.storefront, { $0 }) else { return nil }; t.storefront = v }
        if mask & hasOffer != 0 {
            guard let name = r.str32(), let k = TransactionOffer.Kind(rawValue: name), let bits = r.u8(), bits & ~7 == 0
            else { return nil }
            var o = TransactionOffer(kind: k)
            if bits & 1 != 0 { guard let v = r.str32() else { return nil }; o.id = v }
            if bits & 2 != 0 {
                guard let v = r.str32(), let m = TransactionOffer.PaymentMode(rawValue: v) else { return nil }
                o.paymentMode = m
            }
            if bits & 4 != 0 { guard let v = r.str32() else { return nil }; o.period = v }
            t.offer = o
        }
        t.verified = mask & isVerified != 0
        t.isUpgraded = mask & isUpgraded != 0
        t.isRenewal = mask & isRenewal != 0
        t.alreadyOwned = mask & isAlreadyOwned != 0
        t.familyShared = mask & isFamilyShared != 0
        return t
    }
}
