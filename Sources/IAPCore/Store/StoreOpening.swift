/// A store whose opening is under way: what can be refused at once (its
/// config, its catalog, its directory's lock) was checked on the opening
/// thread, and what takes time (the simulator's read of its state) is left
/// to `finish`, which the bridge runs on its SDK thread while the opening
/// thread reads dataDir (Coordinator.open). A game's refused config creates
/// nothing, and two bridges racing for one dataDir meet at the store's lock
/// first, as before.
///
/// Exactly one of `finish` and `abandon` is called, once.
public struct StoreOpening: Sendable {
    private let finishing: @Sendable () throws(IAPError) -> Store
    private let abandoning: @Sendable () -> Void
    /// The bridge stops the finished store when its own open then fails.
    /// False for `made`: its maker stops it.
    public let bridgeStopsStore: Bool

    /// `finish`: reads what the store needs and returns it (throws what
    /// opening it failed on, having released what it took). `abandon`:
    /// releases what was taken so far (the open failed elsewhere).
    public init(finish: @escaping @Sendable () throws(IAPError) -> Store, abandon: @escaping @Sendable () -> Void) {
        finishing = finish
        abandoning = abandon
        bridgeStopsStore = true
    }

    private init(made store: Store) {
        finishing = { store }
        abandoning = {}
        bridgeStopsStore = false
    }

    /// A store made already: nothing left to do, nothing to release on
    /// abandon; its maker stops it if the open fails.
    public static func made(_ store: Store) -> StoreOpening { StoreOpening(made: store) }

    public func finish() throws(IAPError) -> Store { try finishing() }
    public func abandon() { abandoning() }
}
