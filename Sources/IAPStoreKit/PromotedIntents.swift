#if canImport(StoreKit)
import StoreKit
#else
import StoreKitStandIn
#endif
import IAPCore

/// Purchases the player started on the App Store page (PurchaseIntent: iOS
/// 16.4, Mac Catalyst 16.4, macOS 14.4), kept for the whole process, not for
/// one bridge.
///
/// Apple asks apps to listen to `PurchaseIntent.intents` as soon as they
/// launch: a player who taps a promoted purchase cold-starts the game, and
/// the intent can arrive long before the engine opens a bridge. So:
/// - `iap_launch()` (the app delegate, or the Unity package before the first
///   scene) starts `listenFromLaunch()`: one listener for the life of the
///   process; what it hears before any bridge is open waits here.
/// - Without it, each StoreKit bridge listens from `iap_open` to `iap_close`
///   (its own task, which `iap_close` ends: the library can be unloaded).
/// - An open StoreKit bridge owns the intents: it announces each as a
///   `"promoted"` message and keeps it until the game buys that product. At
///   `iap_close` the ones not answered come back here, and the next bridge
///   of the process announces them again. When the process ends they are gone
///   (the header says so): the player can tap the purchase again.
final class PromotedIntents: @unchecked Sendable {
    static let shared = PromotedIntents()

    private let lock = Lock()
    /// Intents no bridge owns, oldest first, one per product.
    private var waiting: [PromotedOffer] = []
    /// The open bridge's handler, if one is open: true when it took the
    /// intent, false when it is closing (the intent then waits here).
    private var owner: (@Sendable (PromotedOffer) -> Bool)? = nil
    private var ownerID = 0
    private var launchListener: Task<Void, Never>? = nil
    private var launchGeneration = 0

    private func launchEnded(_ generation: Int) {
        lock.withLock { if generation == launchGeneration { launchListener = nil } }
    }

    /// Whether `listenFromLaunch()` runs (then bridges do not listen themselves).
    var listensFromLaunch: Bool { lock.withLock { launchListener != nil } }

    /// Starts the process-wide listener, once; later calls do nothing.
    /// Returns false where StoreKit has no PurchaseIntent (below iOS 16.4 /
    /// macOS 14.4, tvOS): nothing to listen to there.
    @discardableResult
    func listenFromLaunch() -> Bool {
        #if !canImport(StoreKit) || os(iOS) || os(macOS)
        if #available(iOS 16.4, macOS 14.4, *), OSCheck.atLeast(16, 4) {
            lock.withLock {
                guard launchListener == nil else { return }
                launchGeneration += 1
                let generation = launchGeneration
                launchListener = Task.detached { [weak self] in
                    for await intent in PurchaseIntent.intents {
                        guard let self else { return }
                        self.arrived(PromotedIntents.offer(of: intent))
                    }
                    // StoreKit's sequence never ends; should it, bridges
                    // listen themselves again and a later call restarts this.
                    self?.launchEnded(generation)
                }
            }
            return true
        }
        #endif
        return false
    }

    #if !canImport(StoreKit) || os(iOS) || os(macOS)
    @available(iOS 16.4, macOS 14.4, *)
    static func offer(of intent: PurchaseIntent) -> PromotedOffer {
        var offer: Product.SubscriptionOffer? = nil
        if #available(iOS 18.0, macOS 15.0, *), OSCheck.atLeast(18, 0) { offer = intent.offer }
        return PromotedOffer(product: intent.product, subscriptionOffer: offer)
    }
    #endif

    /// An intent StoreKit delivered: to the open bridge, else kept.
    func arrived(_ offer: PromotedOffer) {
        let handler: (@Sendable (PromotedOffer) -> Bool)? = lock.withLock {
            if let owner { return owner }
            Self.keep(offer, in: &waiting)
            return nil
        }
        // Called without the lock: the handler emits a message.
        if let handler, !handler(offer) { lock.withLock { Self.keep(offer, in: &waiting) } }
    }

    /// A bridge opens: it receives every intent from now on; returns the ID
    /// to detach with and the intents that waited (oldest first).
    func attach(_ handler: @escaping @Sendable (PromotedOffer) -> Bool) -> (id: Int, waiting: [PromotedOffer]) {
        lock.withLock {
            ownerID += 1
            owner = handler
            defer { waiting = [] }
            return (ownerID, waiting)
        }
    }

    /// The bridge closes: the intents it did not answer wait for the next one.
    func detach(_ id: Int, unanswered: [PromotedOffer]) {
        lock.withLock {
            guard id == ownerID else { return }  // a newer bridge took over
            owner = nil
            var kept = unanswered
            for o in waiting { Self.keep(o, in: &kept) }
            waiting = kept
        }
    }

    /// A newer intent for the same product replaces the older one.
    private static func keep(_ offer: PromotedOffer, in list: inout [PromotedOffer]) {
        list.removeAll { $0.product.id == offer.product.id }
        list.append(offer)
    }

    /// Tests: the intents waiting, oldest first, as "productID offerID"
    /// ("-" without an offer).
    var waitingForTesting: [String] {
        lock.withLock { waiting.map { $0.product.id + " " + ($0.subscriptionOffer?.id ?? "-") } }
    }

    /// Tests: forget everything (the launch listener keeps running).
    func resetForTesting() {
        lock.withLock { waiting = []; owner = nil }
    }
}
