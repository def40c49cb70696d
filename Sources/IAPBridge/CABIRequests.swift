import IAPCore

// The C ABI of the store requests beyond buying (include/iap_bridge.h,
// "Subscriptions, app transaction, sheets, StoreKit messages").

@_cdecl("iap_subscription_status")
public func iap_subscription_status(_ b: OpaquePointer?, _ idsJSON: UnsafePointer<CChar>?) -> Int32 {
    withBridge("iap_subscription_status", b) { (c: Coordinator) throws(IAPError) in
        // NULL: every group the player ever subscribed in.
        try c.subscriptionStatus(productIDs: idsJSON == nil ? [] : try CStrings.productIDs(idsJSON))
    }
}

@_cdecl("iap_app_transaction")
public func iap_app_transaction(_ b: OpaquePointer?) -> Int32 {
    withBridge("iap_app_transaction", b) { (c: Coordinator) throws(IAPError) in try c.appTransaction() }
}

@_cdecl("iap_manage_subscriptions")
public func iap_manage_subscriptions(_ b: OpaquePointer?) -> Int32 {
    withBridge("iap_manage_subscriptions", b) { (c: Coordinator) throws(IAPError) in try c.showSheet(.manageSubscriptions) }
}

@_cdecl("iap_request_refund")
public func iap_request_refund(_ b: OpaquePointer?, _ transactionID: UnsafePointer<CChar>?) -> Int32 {
    withBridge("iap_request_refund", b) { (c: Coordinator) throws(IAPError) in
        let id = try CStrings.string(transactionID, name: "transaction_id", limit: 64)
        try c.showSheet(.refund(transactionID: id))
    }
}

@_cdecl("iap_manage_subscription_group")
public func iap_manage_subscription_group(_ b: OpaquePointer?, _ groupID: UnsafePointer<CChar>?) -> Int32 {
    withBridge("iap_manage_subscription_group", b) { (c: Coordinator) throws(IAPError) in
        let g = try CStrings.string(groupID, name: "group_id", limit: 255)
        try c.showSheet(.manageSubscriptionGroup(groupID: g))
    }
}

@_cdecl("iap_redeem_offer_code")
public func iap_redeem_offer_code(_ b: OpaquePointer?) -> Int32 {
    withBridge("iap_redeem_offer_code", b) { (c: Coordinator) throws(IAPError) in try c.showSheet(.offerCode) }
}

@_cdecl("iap_show_store_messages")
public func iap_show_store_messages(_ b: OpaquePointer?) -> Int32 {
    withBridge("iap_show_store_messages", b) { (c: Coordinator) throws(IAPError) in try c.showStoreMessages() }
}
