/// A stored result's facts rendered as what the game is shown: the
/// outbox keeps facts (Storage), the message is made when it is queued.
extension ResultFacts {
    /// The message the game is shown for the record with this key; nil for `edited`.
    public func message(key: Int64) -> BridgeMessage? {
        switch self {
        case let .purchase(t, origin, owned, click):
            return .purchase(key: key, transaction: t, origin: origin, alreadyOwned: owned, clickKey: click)
        case let .failure(productID, failure, detail):
            return .purchaseFailed(key: key, productID: productID, failure: failure, detail: detail)
        case let .revocation(t, origin): return .revoked(key: key, transaction: t, origin: origin)
        case .edited: return nil
        }
    }
}
