#if !canImport(StoreKit)  // the module is empty where StoreKit exists (StandIn.swift)
/// The stand-in's never-ending AsyncSequences (`Storefront.Storefronts`,
/// `Status.Statuses`, `Message.Messages`): StoreKit declares a named type for
/// each; here they share one shape. Iteration never throws.
public struct StandInSequence<Element: Sendable>: AsyncSequence, Sendable {
    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncStream<Element>.Iterator
        public mutating func next() async -> Element? { await base.next() }
    }
    let stream: AsyncStream<Element>
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: stream.makeAsyncIterator()) }
}

extension World {
    /// A new listener of one of the World's streams: its continuation is
    /// registered under `list` until the listener goes away.
    func subscribe<T: Sendable>(_ list: ReferenceWritableKeyPath<World, [Int: AsyncStream<T>.Continuation]> & Sendable) -> StandInSequence<T> {
        var cont: AsyncStream<T>.Continuation! = nil
        let stream = AsyncStream<T> { cont = $0 }
        let n = locked { () -> Int in
            let n = extras.nextSubscriber
            extras.nextSubscriber += 1
            self[keyPath: list][n] = cont
            return n
        }
        cont.onTermination = { [weak self] _ in self?.locked { _ = self?[keyPath: list].removeValue(forKey: n) } }
        return StandInSequence(stream: stream)
    }
}
#endif
