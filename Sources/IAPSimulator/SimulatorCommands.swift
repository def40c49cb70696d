import IAPCore

/// `iap_simulator`: drives the simulated store with `{"op": ...}` commands
/// (docs/SIMULATOR.md). Every op answers a JSON object.
enum SimulatorCommands {
    static let ops = ["transactions", "fail_next", "cancel_next", "ask_to_buy", "pending", "approve", "decline",
                      "interrupt_next", "resolve", "refund", "advance", "external_purchase", "forge", "auto_renew",
                      "clock", "entitlements", "promote", "payments_allowed", "storefront", "family_share",
                      "billing_issue", "billing_resolve", "price_increase", "sheet_next", "sheet_close", "app_transaction", "status"]

    static func run(_ command: JSONValue, on s: SimulatedStore) throws(IAPError) -> JSONValue {
        guard let o = command.objectValue else { throw IAPError(.badJSON, "a simulator command must be a JSON object") }
        guard let op = o["op"]?.stringValue else { throw IAPError(.badJSON, "a simulator command needs \"op\": a string") }
        var out: [StoreEvent] = []
        // What an op reported before it failed happened all the same (a
        // renewal the clock charged first): it is reported either way.
        defer { s.emit(out) }
        return try s.lock.withLock { () throws(IAPError) -> JSONValue in
            guard !s.stopped else { throw IAPError(.closed, "the store is stopped") }
            switch op {
            case "transactions":
                return .object(["transactions": .array(s.txns.keys.sorted().map { describe(s.txns[$0]!) })])
            case "fail_next":
                guard let name = o["error"]?.stringValue else { throw IAPError(.badJSON, "fail_next needs \"error\": a store error name") }
                guard let f = SimulatedStore.failure(named: name) else {
                    throw IAPError(.invalidArgument, "unknown store error \"\(name)\" (networkError, notAllowed, productUnavailable, unknown, cancelled)")
                }
                // "chargeLater": the store reports the error, but the player
                // is charged all the same (a bank check that passes after
                // the error): the charge waits as pending, reason
                // "chargeLater", until `resolve` delivers it through the
                // update stream with the click's token.
                guard o["chargeLater"] == nil || o["chargeLater"]?.boolValue != nil else {
                    throw IAPError(.badJSON, "fail_next's \"chargeLater\" must be true or false")
                }
                // Only an error that leaves the payment's fate open can be
                // followed by a charge (results "3" and "8", PROTOCOL.md): a
                // cancel or a refusal charged later contradicted the docs.
                if o["chargeLater"]?.boolValue == true && f != .networkError && f != .unknown {
                    throw IAPError(.invalidArgument, "fail_next's \"chargeLater\" goes with networkError or unknown (the errors a store can charge after), not \(name)")
                }
                s.failNext = f
                s.chargeLaterNext = o["chargeLater"]?.boolValue ?? false
                return ok()
            case "cancel_next":
                s.cancelNext = true
                return ok()
            case "interrupt_next":
                s.interruptNext = true
                return ok()
            case "ask_to_buy":
                guard let on = o["enabled"]?.boolValue else { throw IAPError(.badJSON, "ask_to_buy needs \"enabled\": true or false") }
                try s.persist([event("ask") { $0.bool("on", on) }])
                s.askToBuy = on
                return ok()
            case "pending":
                return .object(["pending": .array(s.pendingOrder.compactMap { s.pending[$0] }.map { p in
                    .object(["id": .string(p.id), "productID": .string(p.productID), "reason": .string(p.reason),
                             "key": .string(String(p.key))])
                })])
            case "approve", "resolve":
                let p = try pendingItem(o, s, reasons: op == "approve" ? ["askToBuy"] : ["interrupted", "chargeLater"])
                guard let product = s.catalog.product(p.productID) else {
                    // A charge made when its purchase failed is real: it waits
                    // for the catalog to have its product again. A purchase
                    // still to be made is answered: not available.
                    if p.reason == "chargeLater" {
                        throw IAPError(.unknownProduct, "product \(p.productID) left the catalog: this charge (made when its purchase failed) is delivered once the catalog has it again")
                    }
                    try s.unpendLocked(p.id)
                    out.append(.purchaseFailed(key: p.key, productID: p.productID, failure: .productUnavailable))
                    return ok()
                }
                // What the player asked for: the units, and the win-back
                // offer. A charge made after an error (chargeLater) was made
                // then, on the offer's terms; an approval is a purchase made
                // now: the offer only while the player may still take it,
                // else nothing is charged and the key's result says so.
                var offer: TransactionOffer? = nil
                if let w = p.winBackOfferID, p.reason == "chargeLater" {
                    offer = product.winBackOffers.first { $0.id == w }?.transactionOffer
                } else if let w = p.winBackOfferID {
                    guard let o = s.eligibleWinBackOfferLocked(product, id: w) else {
                        try s.unpendLocked(p.id)
                        out.append(.purchaseFailed(key: p.key, productID: p.productID, failure: .productUnavailable))
                        return ok()
                    }
                    offer = o
                }
                // An approval is a purchase made now: something the player
                // owns by then (bought since, or a second request approved)
                // is not charged again; the request's key gets the existing
                // transaction, as a purchase call would (an attack found two
                // approvals charging a non-consumable twice). A chargeLater
                // charge was made when it failed: it stands.
                if p.reason != "chargeLater", let owned = s.ownedTransactionLocked(for: product) {
                    try s.unpendLocked(p.id)
                    var st = owned.storeTransaction(currency: s.currency)
                    st.alreadyOwned = true
                    out.append(.transaction(st, .purchase(key: p.key)))
                    return .object(["ok": .bool(true), "transactionID": .string(String(owned.id))])
                }
                let t = try s.chargeLocked(product, token: p.token, storeInitiated: false, quantity: p.quantity, offer: offer, &out)
                try s.unpendLocked(p.id)
                out.append(.transaction(t.storeTransaction(currency: s.currency), .update))
                s.appendEntitlementChangeLocked(&out)
                return .object(["ok": .bool(true), "transactionID": .string(String(t.id))])
            case "decline":
                let p = try pendingItem(o, s, reasons: ["askToBuy"])
                try s.unpendLocked(p.id)
                out.append(.purchaseFailed(key: p.key, productID: p.productID, failure: .declined))
                return ok()
            case "refund":
                guard let text = o["transactionID"]?.stringValue else { throw IAPError(.badJSON, "refund needs \"transactionID\": a string") }
                guard let id = Int64(text), var t = s.txns[id] else { throw IAPError(.notFound, "no transaction \(text)") }
                guard t.revokedMs == nil else { throw IAPError(.invalidArgument, "transaction \(text) is already refunded") }
                let now = s.nowLocked()
                let reason = o["reason"]?.stringValue ?? "refunded"
                try s.persist([event("revoke") { $0.int("id", id); $0.int("at", now); $0.string("reason", reason) }])
                t.revokedMs = now
                t.revokeReason = reason
                s.txns[id] = t
                out.append(.transaction(t.storeTransaction(currency: s.currency), .update))
                s.appendEntitlementChangeLocked(&out)
                return ok()
            case "advance":
                guard let secs = o["seconds"]?.int64Value, secs >= 0, secs <= 100 * 365 * 86_400 else {
                    throw IAPError(.badJSON, "advance needs \"seconds\": a whole number from 0 to 3153600000")
                }
                let offset = SimulatedStore.clampedClock(s.clockOffsetMs, secs * 1000)
                // Written without the open's lift (startFromFloor).
                try s.persist([event("clock") { $0.int("offset", offset - s.clockLiftMs) }])
                s.clockOffsetMs = offset
                s.processClockLocked(&out, announce: true)
                return .object(["ok": .bool(true), "now": .number(String(s.nowLocked()))])
            case "clock":
                return .object(["now": .number(String(s.nowLocked()))])
            case "auto_renew":
                guard let pid = o["productID"]?.stringValue, let on = o["enabled"]?.boolValue else {
                    throw IAPError(.badJSON, "auto_renew needs \"productID\" and \"enabled\"")
                }
                guard let g = s.catalog.product(pid)?.subscriptionGroupID else {
                    throw IAPError(.notFound, "\(pid) is not an auto-renewable subscription in the catalog")
                }
                // Apple's rule: the switch belongs to a subscription that still
                // runs (subscribed, grace period, billing retry). One that
                // ended is bought again, a new period from that day; turning
                // auto-renew on after the end changes nothing (no revival, no
                // renewals dated back to the old end).
                s.processClockLocked(&out, announce: true)
                let state = s.statusLocked(group: g).state
                if ["subscribed", "inGracePeriod", "inBillingRetryPeriod"].contains(state), s.autoRenewOff.contains(g) == on {
                    try s.persist([event("renew") { $0.string("group", g); $0.bool("on", on) }])
                    if on { s.autoRenewOff.remove(g) } else { s.autoRenewOff.insert(g) }
                    s.appendEntitlementChangeLocked(&out)
                }
                return .object(["ok": .bool(true), "status": Messages.describe(s.statusLocked(group: g))])
            case "external_purchase", "forge":
                guard let pid = o["productID"]?.stringValue else { throw IAPError(.badJSON, "\(op) needs \"productID\"") }
                guard let product = s.catalog.product(pid) else { throw IAPError(.unknownProduct, "product \"\(pid)\" is not in the catalog") }
                let t = try s.chargeLocked(product, token: nil, storeInitiated: true, verified: op != "forge", &out)
                out.append(.transaction(t.storeTransaction(currency: s.currency), .update))
                s.appendEntitlementChangeLocked(&out)
                return .object(["ok": .bool(true), "transactionID": .string(String(t.id))])
            case "promote":
                // The player taps a promoted in-app purchase on the App Store
                // page: the game is told and decides (it buys with iap_buy).
                guard let pid = o["productID"]?.stringValue else { throw IAPError(.badJSON, "promote needs \"productID\"") }
                guard s.catalog.product(pid) != nil else { throw IAPError(.unknownProduct, "product \"\(pid)\" is not in the catalog") }
                out.append(.promoted(productID: pid, offer: nil))
                return ok()
            case "entitlements":
                return .object(["entitlements": .array(s.entitlementTransactionsLocked().map { describe($0) })])
            case "family_share":
                // A family member buys a shareable product; it reaches this
                // player through Family Sharing (store-initiated, no charge here).
                guard let pid = o["productID"]?.stringValue else { throw IAPError(.badJSON, "family_share needs \"productID\"") }
                guard let product = s.catalog.product(pid) else { throw IAPError(.unknownProduct, "product \"\(pid)\" is not in the catalog") }
                guard product.familyShareable, product.kind != .consumable else {
                    throw IAPError(.invalidArgument, "product \"\(pid)\" is not family-shareable (\"familyShareable\": true in the catalog, and not a consumable)")
                }
                let t = try s.chargeLocked(product, token: nil, storeInitiated: true, familyShared: true, &out)
                out.append(.transaction(t.storeTransaction(currency: s.currency), .update))
                s.appendEntitlementChangeLocked(&out)
                return .object(["ok": .bool(true), "transactionID": .string(String(t.id))])
            case "payments_allowed":
                // Parental controls (AppStore.canMakePayments).
                guard let on = o["enabled"]?.boolValue else { throw IAPError(.badJSON, "payments_allowed needs \"enabled\": true or false") }
                try s.persist([event("payments") { $0.bool("on", on) }])
                if s.paymentsAllowed != on {
                    s.paymentsAllowed = on
                    out.append(.status(canMakePayments: on, storefront: s.storefront, reason: .change))
                }
                return ok()
            case "storefront":
                // The player's App Store country changes (prices' currency follows).
                guard let c = o["countryCode"]?.stringValue, c.utf8.count == 3, c.utf8.allSatisfy({ $0 >= 65 && $0 <= 90 }) else {
                    throw IAPError(.invalidArgument, "storefront needs \"countryCode\": an ISO 3166 alpha-3 code such as \"FRA\"")
                }
                try s.persist([event("storefront") { $0.string("country", c) }])
                if s.storefront != c {
                    s.storefront = c
                    out.append(.status(canMakePayments: s.paymentsAllowed, storefront: c, reason: .change))
                }
                return ok()
            case "billing_issue", "billing_resolve", "price_increase", "sheet_next", "sheet_close", "app_transaction", "status":
                return try SimulatorSubscriptionCommands.run(op, o, on: s, &out)
            default:
                throw IAPError(.unknownOp, "unknown simulator op \"\(op)\" (known: \(ops.joined(separator: ", ")))")
            }
        }
    }

