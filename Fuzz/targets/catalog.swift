#if canImport(Glibc)
import Glibc
#endif
import CIAPFrame
import IAPBridge
import IAPCore
import IAPSimulator

// Target "catalog": Xcode .storekit files. Every input goes through
// Catalog.parse; a catalog that parses is then served by a real simulated
// store behind iap_open: products requested, every product bought, every
// message checked to be JSON whose strings are the catalog's strings.

private let scratch = fuzzScratch + "/catalog"
private let catalogPath = fuzzScratch + "/fuzzed.storekit"

private func config() -> [UInt8] {
    var w = JSONObjectWriter()
    w.string("store", "simulator")
    w.string("dataDir", scratch + "/data")
    w.string("catalog", catalogPath)
    w.value("simulator", .object(["stateDir": .string(scratch + "/state"), "durable": .bool(false), "tickMs": .number("0"), "purchaseDelayMs": .number("0")]))
    return w.finish()
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCatalog(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = bytes(data, size)
    let catalog: Catalog
    do { catalog = try Catalog.parse(input, name: "fuzzed") } catch {
        check(error.code == .catalog, "Catalog.parse failed with \(error)")
        return 0
    }
    // What the store derives from each product never traps.
    let now = POSIX.nowMs()
    for p in catalog.products {
        _ = catalog.localized(p)
        _ = Price.display(p.price, currency: Price.currency(storefront: catalog.settings.storefront))
        if let period = p.subscriptionPeriod { _ = ISODuration(period)?.added(to: now) }
    }

    mkdir(scratch, 0o700)
    writeFile(catalogPath, input)
    defer { removeTree(scratch) }
    var h: OpaquePointer? = nil
    let rc = withCString(config()) { iap_open($0, &h) }
    check(rc == 0 || rc == IAPCode.catalog.rawValue, "iap_open on a catalog that parsed returned \(rc): \(String(cString: iap_errmsg()))")
    guard rc == 0 else { return 0 }

    let ids = catalog.products.map(\.id).prefix(50)
    let request = JSONValue.array(ids.map { .string($0) } + [.string("not-in-catalog")]).serialized
    check(withCString(Array(request.utf8)) { iap_request_products(h, $0) } == 0, "iap_request_products failed")
    var key: Int64 = 0
    // A C string cannot carry a NUL: such IDs are reachable only through JSON.
    for id in ids.prefix(10) where !id.utf8.contains(0) {
        let r = withCString(Array(id.utf8)) { iap_buy(h, $0, 0, &key) }
        check(r == 0, "iap_buy(\(id)) returned \(r): \(String(cString: iap_errmsg()))")
    }
    var sawProducts = false
    _ = iap_flush(h)  // the answers are made on the SDK thread
    while let m = iap_poll(h) {
        let v = checkMessage(cBytes(m), "catalog bridge")
        iap_free(m)
        if v["type"]?.stringValue == "999" {
            sawProducts = true
            // Every product's strings come out as the catalog has them.
            for item in v["items"]?.arrayValue ?? [] {
                guard let id = item["id"]?.stringValue, let p = catalog.product(id) else {
                    check(false, "999 lists a product not in the catalog")
                    continue
                }
                let (title, description) = catalog.localized(p)
                check(item["title"]?.stringValue == title, "title changed on its way out")
                check(item["description"]?.stringValue == description, "description changed on its way out")
            }
        }
        if v["type"]?.stringValue == "7", let k = v["key"]?.stringValue.flatMap({ Int64($0) }) { _ = iap_confirm(h, k) }
    }
    check(sawProducts, "no 999 answer")
    check(iap_close(h) == 0, "iap_close failed")
    return 0
}
