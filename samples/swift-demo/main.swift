import Foundation
import IAPKit

/// The game's save: what was granted, and the keys it was granted under.
@MainActor final class GameSave {
    var coins = 0
    var adsRemoved = false
    private var keys: Set<Int64> = []
    /// True the first time a key is seen.
    func remember(key: Int64) -> Bool { keys.insert(key).inserted }
}

// iap-swift-demo [--catalog PATH] [--dir DIR]: buys 100 coins on the
// simulated store and prints what the save holds.
var catalog = "samples/catalog/Game.storekit"
var dir = NSTemporaryDirectory() + "/iap-swift-demo-\(getpid())"
var args = CommandLine.arguments.dropFirst()
while let a = args.popFirst() {
    switch a {
    case "--catalog": catalog = args.popFirst() ?? catalog
    case "--dir": dir = args.popFirst() ?? dir
    default: print("unknown argument \(a)"); exit(2)
    }
}
if !catalog.hasPrefix("/") { catalog = FileManager.default.currentDirectoryPath + "/" + catalog }
let save = GameSave()
do {
    try await runShop(catalog: catalog, saveDir: dir, save: save)
} catch {
    print("failed: \(error)")
    exit(1)
}
print("coins: \(save.coins)")
exit(save.coins == 100 ? 0 : 1)
