import IAPCore
import IAPSimulator

/// The simulated App Store's view of a campaign directory: what it charged
/// and what it finished. Read with the child dead (the store locks stateDir).
struct StoreTxn {
    let id: String
    let product: String
    let kind: String
    let finished: Bool
    /// The click key the purchase token carried (C5), when the game made it.
    let tokenKey: Int64?
}

enum StoreView {
    static func config(work: String, catalog: String) throws(IAPError) -> BridgeConfig {
        let json = "{\"store\":\"simulator\",\"dataDir\":\"\(work)/data\",\"catalog\":\"\(catalog)\",\"entitlementsAtOpen\":false,"
            + "\"simulator\":{\"stateDir\":\"\(work)/appstore\",\"durable\":false,\"tickMs\":0}}"
        return try BridgeConfig.parse(Array(json.utf8))
    }

    static func parse(_ v: JSONValue) -> [StoreTxn] {
        (v["transactions"]?.arrayValue ?? []).map { t in
            StoreTxn(id: t["transactionID"]?.stringValue ?? "", product: t["productID"]?.stringValue ?? "",
                     kind: t["kind"]?.stringValue ?? "", finished: t["finished"]?.boolValue ?? false,
                     tokenKey: t["key"]?.stringValue.flatMap { Int64($0) })
        }
    }

    static let transactionsOp = JSONValue.object(["op": .string("transactions")])

    /// The store's `transactions`, without touching the game's outbox.
    static func transactions(work: String, catalog: String) throws(IAPError) -> [StoreTxn] {
        guard POSIX.exists(work + "/appstore") else { return [] }
        let store = try SimulatedStore.open(config: try config(work: work, catalog: catalog))
        defer { store.stop() }
        return parse(try store.simulate(transactionsOp))
    }

    /// A clean open of the whole bridge after the final drain: what it
    /// re-emits (nothing, if C4 holds) and the store's transactions.
    static func finalOpen(work: String, catalog: String) throws(IAPError) -> (results: Int, damaged: Int, txns: [StoreTxn]) {
        let config = try config(work: work, catalog: catalog)
        let store = try SimulatedStore.open(config: config)
        let c: Coordinator
        do { c = try Coordinator.open(config: config, store: store) } catch {
            store.stop()
            throw error
        }
        defer { c.close() }
        var results = 0, damaged = 0
        while let m = c.queue.pop() {
            let type = (try? JSONParser.parse(bytes: m))?["type"]?.stringValue
            if type == "7" { results += 1 }
            if type == "outbox_damaged" { damaged += 1 }
        }
        return (results, damaged, parse(try c.simulate(transactionsOp)))
    }
}
