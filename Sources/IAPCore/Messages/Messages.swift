/// Builds every message the SDK emits. Shapes are documented, with a JSON
/// Schema each, in docs/PROTOCOL.md and docs/schemas/.
public enum Messages {
    /// The fields every `"7"` starts with, in order, after its result.
    private static func resultHead(key: Int64, productID: String, result: (code: StaticString, name: StaticString),
                                   transactionID: String, originalID: String, price: String, currency: String,
                                   quantity: Int64) -> JSONObjectWriter {
        var w = JSONObjectWriter()
        w.text("type", "7")
        w.intString("key", key)
        w.string("productID", productID)
        w.text("result", result.code)
        w.text("resultName", result.name)
        w.string("transactionID", transactionID)
        w.string("originalTransactionID", originalID)
        w.string("price", price)
        w.string("currency", currency)
        w.int("quantity", quantity)
        return w
    }

    /// `"7"`: a purchase result the game must confirm by key.
    /// `clickKey`: the game's click this transaction answers, when another
    /// live result holds that click's key (or an earlier version stored a
    /// charge after the click's failure so): it then has a key of its own
    /// (C7, C9).
    public static func purchase(key: Int64, transaction t: StoreTransaction, origin: PurchaseOrigin, alreadyOwned: Bool,
                                clickKey: Int64? = nil) -> [UInt8] {
        // C6: a transaction that did not verify never becomes a success.
        var w = resultHead(key: key, productID: t.productID, result: t.verified ? ("0", "success") : ("6", "unverified"),
                           transactionID: t.id, originalID: t.originalID, price: t.price, currency: t.currency,
                           quantity: t.quantity)
        w.text("kind", t.kind.jsonName)
        w.int("purchaseDate", t.purchaseDateMs)
        w.int("expiresDate", t.expiresDateMs)
        w.text("origin", origin.jsonName)
        w.bool("alreadyOwned", alreadyOwned)
        w.string("ownershipType", t.ownershipType)
        w.string("storefront", t.storefront)
        w.offer(t.offer)
        if t.kind == .autoRenewableSubscription { w.bool("isUpgraded", t.isUpgraded) }
        if let clickKey { w.intString("clickKey", clickKey) }
        w.string("environment", t.environment)
        if !t.verified {
            w.string("message", "the store's signature check failed for this transaction: do not grant it. It is left unfinished; if it verifies later, it arrives again as a success")
        }
        if let jws = t.jws { w.string("jws", jws) }
        return w.finish()
    }

    /// `"7"` for a purchase that produced no transaction.
    public static func purchaseFailed(key: Int64, productID: String, failure: PurchaseFailure, detail: String) -> [UInt8] {
        var w = resultHead(key: key, productID: productID, result: failure.resultText,
                           transactionID: "", originalID: "", price: "", currency: "", quantity: 0)
        w.text("origin", PurchaseOrigin.game.jsonName)
        w.string("message", detail)
        return w.finish()
    }

    /// `"promoted"`: the player tapped this product, promoted on the App
    /// Store page; buy it with `iap_buy` (with its offer), or ignore it.
    public static func promoted(productID: String, offer: JSONValue?) -> [UInt8] {
        var w = JSONObjectWriter()
        w.text("type", "promoted")
        w.string("productID", productID)
        w.value("offer", offer ?? .null)
        return w.finish()
    }

    /// `"revoked"`: a refund or revocation; the game takes the item back, then confirms.
    public static func revoked(key: Int64, transaction t: StoreTransaction, origin: PurchaseOrigin) -> [UInt8] {
        var w = JSONObjectWriter()
        w.text("type", "revoked")
        w.intString("key", key)
        w.string("productID", t.productID)
        w.string("transactionID", t.id)
        w.string("originalTransactionID", t.originalID)
        w.text("kind", t.kind.jsonName)
        w.int("revocationDate", t.revocationDateMs ?? 0)
        w.string("reason", t.revocationReason ?? "refunded")
        w.int("quantity", t.quantity)
        w.text("origin", origin.jsonName)
        return w.finish()
    }

    /// `"999"`: product information.
    public static func products(_ a: ProductsAnswer) -> [UInt8] {
        var prices = JSONObjectWriter()
        for p in a.products { prices.string(named: p.id, p.price) }
        var items = JSONBuffer()
        items.appendRaw("[")
        for (i, p) in a.products.enumerated() {
            if i > 0 { items.appendRaw(",") }
            var o = JSONObjectWriter()
            o.string("id", p.id)
            o.string("title", p.title)
            o.string("description", p.description)
            o.string("price", p.price)
            o.string("displayPrice", p.displayPrice)
            o.string("currency", p.currency)
            o.string("kind", p.kind.rawValue)
            o.string("subscriptionPeriod", p.subscriptionPeriod)
            o.string("subscriptionGroupID", p.subscriptionGroupID)
            o.value("introductoryOffer", p.introductoryOffer ?? .null)
            o.value("introOfferEligible", p.introOfferEligible.map { .bool($0) } ?? .null)
            o.bool("familyShareable", p.familyShareable)
            if p.kind == .autoRenewableSubscription { o.value("winBackOffers", .array(p.winBackOffers)) }
            items.bytesAppend(o.finish())
        }
        items.appendRaw("]")
        var w = JSONObjectWriter()
        w.text("type", "999")
        w.raw("products", prices.finish())
        w.raw("items", items.bytes)
        w.value("invalid", .array(a.invalid.map { .string($0) }))
        if let e = a.error { w.string("error", e) }
        return w.finish()
    }

