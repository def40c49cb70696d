/// Reads the results format version 1 stored as their rendered JSON text
/// (tag 1 of `OutboxEntry`), once, when an outbox written by an earlier
/// version is opened: each becomes the typed facts version 2 stores, and
/// the open rewrites the file in version 2 (`Outbox.open`). Nothing is
/// dropped here: a record whose text is not what the SDK's writer made
/// stays, with what could be read, for the checks at open (C11) to judge.
enum OutboxV1Migration {
    static func facts(kind: RecordKind, key: Int64, transactionID: String, message: [UInt8]) -> ResultFacts {
        let f = JSONFields(message)
        switch kind {
        case .failure: return failure(f, key: key) ?? .edited(productID: f["productID"]?.stringValue ?? "")
        case .revocation:
            return revocation(f, key: key, transactionID: transactionID) ?? .edited(productID: f["productID"]?.stringValue ?? "")
        case .purchase, .unverified: return purchase(f, kind: kind, transactionID: transactionID)
        }
    }

    /// A failure's facts; nil when the text is not a failure the SDK could
    /// have written (a success in a failure's record grants nothing).
    private static func failure(_ f: JSONFields, key: Int64) -> ResultFacts? {
        guard f.isComplete, f["type"]?.stringValue == "7", let name = f["resultName"]?.stringValue,
              let failure = PurchaseFailure(rawValue: name), failure != .interrupted,  // interrupted is "pending", never stored
              f["result"]?.stringValue == failure.resultCode, f["key"]?.stringValue == String(key),
              let productID = f["productID"]?.stringValue
        else { return nil }
        return .failure(productID: productID, failure: failure, detail: f["message"]?.stringValue ?? failure.text)
    }

    /// A revocation's facts; nil when the text is not a revocation the SDK could have written.
    private static func revocation(_ f: JSONFields, key: Int64, transactionID: String) -> ResultFacts? {
        guard f.isComplete, f["type"]?.stringValue == "revoked", f["key"]?.stringValue == String(key),
              f["transactionID"]?.stringValue == transactionID, let productID = f["productID"]?.stringValue,
              let kind = f["kind"]?.stringValue.flatMap(ProductKind.init(rawValue:)),
              let quantity = f["quantity"]?.int64Value, let origin = f["origin"]?.stringValue.flatMap(PurchaseOrigin.init(rawValue:))
        else { return nil }
        let t = StoreTransaction(id: transactionID, originalID: f["originalTransactionID"]?.stringValue ?? transactionID,
                                 productID: productID, kind: kind, purchaseDateMs: 0,
                                 revocationDateMs: f["revocationDate"]?.int64Value ?? 0,
                                 revocationReason: f["reason"]?.stringValue ?? "refunded", price: "", currency: "",
                                 quantity: quantity, environment: "")
        return .revocation(t, origin: origin)
    }

    /// A transaction's facts, as far as the text says them (a field it
    /// lacks reads as empty): the store's facts decide at open whether it
    /// is delivered, and rebuild it when they are reported (C11).
    private static func purchase(_ f: JSONFields, kind: RecordKind, transactionID: String) -> ResultFacts {
        let storeID = Outbox.storeTransactionID(transactionID)
        let t = StoreTransaction(
            id: f["transactionID"]?.stringValue ?? storeID,
            originalID: f["originalTransactionID"]?.stringValue ?? storeID,
            productID: f["productID"]?.stringValue ?? "",
            kind: f["kind"]?.stringValue.flatMap(ProductKind.init(rawValue:)) ?? .consumable,
            purchaseDateMs: f["purchaseDate"]?.int64Value ?? 0, expiresDateMs: f["expiresDate"]?.int64Value,
            price: f["price"]?.stringValue ?? "", currency: f["currency"]?.stringValue ?? "",
            quantity: f["quantity"]?.int64Value ?? 1, verified: kind == .purchase, jws: f["jws"]?.stringValue,
            environment: f["environment"]?.stringValue ?? "", isUpgraded: f["isUpgraded"]?.boolValue ?? false,
            familyShared: f["ownershipType"]?.stringValue == "familyShared", storefront: f["storefront"]?.stringValue,
            offer: f["offer"]?.value.flatMap(offer))
        return .purchase(t, origin: f["origin"]?.stringValue.flatMap(PurchaseOrigin.init(rawValue:)) ?? .game, alreadyOwned: f["alreadyOwned"]?.boolValue ?? false,
                         clickKey: f["clickKey"]?.stringValue.flatMap { Int64($0) })
    }

    /// The `"offer"` object `TransactionOffer.rendered` wrote.
    private static func offer(_ v: JSONValue) -> TransactionOffer? {
        guard let kind = v["type"]?.stringValue.flatMap(TransactionOffer.Kind.init(rawValue:)) else { return nil }
        return TransactionOffer(kind: kind, id: v["id"]?.stringValue,
                                paymentMode: v["paymentMode"]?.stringValue.flatMap(TransactionOffer.PaymentMode.init(rawValue:)),
                                period: v["period"]?.stringValue)
    }
}
