/// Every message the SDK emits, as a value. The queue keeps these; the C ABI
/// gets each rendered to JSON by `Messages` (docs/PROTOCOL.md), the Swift API
/// (IAPKit) reads the values themselves and never parses JSON.
public enum BridgeMessage: Sendable {
    /// `"7"` with a transaction: result 0, or 6 when it did not verify.
    case purchase(key: Int64, transaction: StoreTransaction, origin: PurchaseOrigin, alreadyOwned: Bool, clickKey: Int64?)
    /// `"7"` for a purchase that produced no transaction.
    case purchaseFailed(key: Int64, productID: String, failure: PurchaseFailure, detail: String)
    case revoked(key: Int64, transaction: StoreTransaction, origin: PurchaseOrigin)
    case products(ProductsAnswer)
    case pending(key: Int64, productID: String, reason: PendingReason)
    case entitlements([StoreTransaction], reason: UpdateReason, nowMs: Int64)
    case error(op: String, code: IAPCode, message: String, key: Int64?, productID: String?)
    case storeStatus(canMakePayments: Bool, storefront: String, reason: UpdateReason)
    case promoted(productID: String, offer: JSONValue?)
    case unvouched(key: Int64, productID: String, transactionID: String, reason: String)
    case outboxDamaged(Outbox.OpenReport)
    case subscriptions([SubscriptionGroupStatus], invalid: [String], reason: UpdateReason)
    case appTransaction(AppTransactionInfo?, error: String?)
    case sheet(StoreSheet, outcome: String, message: String?)
    case storeMessage(id: String, reason: String, state: String)

    /// A message that answers a game's request: what RequestBudget bounds.
    var answersRequest: Bool {
        switch self {
        case .products, .subscriptions, .appTransaction, .entitlements: return true
        default: return false
        }
    }

    /// An `"error"` that is about no purchase.
    public static func error(op: String, code: IAPCode, message: String) -> BridgeMessage {
        .error(op: op, code: code, message: message, key: nil, productID: nil)
    }

    /// The message as the C ABI hands it out.
    public var json: [UInt8] {
        switch self {
        case let .purchase(key, t, origin, owned, click):
            return Messages.purchase(key: key, transaction: t, origin: origin, alreadyOwned: owned, clickKey: click)
        case let .purchaseFailed(key, productID, failure, detail):
            return Messages.purchaseFailed(key: key, productID: productID, failure: failure, detail: detail)
        case let .revoked(key, t, origin): return Messages.revoked(key: key, transaction: t, origin: origin)
        case let .products(a): return Messages.products(a)
        case let .pending(key, productID, reason): return Messages.pending(key: key, productID: productID, reason: reason)
        case let .entitlements(list, reason, now): return Messages.entitlements(list, reason: reason, nowMs: now)
        case let .error(op, code, message, key, productID):
            return Messages.error(op: op, code: code, message: message, key: key, productID: productID)
        case let .storeStatus(canPay, storefront, reason):
            return Messages.storeStatus(canMakePayments: canPay, storefront: storefront, reason: reason)
        case let .promoted(productID, offer): return Messages.promoted(productID: productID, offer: offer)
        case let .unvouched(key, productID, txn, reason):
            return Messages.unvouched(key: key, productID: productID, transactionID: txn, reason: reason)
        case let .outboxDamaged(r): return Messages.outboxDamaged(r)
        case let .subscriptions(list, invalid, reason): return Messages.subscriptions(list, invalid: invalid, reason: reason)
        case let .appTransaction(info, error): return Messages.appTransaction(info, error: error)
        case let .sheet(sheet, outcome, message): return Messages.sheet(sheet, outcome: outcome, message: message)
        case let .storeMessage(id, reason, state): return Messages.storeMessage(id: id, reason: reason, state: state)
        }
    }
}
