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
    /// Reads `Transaction.all` to its end when the answer is no (the
    /// usual one): callers ask once per transaction (`StoreKitStore`
    /// keeps the answers), and never for a renewal or a revocation.
    static func inherits(_ t: Transaction) async -> Bool {
        // Dates as seconds and tokens as text: the Foundation symbols the
        // library links already (a `Date` or `UUID` comparison would add
        // three that scripts/check-apple.sh cannot check on macOS).
        guard t.productType == .autoRenewable, let token = t.appAccountToken?.uuidString,
              let group = t.subscriptionGroupID else { return false }
        let at = t.purchaseDate.timeIntervalSince1970
        for await result in Transaction.all {
            if Task.isCancelled { return false }
            // Only the App Store's own transactions set a token (C6).
            guard case .verified(let u) = result else { continue }
            guard u.id != t.id, u.subscriptionGroupID == group, u.appAccountToken?.uuidString == token else { continue }
            let uAt = u.purchaseDate.timeIntervalSince1970
            if uAt < at || (uAt == at && u.id < t.id) { return true }
        }
        return false
    }
}
