import IAPCore
import IAPSimulator
#if canImport(StoreKit) && canImport(IAPStoreKit)
import IAPStoreKit
#endif

/// The store the config names, as the C ABI's StoreFactory picks it.
enum StoreChoice {
    static func make(_ config: BridgeConfig) throws(IAPError) -> Store {
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
}
