/// What a stored result says, as typed values (outbox format version 2):
/// the game's `"7"` or `"revoked"` is rendered from these when it is
/// emitted, never stored as text and never parsed back.
public indirect enum ResultFacts: Sendable, Equatable {
    /// A transaction: result 0, or 6 when it did not verify (C6).
    case purchase(StoreTransaction, origin: PurchaseOrigin, alreadyOwned: Bool, clickKey: Int64?)
    /// A purchase that produced no transaction.
    case failure(productID: String, failure: PurchaseFailure, detail: String)
    /// A refund or revocation.
    case revocation(StoreTransaction, origin: PurchaseOrigin)
    /// A version 1 record whose text is not what the SDK's writer makes of
    /// a failure or a revocation (an edited file): never shown; reported
    /// `"unvouched"` and dropped at open (C11).
    case edited(productID: String)

    public var productID: String {
        switch self {
        case .purchase(let t, _, _, _), .revocation(let t, _): return t.productID
        case .failure(let p, _, _), .edited(let p): return p
        }
    }

    /// About how many bytes the record takes on disk (the compaction's estimate of live data).
    var approximateSize: Int {
        switch self {
        case .purchase(let t, let origin, _, _): return t.approximateSize + origin.rawValue.utf8.count + 16
        case .revocation(let t, let origin): return t.approximateSize + origin.rawValue.utf8.count
        case .failure(let p, _, let d): return p.utf8.count + d.utf8.count + 24
        case .edited(let p): return p.utf8.count + 8
        }
    }
}

extension StoreTransaction {
    var approximateSize: Int {
        id.utf8.count + originalID.utf8.count + productID.utf8.count + price.utf8.count + currency.utf8.count
            + environment.utf8.count + (jws?.utf8.count ?? 0) + 120
    }
}

/// A held purchase record's facts (C11): what only the SDK knows (origin,
/// "already owned", the click) and the few transaction fields the checks at
/// open read, copied out once; the whole transaction stays in the record's
/// facts (shared, not copied) for a delivery without the store's facts.
struct StoredPurchase {
    let productID: String
    let originalID: String
    let kind: ProductKind
    let origin: PurchaseOrigin
    let alreadyOwned: Bool
    let clickKey: Int64?
    private let facts: ResultFacts

    /// Nil when the record's facts are not a purchase (an edited record).
    init?(_ r: OutboxRecord) {
        guard case let .purchase(t, origin, owned, click) = r.facts else { return nil }
        productID = t.productID
        originalID = t.originalID
        kind = t.kind
        self.origin = origin
        alreadyOwned = owned
        clickKey = click
        facts = r.facts
    }

    /// The transaction as it was stored.
    var transaction: StoreTransaction {
        guard case let .purchase(t, _, _, _) = facts else { preconditionFailure("a stored purchase holds a purchase") }
        return t
    }
}
