import IAPKit

// README "Swift games": these lines are the README's example, compiled here.
@MainActor func runShop(catalog: String, saveDir: String, save: GameSave) async throws {
    let bridge = try PurchaseBridge(simulatorCatalog: catalog, dataDir: saveDir)
    let key = try bridge.buy(productID: "coins_100")    // its one result comes under this key
    for await event in bridge.events {
        switch event {
        case .purchase(let r):
            // Grant once per key (your save remembers keys), save, then confirm.
            if r.shouldGrant && save.remember(key: r.key) { save.coins += 100 * r.quantity }
            try bridge.confirm(key: r.key)               // never delivered again
            if r.key == key { try bridge.close() }       // ends `events`
        case .entitlements(let e): save.adsRemoved = e.owns("remove_ads")
        case .error(let e): print("store error:", e.message)
        default: break
        }
    }
}
