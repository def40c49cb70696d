/// Failure and revocation records are delivered again at open without asking
/// the store (C11): they grant nothing, so nothing has to vouch for them. But
/// their bytes come from a file on the player's device, so the game is shown
/// what the SDK's own writer makes of the record's fields, never the stored
/// bytes: a record edited to read as a success (or as anything a failure or
/// revocation is not) is dropped. A genuine record rebuilds to the same bytes.
enum StoredResultCheck {
    /// A failure's `"7"`, rebuilt from its result name; nil when the record
    /// is not a failure the SDK could have written.
    static func rebuiltFailure(_ r: OutboxRecord) -> BridgeMessage? {
        let f = JSONFields(r.message)
        guard f.isComplete, f["type"]?.stringValue == "7", let name = f["resultName"]?.stringValue,
              let failure = PurchaseFailure(rawValue: name), failure != .interrupted,  // interrupted is "pending", never stored
              f["result"]?.stringValue == failure.resultCode, f["key"]?.stringValue == String(r.key),
              let productID = f["productID"]?.stringValue
        else { return nil }
        return .purchaseFailed(key: r.key, productID: productID, failure: failure,
                                       detail: f["message"]?.stringValue ?? Coordinator.failureText(failure))
    }

    /// A `"revoked"` message, rebuilt from its fields; nil when the record is
    /// not a revocation the SDK could have written.
    static func rebuiltRevocation(_ r: OutboxRecord) -> BridgeMessage? {
        let f = JSONFields(r.message)
        guard f.isComplete, f["type"]?.stringValue == "revoked", f["key"]?.stringValue == String(r.key),
              f["transactionID"]?.stringValue == r.transactionID, let productID = f["productID"]?.stringValue,
              let kind = f["kind"]?.stringValue.flatMap(ProductKind.init(rawValue:)),
              let quantity = f["quantity"]?.int64Value, let origin = f["origin"]?.stringValue
        else { return nil }
        let t = StoreTransaction(id: r.transactionID, originalID: f["originalTransactionID"]?.stringValue ?? r.transactionID,
                                 productID: productID, kind: kind, purchaseDateMs: 0,
                                 revocationDateMs: f["revocationDate"]?.int64Value ?? 0,
                                 revocationReason: f["reason"]?.stringValue ?? "refunded", price: "", currency: "",
                                 quantity: quantity, environment: "")
        return .revoked(key: r.key, transaction: t, origin: origin)
    }

    /// A purchase record the store vouched for without reporting its facts,
    /// as a value: read back from the bytes the SDK wrote (the game is shown
    /// those bytes as they are). A field the record lacks reads as empty.
    static func storedPurchase(_ r: OutboxRecord) -> BridgeMessage {
        let f = JSONFields(r.message)
        let stored = StoredMessage(r.message)
        let t = StoreTransaction(
            id: f["transactionID"]?.stringValue ?? Coordinator.storeTransactionID(r.transactionID),
            originalID: stored.originalTransactionID ?? Coordinator.storeTransactionID(r.transactionID),
            productID: stored.productID, kind: stored.kind.flatMap(ProductKind.init(rawValue:)) ?? .consumable,
            purchaseDateMs: f["purchaseDate"]?.int64Value ?? 0, expiresDateMs: f["expiresDate"]?.int64Value,
            price: f["price"]?.stringValue ?? "", currency: f["currency"]?.stringValue ?? "",
            quantity: f["quantity"]?.int64Value ?? 1, verified: r.kind == .purchase, jws: f["jws"]?.stringValue,
            environment: f["environment"]?.stringValue ?? "", isUpgraded: f["isUpgraded"]?.boolValue ?? false,
            familyShared: f["ownershipType"]?.stringValue == "familyShared", storefront: f["storefront"]?.stringValue)
        return .purchase(key: r.key, transaction: t, origin: stored.origin, alreadyOwned: stored.alreadyOwned,
                         clickKey: stored.clickKey)
    }
}
