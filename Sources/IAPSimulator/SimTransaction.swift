import IAPCore

/// A transaction the simulated App Store charged, as it keeps it.
struct SimTransaction: Sendable {
    var id: Int64
    var originalID: Int64
    var productID: String
    var kind: ProductKind
    var purchaseMs: Int64
    var expiresMs: Int64?
    var revokedMs: Int64?
    var revokeReason: String?
    var finished = false
    /// The app finished the transaction after its revocation.
    var revocationAcked = false
    var token: PurchaseToken?
    var verified = true
    var price: String
    var upgraded = false
    /// Made outside the app (external_purchase) or as a renewal.
    var storeInitiated = false
    /// A family member's purchase shared with this player (family_share).
    var familyShared = false
    /// Units bought in one purchase (consumables: 1 to 10).
    var quantity: Int64 = 1
    /// The storefront the store was in when it charged (nil in records
    /// written before it was kept).
    var storefront: String? = nil
    /// The offer the charge used (an introductory or win-back offer).
    var offer: TransactionOffer? = nil
    /// Charged with the token of an earlier transaction of its group (a
    /// subscription changed outside the app keeps its chain's token, as
    /// StoreKit's does): `StoreTransaction.inheritsToken`.
    var inheritsToken = false

    /// Unfinished as StoreKit's `Transaction.unfinished` lists it: never
    /// finished, or revoked and that not yet seen by the app.
    var isUnfinished: Bool { !finished || (revokedMs != nil && !revocationAcked) }

    /// The first byte of a charge in the store's log written in binary
    /// (`encoded`). Every other event, and every charge written before
    /// this form, is a JSON object (`{`): a log holds both, and both are
    /// read (`SimStateLog.open`). Binary because a log is replayed whole at
    /// every open: a JSON charge cost about 10,000 instructions to read
    /// back and 5,000 to write.
    static let binaryTag: UInt8 = 0x01
    private static let hasExpiry: UInt8 = 1 << 0
    private static let hasToken: UInt8 = 1 << 1
    private static let isVerified: UInt8 = 1 << 2
    private static let isStoreInitiated: UInt8 = 1 << 3
    private static let isFamilyShared: UInt8 = 1 << 4
    private static let hasStorefront: UInt8 = 1 << 5
    private static let hasOffer: UInt8 = 1 << 6
    private static let isInheritingToken: UInt8 = 1 << 7
    private static let knownBits: UInt8 = 0xFF
    private static let offerHasID: UInt8 = 1 << 0
    private static let offerHasPaymentMode: UInt8 = 1 << 1
    private static let offerHasPeriod: UInt8 = 1 << 2
    private static let offerKnownBits: UInt8 = (1 << 3) - 1

    /// The charge as the log keeps it: `binaryTag`; ID, original ID,
    /// product, kind, purchase time; a mask naming the optional fields and
    /// the flags; the optional fields present, in the mask's order, with the
    /// price and quantity between the token and the storefront.
    /// Little-endian integers, u32-length UTF-8 strings (`ByteWriter`:
    /// never cut, whatever a catalog names its storefront).
    func encoded() -> [UInt8] {
        var w = ByteWriter()
        w.u8(SimTransaction.binaryTag)
        w.i64(id)
        w.i64(originalID)
        w.str32(productID)
        w.str32(kind.rawValue)
        w.i64(purchaseMs)
        var mask: UInt8 = 0
        if expiresMs != nil { mask |= SimTransaction.hasExpiry }
        if token != nil { mask |= SimTransaction.hasToken }
        if verified { mask |= SimTransaction.isVerified }
        if storeInitiated { mask |= SimTransaction.isStoreInitiated }
        if familyShared { mask |= SimTransaction.isFamilyShared }
        if storefront != nil { mask |= SimTransaction.hasStorefront }
        if offer != nil { mask |= SimTransaction.hasOffer }
        if inheritsToken { mask |= SimTransaction.isInheritingToken }
        w.u8(mask)
        if let expiresMs { w.i64(expiresMs) }
        if let token { w.token(token) }
        w.str32(price)
        w.i64(quantity)
        if let storefront { w.str32(storefront) }
        if let offer {
            w.str32(offer.kind.rawValue)
            var has: UInt8 = 0
            if offer.id != nil { has |= SimTransaction.offerHasID }
            if offer.paymentMode != nil { has |= SimTransaction.offerHasPaymentMode }
            if offer.period != nil { has |= SimTransaction.offerHasPeriod }
            w.u8(has)
            if let id = offer.id { w.str32(id) }
            if let mode = offer.paymentMode { w.str32(mode.rawValue) }
            if let period = offer.period { w.str32(period) }
        }
        return w.out
    }

    /// A charge `encoded` wrote; nil for anything else (a short or damaged
    /// record, a flag this version does not know, bytes left over).
    static func decode(binary bytes: [UInt8]) -> SimTransaction? {
        var seen = Seen()
        return decode(binary: bytes, 0..<bytes.count, seen: &seen)
    }

    /// What the charges of one log share, kept from one decode to the next
    /// (`ByteReader.str32(_:_:)`): the state log's open reads them all with one.
    struct Seen {
        var product = Repeated<String>(), kind = Repeated<ProductKind>(), price = Repeated<String>()
    }

