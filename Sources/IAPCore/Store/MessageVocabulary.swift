/// The closed sets of words the messages carry (docs/PROTOCOL.md), as types:
/// a misspelt one does not compile, and a stored one that is none of them
/// is an edit, not something to show the game.

/// Who began a purchase or a revoked one: `game`, a purchase this install
/// started (its purchase token names this install), or `store`, one the store
/// began or another install did (a promoted purchase, a renewal, another
/// device, a reinstall with a new identity).
public enum PurchaseOrigin: String, Sendable, CaseIterable {
    case game, store

    /// `rawValue` as written into a message, with no `String` made
    /// (`VocabularyTests` checks the two agree).
    public var jsonName: StaticString {
        switch self {
        case .game: return "game"
        case .store: return "store"
        }
    }
}

/// Why an `"entitlements"`, `"store"` or `"subscriptions"` message was sent:
/// the bridge opened, something changed, the game restored, or the game asked.
public enum UpdateReason: String, Sendable, CaseIterable {
    case open, change, restore, request
}

/// Why a purchase waits without a result (`"pending"`): a parent must
/// approve (Ask to Buy), the bank asked the player to confirm, or StoreKit
/// answered `.pending` without saying which.
public enum PendingReason: String, Sendable, CaseIterable {
    case askToBuy, interrupted, actionRequired
}
