/// Failure and revocation records are delivered again at open without asking
/// the store (C11): they grant nothing, so nothing has to vouch for them. But
/// their bytes come from a file on the player's device, so the game is shown
/// what the SDK's own writer makes of the record's fields, never the stored
/// bytes: a record edited to read as a success (or as anything a failure or
/// revocation is not) is dropped. A genuine record rebuilds to the same bytes.
enum StoredResultCheck {
    /// A failure's `"7"`, rebuilt from its result name; nil when the record
    /// is not a failure the SDK could have written.
    static func rebuiltFailure(_ r: OutboxRecord) -> [UInt8]? {
        let f = JSONFields(r.message)
        guard f.isComplete, f["type"]?.stringValue == "7", let name = f["resultName"]?.stringValue,
              let failure = PurchaseFailure(rawValue: name), failure != .interrupted,  // interrupted is "pending", never stored
              f["result"]?.stringValue == failure.resultCode, f["key"]?.stringValue == String(r.key),
              let productID = f["productID"]?.stringValue
        else { return nil }
        return Messages.purchaseFailed(key: r.key, productID: productID, failure: failure,
                                       detail: f["message"]?.stringValue ?? Coordinator.failureText(failure))
    }

    /// A `"revoked"` message, rebuilt from its fields; nil when the record is
    /// not a revocation the SDK could have written.
    static func rebuiltRevocation(_ r: OutboxRecord) -> [UInt8]? {
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
        return Messages.revoked(key: r.key, transaction: t, origin: origin)
    }
}
