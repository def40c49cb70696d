import Foundation
import IAPCore
import Testing

/// The repository root (for the sample catalog).
let repoRoot: String = {
    var url = URL(fileURLWithPath: #filePath)
    for _ in 0..<4 { url.deleteLastPathComponent() }  // Support, ContractTests, Tests
    return url.path
}()

let sampleCatalog = repoRoot + "/samples/catalog/Game.storekit"

/// One game installation: its dataDir (the outbox), the simulated store's
/// stateDir (outside dataDir: deleting dataDir plays a reinstall), and the
/// faults the test wants played.
final class Env: @unchecked Sendable {
    let root: String
    let faults = Faults()
    /// Open bridges with `"storeMessages": "defer"`.
    var deferStoreMessages = false
    /// A failed renewal starts a billing grace period (the simulator's
    /// catalog gets `_billingGracePeriodEnabled`; on StoreKit Apple's side
    /// scripts it).
    var billingGrace = false
    var dataDir: String { root + "/data" }
    var stateDir: String { root + "/appstore" }

    init() {
        var template = Array((NSTemporaryDirectory() + "/iap-contract-XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(made != nil, "mkdtemp failed")
        root = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    deinit { try? FileManager.default.removeItem(atPath: root) }

    /// The game is deleted and installed again: its outbox is gone, the
    /// store (Apple's side) keeps everything.
    func reinstall() { try? FileManager.default.removeItem(atPath: dataDir) }
}

/// A bridge (coordinator) as the game sees it, with the messages it has
/// taken so far. Messages arrive asynchronously from the StoreKit backend,
/// so the helpers wait for what they expect (with a generous deadline: a
/// liveness bound, not a timing goal).
final class TestBridge: @unchecked Sendable {
    let c: Coordinator
    private let lock = Lock()
    private var taken: [JSONValue] = []

    init(_ c: Coordinator) { self.c = c }

    /// Every message taken so far (taking what is queued now). Each is
    /// checked against its JSON Schema in docs/schemas (SchemaValidator.swift
    /// is IAPCoreTests' validator, linked here, not copied).
    var messages: [JSONValue] {
        lock.withLock {
            while let m = c.queue.pop() {
                let text = String(decoding: m, as: UTF8.self)
                let errors = MessageSchemas.validate(text)
                #expect(errors.isEmpty, "schema: \(errors)")
                guard let v = try? JSONParser.parse(bytes: m) else { continue }
                taken.append(v)
            }
            return taken
        }
    }

    /// The `"7"` messages taken so far.
    var results: [JSONValue] { messages.filter { $0["type"]?.stringValue == "7" } }

    func results(transaction id: String) -> [JSONValue] { results.filter { $0["transactionID"]?.stringValue == id } }
    func results(key: Int64) -> [JSONValue] { results.filter { $0.key == key } }
    func messages(type: String) -> [JSONValue] { messages.filter { $0["type"]?.stringValue == type } }

    static let deadlineSeconds = 20.0

    /// Waits until `condition` holds over the messages taken; records an
    /// issue naming `what` if it never does.
    @discardableResult
    func wait(for what: String, sourceLocation: SourceLocation = #_sourceLocation,
              _ condition: ([JSONValue]) -> Bool) async -> Bool {
        let start = Date()
        while Date().timeIntervalSince(start) < TestBridge.deadlineSeconds {
            if condition(messages) { return true }
            try? await Task.sleep(nanoseconds: 2_000_000)
        }
        let seen = messages.map(\.serialized).joined(separator: "\n")
        Issue.record("timed out waiting for \(what); messages:\n\(seen)", sourceLocation: sourceLocation)
        return false
    }

    /// Waits for the first `"7"` matching `match` and returns it.
    func result(_ what: String, sourceLocation: SourceLocation = #_sourceLocation,
                where match: @escaping (JSONValue) -> Bool) async -> JSONValue? {
        await wait(for: what, sourceLocation: sourceLocation) { ms in ms.contains { $0["type"]?.stringValue == "7" && match($0) } }
        return results.first(where: match)
    }

    func result(key: Int64, sourceLocation: SourceLocation = #_sourceLocation) async -> JSONValue? {
        await result("a \"7\" with key \(key)", sourceLocation: sourceLocation) { $0.key == key }
    }

    /// Waits until the condition on the store side holds.
    @discardableResult
    static func eventually(_ what: String, sourceLocation: SourceLocation = #_sourceLocation,
                           _ condition: () throws -> Bool) async -> Bool {
        let start = Date()
        while Date().timeIntervalSince(start) < deadlineSeconds {
            if (try? condition()) == true { return true }
            try? await Task.sleep(nanoseconds: 2_000_000)
        }
        Issue.record("timed out waiting for \(what)", sourceLocation: sourceLocation)
        return false
    }

    func buy(_ product: String, _ click: Int64) throws -> Int64 { try c.buy(productID: product, clickMs: click) }

    func confirm(_ key: Int64) throws {
        try c.confirm(key: key)
        c.flush()
    }

    func close() { c.close() }
}

extension JSONValue {
    var key: Int64? { self["key"]?.stringValue.flatMap { Int64($0) } }
    var transactionID: String? { self["transactionID"]?.stringValue }
}

/// Faults a store cannot play by itself, played around it by `FaultyStore`.
final class Faults: @unchecked Sendable {
    private let lock = Lock()
    private var _dropPurchaseResults = false
    private var _dropFinishes = false
    private var _duplicateNextPurchase = false

    /// The app dies right after the charge: purchase results never reach the SDK.
    var dropPurchaseResults: Bool {
        get { lock.withLock { _dropPurchaseResults } }
        set { lock.withLock { _dropPurchaseResults = newValue } }
    }
    /// The app dies between a durable confirm and `finish`: finishes are lost.
    var dropFinishes: Bool {
        get { lock.withLock { _dropFinishes } }
        set { lock.withLock { _dropFinishes = newValue } }
    }
    /// The next purchase result also arrives through the update stream, first.
    var duplicateNextPurchase: Bool {
        get { lock.withLock { _duplicateNextPurchase } }
        set { lock.withLock { _duplicateNextPurchase = newValue } }
    }

    func takeDuplicate() -> Bool {
        lock.withLock {
            defer { _duplicateNextPurchase = false }
            return _duplicateNextPurchase
        }
    }
}

/// Passes everything to the real store, except what the faults drop or double.
final class FaultyStore: Store, @unchecked Sendable {
    let inner: Store
    let faults: Faults
    var name: String { inner.name }
    func attach(scheduler: StoreScheduler) { inner.attach(scheduler: scheduler) }
    func validatePurchase(productID: String, quantity: Int) throws(IAPError) {
        try inner.validatePurchase(productID: productID, quantity: quantity)
    }

    init(_ inner: Store, faults: Faults) {
        self.inner = inner
        self.faults = faults
    }

    func start(sink: @escaping @Sendable (StoreEvent) -> Void) {
        let faults = self.faults
        inner.start { event in
            if case .transaction(let t, .purchase) = event {
                if faults.dropPurchaseResults { return }
                if faults.takeDuplicate() { sink(.transaction(t, .update)) }
            }
            sink(event)
        }
    }

    func requestProducts(_ ids: [String]) { inner.requestProducts(ids) }
    func purchase(productID: String, key: Int64, token: PurchaseToken, quantity: Int) throws(IAPError) {
        try inner.purchase(productID: productID, key: key, token: token, quantity: quantity)
    }
    func purchase(productID: String, key: Int64, token: PurchaseToken, winBackOfferID: String) throws(IAPError) {
        try inner.purchase(productID: productID, key: key, token: token, winBackOfferID: winBackOfferID)
    }
    func finish(transactionID: String) {
        if faults.dropFinishes { return }
        inner.finish(transactionID: transactionID)
    }
    func restore() { inner.restore() }
    func refreshEntitlements(reason: UpdateReason) { inner.refreshEntitlements(reason: reason) }
    func validate(_ request: StoreRequest) throws(IAPError) { try inner.validate(request) }
    func perform(_ request: StoreRequest) { inner.perform(request) }
    func simulate(_ command: JSONValue) throws(IAPError) -> JSONValue { try inner.simulate(command) }
    func stopReporting() { inner.stopReporting() }
    func stop() { inner.stop() }
}
