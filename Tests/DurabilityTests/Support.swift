import Foundation
import IAPCore
import IAPSimulator
import Testing

/// Where the package lives (for the sample catalog).
let repoRoot: String = {
    var url = URL(fileURLWithPath: #filePath)
    for _ in 0..<3 { url.deleteLastPathComponent() }
    return url.path
}()

let sampleCatalog = repoRoot + "/samples/catalog/Game.storekit"

/// A fresh directory, removed when the value goes away. `fast` puts it on
/// tmpfs when there is one (the byte sweep opens thousands of outboxes; its
/// syncs prove nothing there, the recovery logic does).
final class Scratch: @unchecked Sendable {
    let root: String

    init(fast: Bool = false) {
        let base = fast && access("/dev/shm", W_OK) == 0 ? "/dev/shm/" : NSTemporaryDirectory()
        var buf = Array((base + "iap-durability-XXXXXX").utf8CString)
        let made = buf.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(made != nil, "mkdtemp failed")
        root = String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    deinit { try? FileManager.default.removeItem(atPath: root) }

    var dataDir: String { root + "/data" }
    var stateDir: String { root + "/appstore" }
    var outboxPath: String { dataDir + "/" + Outbox.fileName }

    var config: BridgeConfig {
        let json = "{\"store\":\"simulator\",\"dataDir\":\"\(dataDir)\",\"catalog\":\"\(sampleCatalog)\","
            + "\"simulator\":{\"stateDir\":\"\(stateDir)\",\"tickMs\":0,\"purchaseDelayMs\":0},\"entitlementsAtOpen\":false}"
        return try! BridgeConfig.parse(Array(json.utf8))
    }

    /// Deletes the game's data directory: a reinstall. The store keeps its state.
    func reinstall() { try? FileManager.default.removeItem(atPath: dataDir) }

    func read(_ path: String) -> [UInt8] { (try? POSIX.readFile(path)).flatMap { $0 } ?? [] }

    func write(_ path: String, _ bytes: [UInt8]) {
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
    }
}

func mode(of path: String) -> mode_t {
    var st = stat()
    guard stat(path, &st) == 0 else { return 0 }
    return st.st_mode & 0o777
}

/// The simulated store with the failures a crash causes, made on purpose:
/// `dropFinishes` plays a kill between the durable confirm and the store's
/// finish; `dropResults` plays a kill after the store charged and before the
/// SDK heard of it. `onFinish` sees every finish the SDK asks for.
final class CrashableStore: Store, @unchecked Sendable {
    let inner: SimulatedStore
    private let lock = NSLock()
    private var _dropFinishes = false
    private var _dropResults = false
    private var sink: (@Sendable (StoreEvent) -> Void)?
    private var _delivered: [StoreTransaction] = []
    private var _finishes: [String] = []
    var onFinish: (@Sendable (String) -> Void)?

    init(_ inner: SimulatedStore) { self.inner = inner }

    var dropFinishes: Bool {
        get { lock.withLock { _dropFinishes } }
        set { lock.withLock { _dropFinishes = newValue } }
    }
    var dropResults: Bool {
        get { lock.withLock { _dropResults } }
        set { lock.withLock { _dropResults = newValue } }
    }
    /// Every transaction the store handed to the SDK, in order.
    var delivered: [StoreTransaction] { lock.withLock { _delivered } }
    /// Every finish that reached the store.
    var finishes: [String] { lock.withLock { _finishes } }

    var name: String { inner.name }
    func attach(scheduler: StoreScheduler) { inner.attach(scheduler: scheduler) }
    func validatePurchase(productID: String, quantity: Int) throws(IAPError) {
        try inner.validatePurchase(productID: productID, quantity: quantity)
    }

    func start(sink: @escaping @Sendable (StoreEvent) -> Void) {
        lock.withLock { self.sink = sink }
        inner.start { [weak self] e in self?.pass(e) }
    }

    private func pass(_ e: StoreEvent) {
        let s: (@Sendable (StoreEvent) -> Void)? = lock.withLock {
            if case .transaction(let t, let arrival) = e {
                if _dropResults, case .purchase = arrival { return nil }
                _delivered.append(t)
            }
            return sink
        }
        s?(e)
    }

    /// Plays the store's update stream handing the SDK `t` once more.
    func redeliver(_ t: StoreTransaction) {
        lock.withLock { sink }?(.transaction(t, .update))
    }

    func requestProducts(_ ids: [String]) { inner.requestProducts(ids) }
    func purchase(productID: String, key: Int64, token: PurchaseToken, quantity: Int) throws(IAPError) {
        try inner.purchase(productID: productID, key: key, token: token, quantity: quantity)
    }
    func finish(transactionID: String) {
        onFinish?(transactionID)
        let drop: Bool = lock.withLock {
            _finishes.append(transactionID)
            return _dropFinishes
        }
        if !drop { inner.finish(transactionID: transactionID) }
    }
    func restore() { inner.restore() }
    func refreshEntitlements(reason: UpdateReason) { inner.refreshEntitlements(reason: reason) }
    func validate(_ request: StoreRequest) throws(IAPError) { try inner.validate(request) }
    func perform(_ request: StoreRequest) { inner.perform(request) }
    func simulate(_ command: JSONValue) throws(IAPError) -> JSONValue { try inner.simulate(command) }
    func stop() { inner.stop() }
}

/// One "launch" of the game on a scratch directory.
final class Launch: @unchecked Sendable {
    let store: CrashableStore
    let c: Coordinator

    init(_ s: Scratch, dropFinishes: Bool = false, dropResults: Bool = false,
         onFinish: (@Sendable (String) -> Void)? = nil) throws {
        let config = s.config
        store = CrashableStore(try SimulatedStore.open(config: config))
        store.dropFinishes = dropFinishes
        store.dropResults = dropResults
        store.onFinish = onFinish
        do { c = try Coordinator.open(config: config, store: store) } catch {
            store.stop()
            throw error
        }
    }

    /// Every message queued now, parsed.
    func drain() -> [JSONValue] {
        // Results come from the SDK thread: wait until it has handled
        // everything posted so far.
        c.settle()
        var out: [JSONValue] = []
        while let m = c.queue.pop() {
            if let v = try? JSONParser.parse(bytes: m) { out.append(v) }
        }
        return out
    }

    /// The `"7"` messages queued now.
    func results() -> [JSONValue] { drain().filter { $0["type"]?.stringValue == "7" } }

    func transactions() throws -> [JSONValue] {
        try c.simulate(.object(["op": .string("transactions")]))["transactions"]?.arrayValue ?? []
    }

    func transaction(_ id: String) throws -> JSONValue? {
        try transactions().first { $0["transactionID"]?.stringValue == id }
    }

    func close() { c.close() }
}

extension JSONValue {
    var key: Int64? { self["key"]?.stringValue.flatMap { Int64($0) } }
    var txn: String { self["transactionID"]?.stringValue ?? "" }
}

extension ResultFacts {
    /// A stored success for tests of the outbox itself (format 2 stores facts, not text).
    static func sample(_ i: Int, product: String = "coins_100") -> ResultFacts {
        .purchase(StoreTransaction(id: String(2_000_000 + i), originalID: String(2_000_000 + i), productID: product,
                                   kind: .consumable, purchaseDateMs: 1_700_000_000_000 + Int64(i), price: "0.99",
                                   currency: "USD", environment: "test"),
                  origin: .game, alreadyOwned: false, clickKey: nil)
    }
}
