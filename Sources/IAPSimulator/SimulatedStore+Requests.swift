import IAPCore

// The simulated App Store's answers to the game's store requests
// (subscription status, app transaction, sheets, StoreKit messages). The
// subscription states themselves: SimulatedStore+Billing.swift.

extension SimulatedStore {
    // MARK: Store protocol

    public func validate(_ request: StoreRequest) throws(IAPError) {
        if case .sheet(.manageSubscriptionGroup(let g)) = request, !subscriptionGroups.contains(g) {
            throw IAPError(.invalidArgument, "no subscription group \"\(g.prefix(60))\" in the simulator's catalog (a group ID is a subscriptionGroupID from the \"999\")")
        }
    }

    public func perform(_ request: StoreRequest) {
        var out: [StoreEvent] = []
        lock.withLock {
            guard !stopped else { return }
            switch request {
            case .subscriptionStatus(let ids):
                processClockLocked(&out, announce: true)
                if ids.isEmpty {
                    out.append(.subscriptions(subscribedStatusesLocked(), invalid: [], reason: .request))
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
                out.append(.subscriptions(groups.map { statusLocked(group: $0) }, invalid: invalid, reason: .request))
            case .appTransaction:
                let app = originalApp ?? (options.appVersion, nowLocked())
                out.append(.appTransaction(AppTransactionInfo(originalAppVersion: app.version, originalPurchaseDateMs: app.dateMs,
                                                              appVersion: options.appVersion, environment: "simulator",
                                                              appTransactionID: appTransactionID ?? "", originalPlatform: "iOS",
                                                              preorderDateMs: preorderDateMs),
                                           error: nil))
            case .sheet(let sheet):
                let script = sheetScript.removeValue(forKey: sheet.name)
                if script?.outcome == "hold" {
                    heldSheet = sheet
                    return
                }
                answerSheetLocked(sheet, script, &out)
            case .showMessages:
                for id in heldMessages.keys.sorted(by: SimulatedStore.messageOrder) {
                    guard let m = heldMessages[id] else { continue }
                    // The simulated player agrees to what the message asks.
                    if m.reason == "priceIncreaseConsent", let inc = priceIncrease[m.subject], !inc.agreed {
                        guard (try? persist([event("priceinc") {
                            $0.string("product", m.subject); $0.string("price", inc.price); $0.bool("agreed", true)
                        }])) != nil else {
                            out.append(.storeMessageShown(id: id, reason: m.reason, shown: false))
                            continue
                        }
                        priceIncrease[m.subject] = (inc.price, true)
                    }
                    heldMessages[id] = nil
                    out.append(.storeMessageShown(id: id, reason: m.reason, shown: true))
                }
                appendEntitlementChangeLocked(&out)
            }
        }
        emit(out)
    }

    /// Messages in the order they came ("m2" before "m10").
    static func messageOrder(_ a: String, _ b: String) -> Bool {
        (Int(a.dropFirst()) ?? 0, a) < (Int(b.dropFirst()) ?? 0, b)
    }

    /// Whether the player has `p` now: an owned non-consumable, or a running
    /// subscription of its group.
    func ownsLocked(_ p: CatalogProduct) -> Bool {
        switch p.kind {
        case .nonConsumable: return ownedNonConsumableLocked(p.id) != nil
        case .autoRenewableSubscription: return p.subscriptionGroupID.flatMap { activeSubscriptionLocked(group: $0) } != nil
        case .consumable, .nonRenewingSubscription: return false
        }
    }

    /// The player's answer to a sheet: as scripted by sheet_next, else the
    /// default (manage and offer code: dismissed; refund: the player submits
    /// the request and Apple grants it).
    private func answerSheetLocked(_ sheet: StoreSheet, _ script: (outcome: String, productID: String?)?, _ out: inout [StoreEvent]) {
        switch sheet {
        case .manageSubscriptions, .manageSubscriptionGroup:
            // The sheet of one group cancels in that group only.
            var shown: String? = nil
            if case .manageSubscriptionGroup(let g) = sheet { shown = g }
            if script?.outcome == "cancel", let pid = script?.productID, let g = catalog.product(pid)?.subscriptionGroupID,
               shown == nil || shown == g {
                if (try? persist([event("renew") { $0.string("group", g); $0.bool("on", false) }])) != nil {
                    autoRenewOff.insert(g)
                }
                appendEntitlementChangeLocked(&out)
            }
            out.append(.sheet(sheet, outcome: "dismissed", message: nil))
        case .offerCode:
            // A code for something the player has (an owned item, a running
            // subscription of its group) charges nothing new.
            if script?.outcome == "redeem", let pid = script?.productID, let p = catalog.product(pid), !ownsLocked(p),
               let t = try? chargeLocked(p, token: nil, storeInitiated: true, &out) {
                out.append(.transaction(t.storeTransaction(currency: currency), .update))
                appendEntitlementChangeLocked(&out)
            }
            out.append(.sheet(sheet, outcome: "dismissed", message: nil))
        case .refund(let text):
            // Apple has no record of a forged transaction, and a family
            // member's purchase is theirs to refund (StoreKit: failed).
            guard let id = Int64(text), var t = txns[id], t.verified, !t.familyShared else {
                out.append(.sheet(sheet, outcome: "error", message: "no purchase \(text) of this player's to refund"))
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
                let now = nowLocked()
                guard (try? persist([event("revoke") { $0.int("id", id); $0.int("at", now); $0.string("reason", "refunded") }])) != nil
                else {
                    out.append(.sheet(sheet, outcome: "error", message: "the refund request could not be recorded"))
                    return
                }
                out.append(.sheet(sheet, outcome: "success", message: nil))
                t.revokedMs = now
                t.revokeReason = "refunded"
                txns[id] = t
                out.append(.transaction(t.storeTransaction(currency: currency), .update))
                appendEntitlementChangeLocked(&out)
            }
        }
    }
}
