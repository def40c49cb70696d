#if canImport(StoreKit)
import StoreKit
#else
import StoreKitStandIn
#endif
import IAPCore

/// Whether a subscription's transaction inherits its purchase token.
///
/// StoreKit keeps a subscription's `appAccountToken` for the transactions
/// that follow in its group (Apple, "appAccountToken": it applies to
/// renewals and to upgrades, downgrades and crossgrades), so a change the
/// player makes outside the game (the subscription settings, an offer code,
/// a re-subscription from the App Store) carries the token of the click
/// that started the subscription, with reason purchase, not renewal. Only
/// the first transaction to carry a token is that click's charge; the
/// coordinator gives the others store keys (`StoreTransaction.inheritsToken`).
/// The answer reads the player's history, the same on every install and
/// whatever the device's clock says.
enum InheritedTokens {
    /// True when `t` is an auto-renewable subscription's transaction with a
    /// token and an earlier transaction of its group (by purchase date, then
    /// ID) carries the same token. Renewals are told apart by their reason,
    /// and purchases answered by the purchase call are the click's: neither
    /// is asked here.
    static func inherits(_ t: Transaction) async -> Bool {
        guard t.productType == .autoRenewable, let token = t.appAccountToken,
              let group = t.subscriptionGroupID else { return false }
        for await result in Transaction.all {
            let u = result.unsafePayloadValue
            guard u.id != t.id, u.subscriptionGroupID == group, u.appAccountToken == token else { continue }
            if u.purchaseDate < t.purchaseDate || (u.purchaseDate == t.purchaseDate && u.id < t.id) { return true }
        }
        return false
    }
}
