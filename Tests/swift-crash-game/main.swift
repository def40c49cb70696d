#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import IAPKit

// iap-swift-crash-game --catalog PATH --dir DIR --product ID: a Swift game
// that buys, is shown the result, prints "RESULT <key> <result> <transaction>"
// and then waits, never confirming, for the test to kill it (SIGKILL).
var catalog = ""
var dir = ""
var product = "coins_100"
var args = CommandLine.arguments.dropFirst()
while let a = args.popFirst() {
    switch a {
    case "--catalog": catalog = args.popFirst() ?? ""
    case "--dir": dir = args.popFirst() ?? ""
    case "--product": product = args.popFirst() ?? product
    default: print("unknown argument \(a)"); exit(2)
    }
}
do {
    let bridge = try PurchaseBridge(simulatorCatalog: catalog, dataDir: dir)
    let key = try bridge.buy(productID: product)
    print("KEY \(key)")
    fflush(nil)
    for await event in bridge.events {
        guard case .purchase(let r) = event, r.key == key else { continue }
        print("RESULT \(r.key) \(r.result.rawValue) \(r.transaction?.id ?? "-")")
        fflush(nil)
        // Shown, not confirmed: the game dies here.
        while true { sleep(60) }
    }
    print("events ended before the result")
    exit(1)
} catch {
    print("failed: \(error)")
    exit(1)
}
