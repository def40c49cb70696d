import IAPCore

// The simulated App Store's answers to the game's store requests
// (subscription status, app transaction, sheets, StoreKit messages) and the
// subscription states billing_issue / price_increase lead to.

extension SimulatedStore {
    /// Apple's billing retry lasts up to 60 days.
    static let billingRetryMs: Int64 = 60 * 86_400_000

    /// The grace period of a failed renewal when the catalog enables it:
    /// 6 days for weekly plans, 16 for longer ones (Apple's 16-day option).
    func graceMsLocked(productID: String) -> Int64? {
        guard catalog.settings.billingGracePeriod else { return nil }
        let period = catalog.product(productID)?.subscriptionPeriod ?? "P1M"
        return (period == "P1W" ? 6 : 16) * 86_400_000
    }

    /// True while `t`, the group's latest, is past its end in a billing
    /// grace period (the player keeps access).
    func inGraceLocked(group: String, _ t: SimTransaction, now: Int64) -> Bool {
        guard billingIssue.contains(group), t.revokedMs == nil, let exp = t.expiresMs, exp <= now,
              let grace = graceMsLocked(productID: t.productID) else { return false }
        return now < exp + grace
    }

    /// Every group of the catalog, sorted.
    var subscriptionGroups: [String] {
        Set(catalog.products.compactMap { $0.kind == .autoRenewableSubscription ? $0.subscriptionGroupID : nil }).sorted()
    }

    /// StoreKit's `Product.SubscriptionInfo.Status` of one group.
    func statusLocked(group g: String) -> SubscriptionStatus {
        guard let last = latestInGroupLocked(g) else { return SubscriptionStatus(groupID: g, state: "none", currency: currency) }
        let now = nowLocked()
        let exp = last.expiresMs ?? 0
        let grace = graceMsLocked(productID: last.productID)
        var s = SubscriptionStatus(groupID: g, state: "subscribed", productID: last.productID, transactionID: String(last.id),
                                   originalTransactionID: String(last.originalID), expiresDateMs: last.expiresMs,
                                   currency: currency)
        if last.revokedMs != nil {
            s.state = "revoked"
        } else if exp > now {
            s.state = "subscribed"
        } else if billingIssue.contains(g), let grace, now < exp + grace {
            s.state = "inGracePeriod"
            s.gracePeriodExpiresDateMs = exp + grace
        } else if billingIssue.contains(g), now < exp + SimulatedStore.billingRetryMs {
            s.state = "inBillingRetryPeriod"
        } else {
            s.state = "expired"
        }
        let increase = priceIncrease[g]
        s.priceIncreaseStatus = increase.map { $0.agreed ? "agreed" : "pending" } ?? "noIncreasePending"
        let live = s.state == "subscribed" || s.state == "inGracePeriod" || s.state == "inBillingRetryPeriod"
        s.willAutoRenew = live && !autoRenewOff.contains(g)
        if s.state == "expired" || s.state == "revoked" || !s.willAutoRenew {
            if autoRenewOff.contains(g) {
                s.expirationReason = "autoRenewDisabled"
            } else if billingIssue.contains(g) {
                s.expirationReason = "billingError"
            } else if let increase, !increase.agreed {
                s.expirationReason = "didNotConsentToPriceIncrease"
            } else if s.state != "revoked" {
                s.expirationReason = "unknown"
            }
            s.willAutoRenew = false
        }
        if s.willAutoRenew {
            let renewal = nextRenewalProduct[g] ?? last.productID
            s.renewalProductID = renewal
            s.renewalDateMs = exp
            s.renewalPrice = increase?.price ?? catalog.product(renewal)?.price
        }
        return s
    }

    /// The status of every group the player ever subscribed in.
    func subscribedStatusesLocked() -> [SubscriptionStatus] {
        subscriptionGroups.filter { latestInGroupLocked($0) != nil }.map { statusLocked(group: $0) }
    }

    /// Reports the groups whose status changed since last reported.
    func appendStatusChangeLocked(_ out: inout [StoreEvent]) {
        var changed: [SubscriptionStatus] = []
        for s in subscribedStatusesLocked() where lastStatuses[s.groupID] != s {
            lastStatuses[s.groupID] = s
            changed.append(s)
        }
        if !changed.isEmpty { out.append(.subscriptions(changed, invalid: [], reason: "change")) }
    }

    /// A StoreKit message for the player, held until the coordinator shows it.
    func announceMessageLocked(reason: String, group: String, _ out: inout [StoreEvent]) {
        let id = "m\(nextMessageNumber)"
        nextMessageNumber += 1
        heldMessages[id] = (reason, group)
        out.append(.storeMessage(id: id, reason: reason))
    }

