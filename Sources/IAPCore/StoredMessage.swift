/// The few fields of a stored result the SDK needs at open (C11), read with
/// `JSONFields` from the bytes its own writer produced, without building a
/// JSON tree for each of thousands of records. A record whose bytes are not
/// what the writer makes reads as empty from the damage on, and fails the
/// store's checks like any edited record.
struct StoredMessage {
    let productID: String
    let originalTransactionID: String?
    let kind: String?
    let origin: String
    let alreadyOwned: Bool
    let clickKey: Int64?

    init(_ bytes: [UInt8]) {
        let f = JSONFields(bytes)
        productID = f["productID"]?.stringValue ?? ""
        originalTransactionID = f["originalTransactionID"]?.stringValue
        kind = f["kind"]?.stringValue
        origin = f["origin"]?.stringValue ?? "game"
        alreadyOwned = f["alreadyOwned"]?.boolValue ?? false
        clickKey = f["clickKey"]?.stringValue.flatMap { Int64($0) }
    }
}
