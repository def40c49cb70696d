import IAPCore

// Subscription offers as the App Store applies them: the introductory offer
// on a player's first subscription of a group (chargeLocked), its further
// periods when it is paid as you go (renewLocked), and win-back offers for
// lapsed subscribers. Called with `lock` held.
extension SimulatedStore {
    /// A win-back offer of `p` this player may take now: a lapsed subscriber
    /// of its group (subscribed before, nothing active now) who never took
    /// this offer. StoreKit reports these IDs in the renewal info's
    /// `eligibleWinBackOfferIDs` (iOS 18).
    func eligibleWinBackOffersLocked(_ p: CatalogProduct) -> [CatalogOffer] {
        guard p.kind == .autoRenewableSubscription, !p.winBackOffers.isEmpty, let g = p.subscriptionGroupID,
              hasSubscribedLocked(group: g), activeSubscriptionLocked(group: g) == nil else { return [] }
        return p.winBackOffers.filter { o in
            !ownable.contains { id in
                guard let t = txns[id], let used = t.offer else { return false }
                return used.kind == .winBack && used.id == o.id && groupID(of: t.productID) == g
            }
        }
    }

    func eligibleWinBackOfferLocked(_ p: CatalogProduct, id: String) -> TransactionOffer? {
        eligibleWinBackOffersLocked(p).first { $0.id == id }?.transactionOffer
    }

    /// The offer a renewal after `last` still runs under: a pay-as-you-go
    /// offer charges `periods` periods at its price, then the regular one.
    func offerForRenewalLocked(after last: SimTransaction, product p: CatalogProduct) -> CatalogOffer? {
        guard let used = last.offer, last.productID == p.id else { return nil }
        let terms: CatalogOffer? = switch used.kind {
        case .introductory: p.introTerms
        case .winBack: p.winBackOffers.first { $0.id == used.id }
        case .promotional, .code: nil
        }
        guard let terms, terms.chargesEachPeriod else { return nil }
        let taken = ownable.reduce(0) { n, id in
            guard let t = txns[id], t.originalID == last.originalID, t.offer == used else { return n }
            return n + 1
        }
        return taken < terms.periods ? terms : nil
    }
}