    /// `"pending"`: a purchase waits for a parent (Ask to Buy) or for an
    /// interrupted payment to be resolved. Informational: no confirm.
    public static func pending(key: Int64, productID: String, reason: PendingReason) -> [UInt8] {
        var w = JSONObjectWriter()
        w.text("type", "pending")
        w.intString("key", key)
        w.string("productID", productID)
        w.string("reason", reason.rawValue)
        return w.finish()
    }

    /// `"entitlements"`: what the player owns now (non-consumables, active
    /// subscriptions, non-renewing subscriptions in term). At every open, after
    /// a restore, and when it changes.
    public static func entitlements(_ list: [StoreTransaction], reason: UpdateReason, nowMs: Int64) -> [UInt8] {
        var items = JSONBuffer()
        items.appendRaw("[")
        for (i, t) in list.enumerated() {
            if i > 0 { items.appendRaw(",") }
            var o = JSONObjectWriter()
            o.string("productID", t.productID)
            o.string("transactionID", t.id)
            o.string("originalTransactionID", t.originalID)
            o.string("kind", t.kind.rawValue)
            o.int("purchaseDate", t.purchaseDateMs)
            o.int("expiresDate", t.expiresDateMs)
            o.string("ownershipType", t.ownershipType)
            o.string("storefront", t.storefront)
            o.offer(t.offer)
            items.bytesAppend(o.finish())
        }
        items.appendRaw("]")
        var w = JSONObjectWriter()
        w.text("type", "entitlements")
        w.string("reason", reason.rawValue)
        w.int("now", nowMs)
        w.raw("items", items.bytes)
        return w.finish()
    }

    /// `"error"`: an asynchronous operation failed (products, restore, a
    /// store-side failure outside a purchase).
    /// An error about one purchase names its key and product.
    public static func error(op: String, code: IAPCode, message: String, key: Int64? = nil, productID: String? = nil) -> [UInt8] {
        var w = JSONObjectWriter()
        w.text("type", "error")
        w.string("op", op)
        w.int("code", Int64(code.rawValue))
        w.string("codeName", code.name)
        w.string("message", message)
        if let key { w.intString("key", key) }
        if let productID { w.string("productID", productID) }
        return w.finish()
    }

    /// `"store"`: whether the player may pay and the App Store country, at
    /// open and when either changes. Informational: no confirm.
    public static func storeStatus(canMakePayments: Bool, storefront: String, reason: UpdateReason) -> [UInt8] {
        var w = JSONObjectWriter()
        w.text("type", "store")
        w.string("reason", reason.rawValue)
        w.bool("canMakePayments", canMakePayments)
        w.string("storefront", storefront)
        return w.finish()
    }

    /// `"unvouched"`: a record of the outbox the store does not vouch for (an
    /// edited, replayed or restored outbox, another device's): dropped, never
    /// delivered as a success (C11).
    public static func unvouched(key: Int64, productID: String, transactionID: String, reason: String) -> [UInt8] {
        var w = JSONObjectWriter()
        w.text("type", "unvouched")
        w.intString("key", key)
        w.string("productID", productID)
        w.string("transactionID", transactionID)
        w.string("reason", reason)
        return w.finish()
    }

    /// `"outbox_damaged"`: the outbox file was damaged; what could be read was
    /// recovered and re-emitted, the damaged file copied aside.
    public static func outboxDamaged(_ r: Outbox.OpenReport) -> [UInt8] {
        var w = JSONObjectWriter()
        w.text("type", "outbox_damaged")
        w.int("recovered", Int64(r.recovered))
        w.int("skippedBytes", Int64(r.skippedBytes + r.droppedTailBytes + r.unreadBytes))
        w.int("damagedSpans", Int64(r.damagedSpans))
        w.int("undecodableRecords", Int64(r.undecodableRecords))
        w.string("copy", r.damagedCopy ?? "")
        if let kind = r.notAFile {
            w.string("message", "the purchase outbox was \(kind), not a file: it was moved aside whole to \"copy\" and a new outbox started. Purchases the store still lists as unfinished come back from the store")
        } else if r.unreadBytes > 0 {
            w.string("message", "the purchase outbox was larger than the \(POSIXLogFile.maxFileBytes >> 20) MiB the SDK reads (damage, or a tool that wrote to it): its first \(POSIXLogFile.maxFileBytes >> 20) MiB were read and every readable result in them recovered, \(r.unreadBytes) bytes after them were not read; the whole file was kept aside. Purchases the store still lists as unfinished come back from the store")
        } else if r.undecodableRecords > 0 && r.damagedSpans == 0 && r.skippedBytes + r.droppedTailBytes == 0 {
            // Whole frames with good checksums that this version cannot read:
            // far likelier an outbox a newer IAPBridge wrote (a game updated,
            // then rolled back) than damage.
            w.string("message", "the purchase outbox holds \(r.undecodableRecords) record(s) with valid checksums that this version of IAPBridge cannot read: written by a newer version (an update rolled back), or damaged. Every readable result was recovered and the whole file was kept aside; purchases the store still lists as unfinished come back from the store")
        } else {
            w.string("message", "the purchase outbox was damaged on disk; every readable result was recovered and the damaged file was kept aside")
        }
        return w.finish()
    }
}