    private static func ok() -> JSONValue { .object(["ok": .bool(true)]) }

    private static func pendingItem(_ o: [String: JSONValue], _ s: SimulatedStore, reasons: [String]) throws(IAPError) -> SimPending {
        guard let id = o["id"]?.stringValue else { throw IAPError(.badJSON, "this op needs \"id\" (from the pending op)") }
        guard let p = s.pending[id] else { throw IAPError(.notFound, "no pending purchase \"\(id)\"") }
        guard reasons.contains(p.reason) else {
            throw IAPError(.invalidArgument, "pending purchase \(id) is \(p.reason), not \(reasons.joined(separator: " or "))")
        }
        return p
    }

    static func describe(_ t: SimTransaction) -> JSONValue {
        var o: [String: JSONValue] = [
            "transactionID": .string(String(t.id)),
            "productID": .string(t.productID),
            "originalID": .string(String(t.originalID)),
            "finished": .bool(t.finished),
            "revoked": .bool(t.revokedMs != nil),
            "purchaseDate": .number(String(t.purchaseMs)),
            "expiresDate": t.expiresMs.map { .number(String($0)) } ?? .null,
            "kind": .string(t.kind.rawValue),
            "verified": .bool(t.verified),
            "storeInitiated": .bool(t.storeInitiated),
            "upgraded": .bool(t.upgraded),
        ]
        if let k = t.token?.key { o["key"] = .string(String(k)) }
        return .object(o)
    }
}
