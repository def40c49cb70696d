import IAPCore

/// What IAPBridge's StoreFactory calls for `"store": "storekit"` on Apple
/// platforms. Tests call it directly on Linux, where it builds the backend
/// over the stand-in.
///
/// The outbox's file protection class (writable while the device is locked)
/// is IAPCore's business: `POSIX.createOwnerOnly` sets it on every file the
/// SDK opens (docs/APPLE.md).
public enum StoreKitFactory {
    public static func make(_ config: BridgeConfig) throws(IAPError) -> Store {
        StoreKitStore(config: config, options: try StoreKitOptions.parse(config.storekit))
    }
}

/// What IAPBridge's `iap_launch` calls: the process-wide listener for
/// promoted purchases (PromotedIntents). True when it runs.
public enum StoreKitLaunch {
    public static func listen() -> Bool { PromotedIntents.shared.listenFromLaunch() }
}
