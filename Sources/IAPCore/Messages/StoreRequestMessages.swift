// The messages that answer the game's store requests (StoreRequest.swift).
// None is stored or needs a confirm: each describes the store's state, which
// the store keeps, and can be asked for again.
extension Messages {
    /// `"subscription"`: the status of subscription groups, at open, on
    /// request and when one changes.
    public static func subscriptions(_ list: [SubscriptionGroupStatus], invalid: [String], reason: UpdateReason) -> [UInt8] {
        var w = JSONObjectWriter()
        w.text("type", "subscription")
        w.string("reason", reason.rawValue)
        w.value("groups", .array(list.map(describe)))
        w.value("invalid", .array(invalid.map { .string($0) }))
        return w.finish()
    }

    public static func describe(_ s: SubscriptionGroupStatus) -> JSONValue {
        func date(_ ms: Int64?) -> JSONValue { ms.map { .number(String($0)) } ?? .null }
        func text(_ v: String?) -> JSONValue { v.map { .string($0) } ?? .null }
        return .object([
            "groupID": .string(s.groupID),
            "state": .string(s.state),
            "active": .bool(s.grantsAccess),
            "productID": .string(s.productID),
            "transactionID": .string(s.transactionID),
            "originalTransactionID": .string(s.originalTransactionID),
            "expiresDate": date(s.expiresDateMs),
            "willAutoRenew": .bool(s.willAutoRenew),
            "expirationReason": text(s.expirationReason),
            "gracePeriodExpiresDate": date(s.gracePeriodExpiresDateMs),
            "renewalDate": date(s.renewalDateMs),
            "renewalProductID": text(s.renewalProductID),
            "renewalPrice": text(s.renewalPrice),
            "currency": .string(s.currency),
            "priceIncreaseStatus": .string(s.priceIncreaseStatus),
            "verified": .bool(s.verified),
        ])
    }

    /// `"app"`: the app transaction, or `error` when the store could not give it.
    public static func appTransaction(_ info: AppTransactionInfo?, error: String?) -> [UInt8] {
        var w = JSONObjectWriter()
        w.text("type", "app")
        if let info {
            w.string("originalAppVersion", info.originalAppVersion)
            w.int("originalPurchaseDate", info.originalPurchaseDateMs)
            w.string("appVersion", info.appVersion)
            w.string("environment", info.environment)
            w.bool("verified", info.verified)
            w.string("appTransactionID", info.appTransactionID)
            w.string("originalPlatform", info.originalPlatform)
            w.int("preorderDate", info.preorderDateMs)
        } else {
            w.string("error", error ?? "the store gave no app transaction")
        }
        return w.finish()
    }

    /// `"sheet"`: a system sheet closed.
    public static func sheet(_ sheet: StoreSheet, outcome: String, message: String?) -> [UInt8] {
        var w = JSONObjectWriter()
        w.text("type", "sheet")
        w.string("sheet", sheet.name)
        w.string("outcome", outcome)
        if case .refund(let id) = sheet { w.string("transactionID", id) }
        if case .manageSubscriptionGroup(let g) = sheet { w.string("subscriptionGroupID", g) }
        if let message { w.string("message", message) }
        return w.finish()
    }

    /// `"storeMessage"`: StoreKit has a message for the player; `state` says
    /// whether it is `shown` now or `deferred` until `iap_show_store_messages`.
    public static func storeMessage(id: String, reason: String, state: String) -> [UInt8] {
        var w = JSONObjectWriter()
        w.text("type", "storeMessage")
        w.string("id", id)
        w.string("reason", reason)
        w.string("state", state)
        return w.finish()
    }
}
