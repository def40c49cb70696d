import IAPCore

// How the simulated App Store bills subscriptions: renewals, billing issues
// (grace period, billing retry), price increases and their consent, and the
// status each group is in (StoreKit's Product.SubscriptionInfo.Status). All
// under the store's lock.
//
// The rules, as Apple's side plays them:
// - A renewal charges when auto-renew is on, the card works (no billing
//   issue), the player agreed to any price increase of the product it
//   renews into, and the subscription has not ended for good (`lapsed`).
// - A failed renewal keeps the player subscribed for a grace period where the
//   catalog enables it, then retries for up to 60 days (no access); fixing
//   the card charges the missed period (grace: from the old end date, so
//   nothing is lost) or starts a new one (retry). After 60 days the
//   subscription has ended: fixing the card then charges nothing.
// - A price increase the player did not agree to ends the subscription at
//   its renewal. An agreed one becomes the product's renewal price for good.
// - Auto-renew off: no grace, no retry; the subscription ends with its period.
// - A purchase in the group proves the card works (the billing issue ends)
//   and starts afresh (an unanswered increase of that product is dropped).

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
        guard billingIssue.contains(group), !autoRenewOff.contains(group), lapsed[t.id] == nil, t.revokedMs == nil,
              let exp = t.expiresMs, exp <= now, let grace = graceMsLocked(productID: t.productID) else { return false }
        return now < exp + grace
    }

    /// The product the group's next renewal buys (a downgrade takes effect then).
    func renewalProductLocked(group g: String, _ last: SimTransaction) -> String { nextRenewalProduct[g] ?? last.productID }

    /// What a renewal of this product charges: an agreed increase, else a
    /// price an earlier increase set, else the catalog's.
    func renewalPriceLocked(_ productID: String) -> String? {
        if let inc = priceIncrease[productID], inc.agreed { return inc.price }
        return repriced[productID] ?? catalog.product(productID)?.price
    }

    /// Whether an increase of this product still waits for the player.
    func consentPendingLocked(_ productID: String) -> Bool { priceIncrease[productID].map { !$0.agreed } ?? false }

    /// Whether the group's subscription, `last` its latest transaction, can
    /// renew now (the rules above).
    func renewsLocked(group g: String, _ last: SimTransaction) -> Bool {
        !autoRenewOff.contains(g) && !billingIssue.contains(g) && lapsed[last.id] == nil
            && !consentPendingLocked(renewalProductLocked(group: g, last))
    }

    /// Charges the renewal of `last` for a period starting at `startMs`;
    /// false if it could not be recorded.
    @discardableResult
    func renewLocked(group g: String, after last: SimTransaction, startMs: Int64, _ out: inout [StoreEvent]) -> Bool {
        let productID = renewalProductLocked(group: g, last)
        guard let p = catalog.product(productID), let price = renewalPriceLocked(productID) else { return false }
        var t = SimTransaction(id: nextTxnID, originalID: last.originalID, productID: p.id, kind: p.kind,
                               purchaseMs: startMs, price: price)
        t.expiresMs = (ISODuration(p.subscriptionPeriod ?? "P1M") ?? ISODuration("P1M")!).added(to: startMs)
        if let terms = offerForRenewalLocked(after: last, product: p) {
            t.offer = terms.transactionOffer
            t.price = terms.price
            t.expiresMs = terms.firstTermEnd(from: startMs)
        }
        t.token = last.token
        t.storeInitiated = true
        t.storefront = storefront
        var events = [t.encoded()]
        let increaseTakesEffect = priceIncrease[productID]?.agreed == true
        if increaseTakesEffect {
            // The new price is the product's price from now on.
            events.append(event("repriced") { $0.string("product", productID); $0.string("price", price) })
            events.append(event("priceinc") { $0.string("product", productID) })
        }
        do throws(IAPError) { try persist(events) } catch { return false }
        insert(t)
        nextRenewalProduct[g] = nil
        if increaseTakesEffect {
            repriced[productID] = price
            priceIncrease[productID] = nil
        }
        var st = t.storeTransaction(currency: currency)
        st.isRenewal = true
        out.append(.transaction(st, .update))
        return true
    }

    /// Ends the group's subscription for good once it can never renew:
    /// billing retry ran out, or the renewal came with an increase the
    /// player did not agree to.
    func lapseIfEndedLocked(group g: String, now: Int64) {
        guard let last = latestInGroupLocked(g), last.revokedMs == nil, lapsed[last.id] == nil, !autoRenewOff.contains(g),
              let exp = last.expiresMs, exp <= now else { return }
        let product = renewalProductLocked(group: g, last)
        if billingIssue.contains(g) {
            guard now >= exp + SimulatedStore.billingRetryMs else { return }
            lapseLocked(last, reason: "billingError", extra: [event("billing") { $0.string("group", g); $0.bool("on", false) }])
            billingIssue.remove(g)
        } else if consentPendingLocked(product) {
            lapseLocked(last, reason: "didNotConsentToPriceIncrease", extra: [event("priceinc") { $0.string("product", product) }])
            priceIncrease[product] = nil
        }
    }

    private func lapseLocked(_ last: SimTransaction, reason: String, extra: [[UInt8]]) {
        let events = [event("lapse") { $0.int("id", last.id); $0.string("reason", reason) }] + extra
        guard (try? persist(events)) != nil else { return }
        lapsed[last.id] = reason
    }

    /// A verified purchase in the group: the card works, and the player
    /// bought the product at today's price.
    func clearOnPurchaseLocked(group g: String, product: String) {
        var events: [[UInt8]] = []
        if billingIssue.contains(g) { events.append(event("billing") { $0.string("group", g); $0.bool("on", false) }) }
        if consentPendingLocked(product) { events.append(event("priceinc") { $0.string("product", product) }) }
        guard !events.isEmpty, (try? persist(events)) != nil else { return }
        billingIssue.remove(g)
        if consentPendingLocked(product) { priceIncrease[product] = nil }
    }

    /// StoreKit's `Product.SubscriptionInfo.Status` of one group.
    func statusLocked(group g: String) -> SubscriptionGroupStatus {
        guard let last = latestInGroupLocked(g) else { return SubscriptionGroupStatus(groupID: g, state: "none", currency: currency) }
        return statusLocked(group: g, latest: last)
    }

    /// The status of a group the player subscribed in, `last` its latest
    /// transaction.
    private func statusLocked(group g: String, latest last: SimTransaction) -> SubscriptionGroupStatus {
        let now = nowLocked()
        let exp = last.expiresMs ?? 0
        var s = SubscriptionGroupStatus(groupID: g, state: "expired", productID: last.productID, transactionID: String(last.id),
                                   originalTransactionID: String(last.originalID), expiresDateMs: last.expiresMs,
                                   currency: currency, verified: last.verified)
        let renewal = renewalProductLocked(group: g, last)
        let off = autoRenewOff.contains(g)
        if last.revokedMs != nil {
            s.state = "revoked"
        } else if exp > now {
            s.state = "subscribed"
            s.willAutoRenew = !off
            if off { s.expirationReason = "autoRenewDisabled" }
        } else if let reason = lapsed[last.id] {
            s.expirationReason = reason
        } else if off {
            s.expirationReason = "autoRenewDisabled"
        } else if billingIssue.contains(g) && now < exp + SimulatedStore.billingRetryMs {
            // The period ended unpaid; Apple keeps trying (StoreKit reports
            // billingError with willAutoRenew true).
            s.willAutoRenew = true
            s.expirationReason = "billingError"
            if let grace = graceMsLocked(productID: last.productID), now < exp + grace {
                s.state = "inGracePeriod"
                s.gracePeriodExpiresDateMs = exp + grace
            } else {
                s.state = "inBillingRetryPeriod"
            }
        } else if billingIssue.contains(g) {
            s.expirationReason = "billingError"
        } else if consentPendingLocked(renewal) {
            s.expirationReason = "didNotConsentToPriceIncrease"
        } else {
            s.expirationReason = "unknown"
        }
        s.priceIncreaseStatus = priceIncrease[renewal].map { $0.agreed ? "agreed" : "pending" } ?? "noIncreasePending"
        if s.willAutoRenew {
            s.renewalProductID = renewal
            if s.state == "subscribed" { s.renewalDateMs = exp }
            s.renewalPrice = priceIncrease[renewal]?.price ?? renewalPriceLocked(renewal)
        }
        return s
    }

    /// The status of every group the player ever subscribed in.
    /// A group never subscribed in is skipped before any status is built:
    /// every purchase asks this twice, most of them of consumables.
    func subscribedStatusesLocked() -> [SubscriptionGroupStatus] {
        var out: [SubscriptionGroupStatus] = []
        for g in subscriptionGroups {
            guard let last = latestInGroupLocked(g) else { continue }
            out.append(statusLocked(group: g, latest: last))
        }
        return out
    }

    /// Reports what changed since last reported: the entitlements when the
    /// list changed ("change"), then the groups whose status changed. Every
    /// path that can change a subscription's status (the clock, a purchase,
    /// a refund, auto-renew, a sheet, a message) reports through here, so
    /// `"entitlements"` never lag behind `"subscription"` (issue 22): an
    /// expiry, a grace period's end or auto-renew turned off in it takes the
    /// plan out of the entitlements the moment the status says so.
    func appendEntitlementChangeLocked(_ out: inout [StoreEvent]) {
        let ids = entitlementIDsLocked()
        if ids != lastEntitlementIDs {
            lastEntitlementIDs = ids
            out.append(.entitlements(entitlementsLocked(), reason: .change, nowMs: nowLocked()))
        }
        appendStatusChangeLocked(&out)
    }

    /// Reports the groups whose status changed since last reported (only
    /// through `appendEntitlementChangeLocked`).
    private func appendStatusChangeLocked(_ out: inout [StoreEvent]) {
        var changed: [SubscriptionGroupStatus] = []
        for s in subscribedStatusesLocked() where lastStatuses[s.groupID] != s {
            lastStatuses[s.groupID] = s
            changed.append(s)
        }
        if !changed.isEmpty { out.append(.subscriptions(changed, invalid: [], reason: .change)) }
    }

    /// A StoreKit message for the player about a group or product, held
    /// until the coordinator has it shown.
    func announceMessageLocked(reason: String, subject: String, _ out: inout [StoreEvent]) {
        let id = "m\(nextMessageNumber)"
        nextMessageNumber += 1
        heldMessages[id] = (reason, subject)
        out.append(.storeMessage(id: id, reason: reason))
    }

    /// At launch, the messages that still matter: a billing issue of a
    /// subscription Apple still tries to renew (or that still runs), a price
    /// increase of the product a running subscription renews into.
    func reannounceMessagesLocked(_ out: inout [StoreEvent]) {
        for g in subscriptionGroups {
            guard let last = latestInGroupLocked(g) else { continue }
            let state = statusLocked(group: g).state
            let live = state == "subscribed" || state == "inGracePeriod" || state == "inBillingRetryPeriod"
            guard live else { continue }
            if billingIssue.contains(g) { announceMessageLocked(reason: "billingIssue", subject: g, &out) }
            let renewal = renewalProductLocked(group: g, last)
            if consentPendingLocked(renewal) { announceMessageLocked(reason: "priceIncreaseConsent", subject: renewal, &out) }
        }
    }
}
