import IAPCore
import IAPSimulator
// IAPStoreKit is a dependency on Apple platforms only (Package.swift); on
// Linux it would be the backend over the test-only stand-in, never shipped.
#if canImport(StoreKit) && canImport(IAPStoreKit)
import IAPStoreKit
#endif

/// Picks the store the config names: the one decision the C ABI
/// (IAPBridge) and the Swift API (IAPKit) share, written once.
public enum StoreFactory {
    /// The store's opening (StoreOpening): checked and locked now, its
    /// state read by `finish` on the bridge's SDK thread.
    public static func begin(_ config: BridgeConfig) throws(IAPError) -> StoreOpening {
        switch config.store {
        case .simulator:
            return try SimulatedStore.begin(config: config)
        case .storekit:
            // StoreKit's store reads nothing at open: made now, whole.
            let store = try make(config)
            return StoreOpening(finish: { store }, abandon: { store.stop() })
        }
    }

    public static func make(_ config: BridgeConfig) throws(IAPError) -> Store {
        switch config.store {
        case .simulator:
            return try SimulatedStore.open(config: config)
        case .storekit:
            #if canImport(StoreKit) && canImport(IAPStoreKit)
            return try StoreKitFactory.make(config)
            #else
            throw IAPError(.notSupported, "StoreKit is not available on this platform; use \"store\": \"simulator\"")
            #endif
        }
    }

    /// `iap_launch`: StoreKit's promoted purchases heard from launch, before
    /// any bridge is open (IAPStoreKit's PromotedIntents).
    public static func listenFromLaunch() throws(IAPError) {
        #if canImport(StoreKit) && canImport(IAPStoreKit)
        guard StoreKitLaunch.listen() else {
            throw IAPError(.notSupported, "StoreKit has no promoted purchases on this OS (PurchaseIntent: iOS 16.4, macOS 14.4); nothing to listen to")
        }
        #else
        throw IAPError(.notSupported, "StoreKit is not available on this platform; nothing to listen to")
        #endif
    }
}
