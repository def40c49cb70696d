import IAPCore

/// The App Store's side of a model-checking run: every transaction it ever
/// charged, what is still unfinished, and the purchases waiting for a parent
/// or a payment. It outlives crashes of the game (it is Apple's).
final class ModelWorld: @unchecked Sendable {
    struct Txn {
        let id: String
        let productID: String
        let token: Int64?
        var finished = false
    }
    /// `chargeLater`: the purchase call failed, and the charge comes later.
    enum Waiting: String { case askToBuy, interrupted, chargeLater }

    var txns: [Txn] = []
    /// Purchases the store has not answered yet: (key, product).
    var calls: [(key: Int64, productID: String)] = []
    /// Answered with "pending": (key, product, why).
    var pendings: [(key: Int64, productID: String, why: Waiting)] = []
    /// Transactions finished before the game had granted them (C3).
    var finishedUngranted: [String] = []
    /// Set by the game model: what it granted, by transaction.
    var grants: [String: Int] = [:]

    func charge(_ productID: String, token: Int64?) -> StoreTransaction {
        let id = String(5_000 + txns.count)
        txns.append(Txn(id: id, productID: productID, token: token))
        return Self.storeTransaction(txns.last!)
    }

    static func storeTransaction(_ t: Txn) -> StoreTransaction {
        StoreTransaction(id: t.id, originalID: t.id, productID: t.productID, kind: .consumable, purchaseDateMs: 1,
                         price: "0.99", currency: "USD", token: t.token.map { PurchaseToken(key: $0) },
                         environment: "model")
    }

    var unfinished: [Txn] { txns.filter { !$0.finished } }
}

/// The store a model-checking run's bridge talks to: it never answers by
/// itself; the checker chooses when and how (`ModelWorld`).
final class ModelStore: Store, @unchecked Sendable {
    let name = "model"
    let world: ModelWorld
    private(set) var sink: (@Sendable (StoreEvent) -> Void)?

    init(_ world: ModelWorld) { self.world = world }

    func send(_ e: StoreEvent) { sink?(e) }

    func start(sink: @escaping @Sendable (StoreEvent) -> Void) {
        self.sink = sink
        let open = world.unfinished
        for t in open { sink(.transaction(ModelWorld.storeTransaction(t), .update)) }
        sink(.unfinished(open.map(\.id)))
    }

    func requestProducts(_ ids: [String]) {}
    func purchase(productID: String, key: Int64, token: PurchaseToken, quantity: Int) throws(IAPError) {
        world.calls.append((key, productID))
    }
    func finish(transactionID: String) { finish(transactionIDs: [transactionID]) }
    func finish(transactionIDs: [String]) {
        for id in transactionIDs {
            guard let i = world.txns.firstIndex(where: { $0.id == id }) else { continue }
            if (world.grants[id] ?? 0) == 0 { world.finishedUngranted.append(id) }
            world.txns[i].finished = true
        }
        sink?(.finished(transactionIDs))
    }
    func restore() {}
    func refreshEntitlements(reason: UpdateReason) {}
    func validate(_ request: StoreRequest) throws(IAPError) { throw IAPError(.notSupported, "model store") }
    func perform(_ request: StoreRequest) {}
    func simulate(_ command: JSONValue) throws(IAPError) -> JSONValue { throw IAPError(.notSupported, "model store") }
    func stop() { sink = nil }
}
