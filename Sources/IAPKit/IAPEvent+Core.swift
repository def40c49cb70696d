import IAPCore

// The core's message values as the game's events: field for field what
// docs/PROTOCOL.md says each JSON message carries, with no JSON in between.
extension IAPEvent {
    init(_ m: BridgeMessage) {
        switch m {
        case let .purchase(key, t, origin, alreadyOwned, clickKey):
            self = .purchase(PurchaseResult(
                key: key, productID: t.productID, result: t.verified ? .success : .unverified,
                quantity: Int(t.quantity), transaction: PurchaseTransaction(t), origin: origin,
                alreadyOwned: alreadyOwned, clickKey: clickKey,
                message: t.verified ? nil : "the store's signature check failed for this transaction: do not grant it"))
        case let .purchaseFailed(key, productID, failure, detail):
            self = .purchase(PurchaseResult(
                key: key, productID: productID, result: ResultCode(failure), quantity: 0, transaction: nil,
                origin: .game, alreadyOwned: false, clickKey: nil, message: detail))
        case let .revoked(key, t, origin):
            self = .revoked(Revocation(
                key: key, productID: t.productID, transactionID: t.id, originalTransactionID: t.originalID,
                kind: ProductKind(t.kind), revocationDate: t.revocationDateMs ?? 0,
                reason: t.revocationReason ?? "refunded", quantity: Int(t.quantity), origin: origin))
        case let .products(a):
            self = .products(ProductList(products: a.products.map(ProductInfo.init), invalid: a.invalid, error: a.error))
        case let .pending(key, productID, reason):
            self = .pending(key: key, productID: productID, reason: reason)
        case let .entitlements(list, reason, now):
            self = .entitlements(Entitlements(reason: reason, now: now, items: list.map(PurchaseTransaction.init)))
        case let .error(op, code, message, key, productID):
            self = .error(AsyncError(op: op, code: IAPKitError.Code(rawValue: code.rawValue) ?? .internalError,
                                     message: message, key: key, productID: productID))
        case let .storeStatus(canPay, storefront, reason):
            self = .store(StoreStatus(reason: reason, canMakePayments: canPay, storefront: storefront))
        case let .promoted(productID, offer):
            self = .promoted(productID: productID, offer: offer.flatMap(ProductOffer.init))
        case let .unvouched(key, productID, txn, reason):
            self = .unvouched(key: key, productID: productID, transactionID: txn, reason: reason)
        case let .outboxDamaged(r):
            self = .outboxDamaged(recovered: r.recovered, skippedBytes: r.skippedBytes + r.droppedTailBytes + r.unreadBytes,
                                  copy: r.damagedCopy)
        case let .subscriptions(list, invalid, reason):
            self = .subscriptions(SubscriptionReport(reason: reason, groups: list.map(SubscriptionGroup.init), invalid: invalid))
        case let .appTransaction(info, error):
            self = .appTransaction(info.map(AppTransactionInfo.init), error: info == nil ? (error ?? "the store gave no app transaction") : nil)
        case let .sheet(sheet, outcome, message):
            var id: String? = nil
            if case .refund(let t) = sheet { id = t }
            self = .sheet(name: sheet.name, outcome: outcome, transactionID: id, message: message)
        case let .storeMessage(id, reason, state):
            self = .storeMessage(id: id, reason: reason, state: state)
        }
    }
}

extension ResultCode {
    init(_ f: PurchaseFailure) {
        switch f {
        case .cancelled: self = .cancelled
        case .declined: self = .declined
        case .networkError: self = .networkError
        case .notAllowed: self = .notAllowed
        case .productUnavailable: self = .productUnavailable
        // Never a result (it is a "pending"), listed for completeness.
        case .interrupted, .unknown: self = .unknown
        }
    }
}

extension ProductKind {
    init(_ k: IAPCore.ProductKind) { self = ProductKind(rawValue: k.rawValue) ?? .consumable }
}

extension PurchaseTransaction {
    init(_ t: StoreTransaction) {
        self.init(id: t.id, originalID: t.originalID, productID: t.productID, kind: ProductKind(t.kind),
                  purchaseDate: t.purchaseDateMs, expiresDate: t.expiresDateMs, price: t.price, currency: t.currency,
                  quantity: Int(t.quantity), environment: t.environment, familyShared: t.familyShared,
                  storefront: t.storefront, isUpgraded: t.isUpgraded, jws: t.jws,
                  offer: t.offer.map { UsedOffer(type: $0.kind.rawValue, id: $0.id, paymentMode: $0.paymentMode?.rawValue,
                                                 period: $0.period) })
    }
}

extension ProductOffer {
    /// The offer objects the stores build (the catalog's, StoreKit's).
    init?(_ v: JSONValue) {
        guard v.objectValue != nil else { return nil }
        self.init(id: v["id"]?.stringValue, type: v["type"]?.stringValue,
                  paymentMode: v["paymentMode"]?.stringValue ?? "free", period: v["period"]?.stringValue ?? "",
                  periods: Int(clamping: v["periods"]?.int64Value ?? 1), price: v["price"]?.stringValue ?? "0")
    }
}

extension ProductInfo {
    init(_ p: IAPCore.ProductInfo) {
        self.init(id: p.id, title: p.title, description: p.description, price: p.price, displayPrice: p.displayPrice,
                  currency: p.currency, kind: ProductKind(p.kind), subscriptionPeriod: p.subscriptionPeriod,
                  subscriptionGroupID: p.subscriptionGroupID, introductoryOffer: p.introductoryOffer.flatMap(ProductOffer.init),
                  introOfferEligible: p.introOfferEligible, familyShareable: p.familyShareable,
                  winBackOffers: p.winBackOffers.compactMap(ProductOffer.init))
    }
}

extension SubscriptionGroup {
    init(_ s: SubscriptionGroupStatus) {
        self.init(groupID: s.groupID, state: s.state, active: s.grantsAccess, productID: s.productID,
                  transactionID: s.transactionID, originalTransactionID: s.originalTransactionID,
                  expiresDate: s.expiresDateMs, willAutoRenew: s.willAutoRenew, expirationReason: s.expirationReason,
                  gracePeriodExpiresDate: s.gracePeriodExpiresDateMs, renewalDate: s.renewalDateMs,
                  renewalProductID: s.renewalProductID, renewalPrice: s.renewalPrice, currency: s.currency,
                  priceIncreaseStatus: s.priceIncreaseStatus, verified: s.verified)
    }
}

extension AppTransactionInfo {
    init(_ a: IAPCore.AppTransactionInfo) {
        self.init(originalAppVersion: a.originalAppVersion, originalPurchaseDate: a.originalPurchaseDateMs,
                  appVersion: a.appVersion, environment: a.environment, verified: a.verified,
                  appTransactionID: a.appTransactionID, originalPlatform: a.originalPlatform, preorderDate: a.preorderDateMs)
    }
}