    /// The charge whose bytes are `bytes[span]` (a frame of the state log), read in place.
    static func decode(binary bytes: [UInt8], _ span: Range<Int>, seen: inout Seen) -> SimTransaction? {
        var r = ByteReader(bytes, span)
        guard r.u8() == binaryTag, let id = r.i64(), let orig = r.i64(), let product = r.str32(&seen.product, { $0 }),
              let kind = r.str32(&seen.kind, ProductKind.init(rawValue:)), let at = r.i64(),
              let mask = r.u8(), mask & ~knownBits == 0
        else { return nil }
        var expires: Int64? = nil
        if mask & hasExpiry != 0 {
            guard let e = r.i64() else { return nil }
            expires = e
        }
        var token: PurchaseToken? = nil
        if mask & hasToken != 0 {
            guard let t = r.token() else { return nil }
            token = t
        }
        guard let price = r.str32(&seen.price, { $0 }), let quantity = r.i64() else { return nil }
        var t = SimTransaction(id: id, originalID: orig, productID: product, kind: kind, purchaseMs: at, price: price)
        t.expiresMs = expires
        t.token = token
        t.verified = mask & isVerified != 0
        t.storeInitiated = mask & isStoreInitiated != 0
        t.familyShared = mask & isFamilyShared != 0
        t.inheritsToken = mask & isInheritingToken != 0
        // As the JSON form reads it: a quantity StoreKit would not make is one.
        if (1...10).contains(quantity) { t.quantity = quantity }
        if mask & hasStorefront != 0 {
            guard let sf = r.str32() else { return nil }
            t.storefront = sf
        }
        if mask & hasOffer != 0 {
            guard let k = r.str32().flatMap(TransactionOffer.Kind.init(rawValue:)), let has = r.u8(),
                  has & ~offerKnownBits == 0 else { return nil }
            var offer = TransactionOffer(kind: k)
            if has & offerHasID != 0 {
                guard let v = r.str32() else { return nil }
                offer.id = v
            }
            if has & offerHasPaymentMode != 0 {
                guard let v = r.str32().flatMap(TransactionOffer.PaymentMode.init(rawValue:)) else { return nil }
                offer.paymentMode = v
            }
            if has & offerHasPeriod != 0 {
                guard let v = r.str32() else { return nil }
                offer.period = v
            }
            t.offer = offer
        }
        return r.remaining == 0 ? t : nil
    }

    /// A charge written as JSON (before the binary form): still read, so a
    /// store's log from an earlier version keeps its purchases.
    static func decode(_ o: JSONFields) -> SimTransaction? {
        guard let id = o["id"]?.int64Value, let orig = o["orig"]?.int64Value, let product = o["product"]?.stringValue,
              let kind = o["kind"]?.stringValue.flatMap(ProductKind.init(rawValue:)), let at = o["at"]?.int64Value,
              let price = o["price"]?.stringValue
        else { return nil }
        var t = SimTransaction(id: id, originalID: orig, productID: product, kind: kind, purchaseMs: at, price: price)
        t.expiresMs = o["exp"]?.int64Value
        t.token = o["token"]?.stringValue.flatMap(PurchaseToken.init(uuidString:))
        t.verified = o["verified"]?.boolValue ?? true
        t.storeInitiated = o["store"]?.boolValue ?? false
        t.familyShared = o["family"]?.boolValue ?? false
        if let q = o["qty"]?.int64Value, (1...10).contains(q) { t.quantity = q }
        t.storefront = o["sf"]?.stringValue
        if let k = o["ofk"]?.stringValue.flatMap(TransactionOffer.Kind.init(rawValue:)) {
            t.offer = TransactionOffer(kind: k, id: o["ofi"]?.stringValue,
                                       paymentMode: o["ofm"]?.stringValue.flatMap(TransactionOffer.PaymentMode.init(rawValue:)),
                                       period: o["ofp"]?.stringValue)
        }
        return t
    }

    /// The transaction as the store reports it. `currency` is the store's
    /// now, used only for a record that kept no storefront (older logs): a
    /// transaction keeps the currency it was charged in, whatever storefront
    /// the player moved to since (StoreKit's `Transaction.currency`).
    func storeTransaction(currency: String) -> StoreTransaction {
        let currency = storefront.map { Price.currency(storefront: $0) } ?? currency
        // A first purchase is its own original: one string for both.
        let idText = UTF8Text.decimal(id)
        return StoreTransaction(
            id: idText, originalID: originalID == id ? idText : UTF8Text.decimal(originalID), productID: productID,
            kind: kind, purchaseDateMs: purchaseMs,
            expiresDateMs: expiresMs, revocationDateMs: revokedMs, revocationReason: revokeReason,
            price: Price.times(price, quantity),
            currency: currency, quantity: quantity, token: token, verified: verified, jws: nil, environment: "simulator",
            isUpgraded: upgraded,
            // A renewal is the store's: it carries the first purchase's token
            // but answers no click (StoreKit's reason .renewal). The simulator
            // makes renewals store-initiated in the same chain; an upgrade is
            // in the chain too, but a click's.
            isRenewal: storeInitiated && originalID != id && kind == .autoRenewableSubscription,
            familyShared: familyShared, storefront: storefront, offer: offer, inheritsToken: inheritsToken)
    }
}

/// A purchase waiting for a parent (Ask to Buy) or for an interrupted
/// payment to be resolved.
struct SimPending: Sendable {
    var id: String
    var productID: String
    var key: Int64
    /// The click's token as the game's purchase call gave it (its install
    /// identity decides the result's origin when it is charged).
    var token: PurchaseToken
    var reason: String  // "askToBuy", "interrupted" or "chargeLater"
    /// What the charge, once approved or resolved, buys: the units and the
    /// win-back offer the player chose, as the purchase call asked.
    var quantity: Int = 1
    var winBackOfferID: String? = nil
}
