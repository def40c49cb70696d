import IAPCore
import IAPStores

/// The SDK for a Swift game (SpriteKit, SwiftUI, Metal): the C ABI's bridge
/// (include/iap_bridge.h) with typed calls and a typed event stream, on the
/// same core. Every result is kept on disk until `confirm(key:)`, so a
/// player who paid gets the item exactly once, even if the game is killed.
///
/// Thread-safe; every call but `flush`, `close` and `simulator` returns at
/// once, its answer arriving on `events`.
public final class PurchaseBridge: Sendable {
    let core: Coordinator
    private let signal: EventSignal

    /// Every message of this bridge, in order, each handed out once. A
    /// result's key may be confirmed once this stream has handed it out.
    /// Ends when the bridge closes.
    public let events: AsyncStream<IAPEvent>

    /// Opens the bridge with the C ABI's config (the JSON `iap_open` takes,
    /// docs/INTEGRATION.md): unconfirmed results of earlier runs come first.
    public init(configJSON: String) throws(IAPKitError) {
        do throws(IAPError) {
            let config = try BridgeConfig.parse(Array(configJSON.utf8))
            core = try Coordinator.open(config: config, opening: try StoreFactory.begin(config), rendersJSON: false)
        } catch {
            throw IAPKitError(error)
        }
        let signal = EventSignal()
        self.signal = signal
        let queue = core.queue
        queue.setWakeup { signal.raise() }
        events = AsyncStream(unfolding: {
            while true {
                if let m = queue.popMessage() { return IAPEvent(m) }
                if signal.isFinished || Task.isCancelled { return nil }
                await signal.wait()
            }
        })
    }

    /// The simulated store (docs/SIMULATOR.md) with its `.storekit` catalog.
    public convenience init(simulatorCatalog catalog: String, dataDir: String) throws(IAPKitError) {
        var w = JSONObjectWriter()
        w.string("store", "simulator")
        w.string("dataDir", dataDir)
        w.string("catalog", catalog)
        try self.init(configJSON: String(decoding: w.finish(), as: UTF8.self))
    }

    /// The App Store (StoreKit 2; Apple platforms).
    public convenience init(storeKitDataDir dataDir: String) throws(IAPKitError) {
        var w = JSONObjectWriter()
        w.string("store", "storekit")
        w.string("dataDir", dataDir)
        try self.init(configJSON: String(decoding: w.finish(), as: UTF8.self))
    }

    /// A bridge dropped without `close` is closed (and confirms made durable).
    deinit { _ = shutDown() }

    private func shutDown() -> IAPError? {
        let failure = core.close()
        signal.finish()
        return failure
    }

    /// Asks for products: a `.products` event.
    public func requestProducts(_ ids: [String]) throws(IAPKitError) {
        try call { () throws(IAPError) in try core.requestProducts(ids) }
    }

    /// Starts a purchase; returns its key, under which its one `.purchase`
    /// result comes, in this run or after a restart. `clickMs`: the tap's
    /// time in ms (0: the SDK picks the key). `quantity`: 1 to 10.
    @discardableResult
    public func buy(productID: String, quantity: Int = 1, clickMs: Int64 = 0) throws(IAPKitError) -> Int64 {
        try call { () throws(IAPError) in try core.buy(productID: productID, clickMs: clickMs, quantity: quantity) }
    }

    /// The game handled the result (or revocation) with this key and saved:
    /// it is never delivered again. Only a key `events` has handed out.
    /// Buys one unit with a win-back offer from `ProductInfo.winBackOffers`
    /// (iOS 18+); an offer the player may no longer take answers a
    /// `.purchase` with result `.productUnavailable`.
    public func buy(productID: String, winBackOfferID: String, clickMs: Int64 = 0) throws(IAPKitError) -> Int64 {
        try call { () throws(IAPError) in try core.buy(productID: productID, clickMs: clickMs, winBackOfferID: winBackOfferID) }
    }

    public func confirm(key: Int64) throws(IAPKitError) {
        try call { () throws(IAPError) in try core.confirm(key: key) }
    }

    /// Asks the store for every purchase again: an `.entitlements` event
    /// with reason `restore` ends it.
    public func restore() throws(IAPKitError) {
        try call { () throws(IAPError) in try core.restore() }
    }

    /// Waits until every confirm so far is on disk and its transaction finished.
    public func flush() throws(IAPKitError) {
        try call { () throws(IAPError) in if let e = core.flush() { throw e } }
    }

    /// Closes the bridge (confirms made durable); `events` ends. A second close does nothing.
    public func close() throws(IAPKitError) {
        if let e = shutDown() { throw IAPKitError(e) }
    }

    /// The status of the subscription groups of these products (every group
    /// the player subscribed in when empty): a `.subscriptions` event.
    public func subscriptionStatus(productIDs: [String] = []) throws(IAPKitError) {
        try call { () throws(IAPError) in try core.subscriptionStatus(productIDs: productIDs) }
    }

    /// The app transaction: an `.appTransaction` event.
    public func appTransaction() throws(IAPKitError) {
        try call { () throws(IAPError) in try core.appTransaction() }
    }

    /// System sheets; a `.sheet` event when the player closes each.
    public func manageSubscriptions() throws(IAPKitError) {
        try call { () throws(IAPError) in try core.showSheet(.manageSubscriptions) }
    }

    /// The manage sheet of one subscription group (iOS 17+).
    public func manageSubscriptions(groupID: String) throws(IAPKitError) {
        try call { () throws(IAPError) in try core.showSheet(.manageSubscriptionGroup(groupID: groupID)) }
    }

    public func requestRefund(transactionID: String) throws(IAPKitError) {
        try call { () throws(IAPError) in try core.showSheet(.refund(transactionID: transactionID)) }
    }

    public func redeemOfferCode() throws(IAPKitError) {
        try call { () throws(IAPError) in try core.showSheet(.offerCode) }
    }

    /// Shows the StoreKit messages held by `"storeMessages": "defer"`.
    public func showStoreMessages() throws(IAPKitError) {
        try call { () throws(IAPError) in try core.showStoreMessages() }
    }

    /// A simulator command (docs/SIMULATOR.md, `iap_simulator`): JSON in, JSON out.
    @discardableResult
    public func simulator(_ commandJSON: String) throws(IAPKitError) -> String {
        try call { () throws(IAPError) -> String in
            let command: JSONValue
            do { command = try JSONParser.parse(bytes: Array(commandJSON.utf8)) } catch {
                throw IAPError(.badJSON, "the command is not valid JSON: \(error)")
            }
            var out = JSONBuffer()
            out.appendValue(try core.simulate(command))
            return out.string
        }
    }

    private func call<T>(_ body: () throws(IAPError) -> T) throws(IAPKitError) -> T {
        do throws(IAPError) { return try body() } catch { throw IAPKitError(error) }
    }
}