    // MARK: Store protocol

    public func validate(_ request: StoreRequest) throws(IAPError) {}

    public func perform(_ request: StoreRequest) {
        var out: [StoreEvent] = []
        lock.withLock {
            guard !stopped else { return }
            switch request {
            case .subscriptionStatus(let ids):
                processClockLocked(&out, announce: true)
                if ids.isEmpty {
                    out.append(.subscriptions(subscribedStatusesLocked(), invalid: [], reason: "request"))
                    return
                }
                var groups: [String] = []
                var invalid: [String] = []
                for id in ids {
                    guard let p = catalog.product(id), p.kind == .autoRenewableSubscription, let g = p.subscriptionGroupID else {
                        if !invalid.contains(id) { invalid.append(id) }
                        continue
                    }
                    if !groups.contains(g) { groups.append(g) }
                }
                out.append(.subscriptions(groups.map { statusLocked(group: $0) }, invalid: invalid, reason: "request"))
            case .appTransaction:
                let app = originalApp ?? (options.appVersion, nowLocked())
                out.append(.appTransaction(AppTransactionInfo(originalAppVersion: app.version, originalPurchaseDateMs: app.dateMs,
                                                              appVersion: options.appVersion, environment: "simulator"),
                                           error: nil))
            case .sheet(let sheet):
                let script = sheetScript.removeValue(forKey: sheet.name)
                if script?.outcome == "hold" {
                    heldSheet = sheet
                    return
                }
                answerSheetLocked(sheet, script, &out)
            case .showMessages(let ids):
                for id in ids {
                    guard let m = heldMessages.removeValue(forKey: id) else { continue }
                    // The simulated player agrees to what the message asks.
                    if m.reason == "priceIncreaseConsent", let inc = priceIncrease[m.group], !inc.agreed {
                        guard (try? persist([event("priceinc") {
                            $0.string("group", m.group); $0.string("price", inc.price); $0.bool("agreed", true)
                        }])) != nil else { continue }
                        priceIncrease[m.group] = (inc.price, true)
                    }
                }
                appendStatusChangeLocked(&out)
            }
        }
        emit(out)
    }

    /// The player's answer to a sheet: as scripted by sheet_next, else the
    /// default (manage and offer code: dismissed; refund: the player submits
    /// the request and Apple grants it).
    private func answerSheetLocked(_ sheet: StoreSheet, _ script: (outcome: String, productID: String?)?, _ out: inout [StoreEvent]) {
        switch sheet {
        case .manageSubscriptions:
            if script?.outcome == "cancel", let pid = script?.productID, let g = catalog.product(pid)?.subscriptionGroupID {
                if (try? persist([event("renew") { $0.string("group", g); $0.bool("on", false) }])) != nil {
                    autoRenewOff.insert(g)
                }
                appendStatusChangeLocked(&out)
            }
            out.append(.sheet(sheet, outcome: "dismissed", message: nil))
        case .offerCode:
            if script?.outcome == "redeem", let pid = script?.productID, let p = catalog.product(pid),
               let t = try? chargeLocked(p, token: nil, storeInitiated: true, &out) {
                out.append(.transaction(t.storeTransaction(currency: currency), .update))
                appendEntitlementChangeLocked(&out)
            }
            out.append(.sheet(sheet, outcome: "dismissed", message: nil))
        case .refund(let text):
            guard let id = Int64(text), var t = txns[id] else {
                out.append(.sheet(sheet, outcome: "error", message: "no transaction \(text) for this player"))
                return
            }
            switch script?.outcome ?? "approve" {
            case "cancel":
                out.append(.sheet(sheet, outcome: "userCancelled", message: nil))
            case "decline":
                // Submitted; Apple declines it later: nothing else happens.
                out.append(.sheet(sheet, outcome: "success", message: nil))
            default:
                guard t.revokedMs == nil else {
                    out.append(.sheet(sheet, outcome: "error", message: "a refund of transaction \(text) was already requested"))
                    return
                }
                out.append(.sheet(sheet, outcome: "success", message: nil))
                let now = nowLocked()
                guard (try? persist([event("revoke") { $0.int("id", id); $0.int("at", now); $0.string("reason", "refunded") }])) != nil
                else { return }
                t.revokedMs = now
                t.revokeReason = "refunded"
                txns[id] = t
                out.append(.transaction(t.storeTransaction(currency: currency), .update))
                appendEntitlementChangeLocked(&out)
            }
        }
    }
}
