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

    /// Unfinished as StoreKit's `Transaction.unfinished` lists it: never
    /// finished, or revoked and that not yet seen by the app.
    var isUnfinished: Bool { !finished || (revokedMs != nil && !revocationAcked) }

    func encoded() -> [UInt8] {
        var w = JSONObjectWriter()
        w.string("e", "txn")
        w.int("id", id)
        w.int("orig", originalID)
        w.string("product", productID)
        w.string("kind", kind.rawValue)
        w.int("at", purchaseMs)
        w.int("exp", expiresMs)
        w.string("token", token?.uuidString)
        w.bool("verified", verified)
        w.string("price", price)
        w.bool("store", storeInitiated)
        if familyShared { w.bool("family", true) }
        if quantity != 1 { w.int("qty", quantity) }
        if let storefront { w.string("sf", storefront) }
        if let offer {
            w.string("ofk", offer.kind.rawValue)
            w.string("ofi", offer.id)
            w.string("ofm", offer.paymentMode?.rawValue)
            w.string("ofp", offer.period)
        }
        return w.finish()
    }

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

    func storeTransaction(currency: String) -> StoreTransaction {
        StoreTransaction(
            id: String(id), originalID: String(originalID), productID: productID, kind: kind, purchaseDateMs: purchaseMs,
            expiresDateMs: expiresMs, revocationDateMs: revokedMs, revocationReason: revokeReason,
            price: Price.times(price, quantity),
            currency: currency, quantity: quantity, token: token, verified: verified, jws: nil, environment: "simulator",
            isUpgraded: upgraded,
            // A renewal is the store's: it carries the first purchase's token
            // but answers no click (StoreKit's reason .renewal). The simulator
            // makes renewals store-initiated in the same chain; an upgrade is
            // in the chain too, but a click's.
            isRenewal: storeInitiated && originalID != id && kind == .autoRenewableSubscription,
            familyShared: familyShared, storefront: storefront, offer: offer)
    }
}

/// A purchase waiting for a parent (Ask to Buy) or for an interrupted
/// payment to be resolved.
struct SimPending: Sendable {
    var id: String
    var productID: String
    var key: Int64
    var token: PurchaseToken
    var reason: String  // "askToBuy", "interrupted" or "chargeLater"
}
