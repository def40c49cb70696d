import IAPCore

/// The simulator ops for subscription billing, price increases, sheets and
/// the app transaction (docs/SIMULATOR.md). Run under the store's lock.
enum SimulatorSubscriptionCommands {
    static func run(_ op: String, _ o: [String: JSONValue], on s: SimulatedStore, _ out: inout [StoreEvent]) throws(IAPError) -> JSONValue {
        switch op {
        case "billing_issue":
            // The payment method fails: the group's next renewal cannot charge
            // (billing retry; a grace period where the catalog enables it).
            let g = try group(o, s, op)
            if !s.billingIssue.contains(g) {
                try s.persist([event("billing") { $0.string("group", g); $0.bool("on", true) }])
                s.billingIssue.insert(g)
                // StoreKit tells a subscriber; nobody else has anything to fix.
                let state = s.statusLocked(group: g).state
                if state == "subscribed" || state == "inGracePeriod" || state == "inBillingRetryPeriod" {
                    s.announceMessageLocked(reason: "billingIssue", subject: g, &out)
                }
            }
            s.processClockLocked(&out, announce: true)
            return ok(s, g)
        case "billing_resolve":
            // The player fixed the payment method. In grace the missed renewal
            // is charged from the old end date (processClockLocked); in billing
            // retry a new period starts now; once retry ran out (or with
            // auto-renew off, or an increase not agreed) nothing is charged.
            let g = try group(o, s, op)
            guard s.billingIssue.contains(g) else { return ok(s, g) }
            let retrying = s.statusLocked(group: g).state == "inBillingRetryPeriod"
            try s.persist([event("billing") { $0.string("group", g); $0.bool("on", false) }])
            s.billingIssue.remove(g)
            if retrying, let last = s.latestInGroupLocked(g), s.renewsLocked(group: g, last) {
                s.renewLocked(group: g, after: last, startMs: s.nowLocked(), &out)
            }
            s.processClockLocked(&out, announce: true)
            return ok(s, g)
        case "price_increase":
            // Apple raises the subscription's price; the player must consent
            // (a StoreKit message) or the subscription ends at its renewal.
            let pid = try product(o, s, op)
            guard let price = o["price"]?.stringValue.flatMap(Price.normalize) else {
                throw IAPError(.badJSON, "price_increase needs \"price\": the new price as a decimal string such as \"5.99\"")
            }
            try s.persist([event("priceinc") { $0.string("product", pid); $0.string("price", price); $0.bool("agreed", false) }])
            s.priceIncrease[pid] = (price, false)
            s.announceMessageLocked(reason: "priceIncreaseConsent", subject: pid, &out)
            s.appendEntitlementChangeLocked(&out)
            return ok(s, s.catalog.product(pid)?.subscriptionGroupID ?? "")
        case "sheet_next":
            // How the player answers the next sheet of a kind.
            guard let sheet = o["sheet"]?.stringValue, let outcome = o["outcome"]?.stringValue else {
                throw IAPError(.badJSON, "sheet_next needs \"sheet\" and \"outcome\"")
            }
            // "hold": the player leaves the sheet up until sheet_close.
            let allowed: [String: [String]] = ["manageSubscriptions": ["dismiss", "cancel", "hold"],
                                               "refund": ["approve", "decline", "cancel", "hold"],
                                               "offerCode": ["dismiss", "redeem", "hold"]]
            guard let outcomes = allowed[sheet] else {
                throw IAPError(.invalidArgument, "unknown sheet \"\(sheet)\" (manageSubscriptions, refund, offerCode)")
            }
            guard outcomes.contains(outcome) else {
                throw IAPError(.invalidArgument, "the \(sheet) sheet's outcome must be one of \(outcomes.joined(separator: ", ")), got \"\(outcome)\"")
            }
            let pid = o["productID"]?.stringValue
            if outcome == "cancel" && sheet == "manageSubscriptions" || outcome == "redeem" {
                guard let pid, let p = s.catalog.product(pid) else {
                    throw IAPError(.unknownProduct, "\(sheet) \(outcome) needs \"productID\": a product of the catalog")
                }
                if sheet == "manageSubscriptions" && p.kind != .autoRenewableSubscription {
                    throw IAPError(.invalidArgument, "\(pid) is not an auto-renewable subscription")
                }
            }
            s.sheetScript[sheet] = (outcome, pid)
            return .object(["ok": .bool(true)])
        case "sheet_close":
            // The player closes the sheet a "hold" kept up.
            guard let sheet = s.heldSheet else { throw IAPError(.notFound, "no sheet is up (sheet_next with outcome \"hold\" keeps one)") }
            s.heldSheet = nil
            out.append(.sheet(sheet, outcome: sheet.name == "refund" ? "userCancelled" : "dismissed", message: nil))
            return .object(["ok": .bool(true)])
        case "app_transaction":
            // Sets the version and date the player first got the game (a game
            // that went from paid to free checks them).
            guard let v = o["originalAppVersion"]?.stringValue, !v.isEmpty, v.utf8.count <= 64 else {
                throw IAPError(.badJSON, "app_transaction needs \"originalAppVersion\": a version string")
            }
            let at = o["purchaseDate"]?.int64Value ?? s.originalApp?.dateMs ?? s.nowLocked()
            // "preorderDate": ms, or null / absent: not pre-ordered.
            let preorder = o["preorderDate"]?.int64Value
            if let p = preorder, p <= 0 { throw IAPError(.invalidArgument, "app_transaction's \"preorderDate\" must be a positive time in ms") }
            try s.persist([event("app") { $0.string("version", v); $0.int("at", at); $0.int("preorder", preorder ?? 0) }])
            s.originalApp = (v, at)
            s.preorderDateMs = preorder
            return .object(["ok": .bool(true)])
        case "status":
            // The status of every group, as the store sees it now.
            s.processClockLocked(&out, announce: true)
            return .object(["groups": .array(s.subscriptionGroups.map { Messages.describe(s.statusLocked(group: $0)) })])
        default:
            throw IAPError(.unknownOp, "unknown simulator op \"\(op)\"")
        }
    }

    /// The auto-renewable subscription `"productID"` names.
    private static func product(_ o: [String: JSONValue], _ s: SimulatedStore, _ op: String) throws(IAPError) -> String {
        guard let pid = o["productID"]?.stringValue else { throw IAPError(.badJSON, "\(op) needs \"productID\"") }
        guard let p = s.catalog.product(pid) else { throw IAPError(.unknownProduct, "product \"\(pid)\" is not in the catalog") }
        guard p.kind == .autoRenewableSubscription, p.subscriptionGroupID != nil else {
            throw IAPError(.invalidArgument, "\(pid) is not an auto-renewable subscription")
        }
        return pid
    }

    /// The group of the subscription `"productID"` names.
    private static func group(_ o: [String: JSONValue], _ s: SimulatedStore, _ op: String) throws(IAPError) -> String {
        let pid = try product(o, s, op)
        return s.catalog.product(pid)?.subscriptionGroupID ?? ""
    }

    private static func ok(_ s: SimulatedStore, _ g: String) -> JSONValue {
        .object(["ok": .bool(true), "status": Messages.describe(s.statusLocked(group: g))])
    }
}
