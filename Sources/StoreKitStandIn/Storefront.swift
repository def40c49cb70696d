#if !canImport(StoreKit)  // the module is empty where StoreKit exists (StandIn.swift)
import Foundation

/// StoreKit's `Storefront` (iOS 15): the player's App Store country, now
/// and as it changes. Scripted through `StandIn.storefront`.
@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, *)
public struct Storefront: Identifiable, Sendable, Equatable {
    /// ISO 3166 alpha-3, e.g. "USA".
    public let countryCode: String
    public let id: String

    public static var current: Storefront? {
        get async { World.shared.currentStorefront }
    }

    /// Each change of the player's storefront, from now on.
    public static var updates: Storefronts { World.shared.subscribeStorefronts() }

    public struct Storefronts: AsyncSequence, Sendable {
        public typealias Element = Storefront
        public struct AsyncIterator: AsyncIteratorProtocol {
            var base: AsyncStream<Storefront>.Iterator
            public mutating func next() async -> Storefront? { await base.next() }
        }
        let stream: AsyncStream<Storefront>
        public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: stream.makeAsyncIterator()) }
    }
}

@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, *)
extension AppStore {
    /// Whether this player may make payments (false under parental
    /// controls). Scripted through `StandIn.canMakePayments`.
    public static var canMakePayments: Bool { World.shared.locked { World.shared.canMakePayments } }
}

extension World {
    var currentStorefront: Storefront? {
        locked { storefrontCountry.map { Storefront(countryCode: $0, id: $0) } }
    }

    func subscribeStorefronts() -> Storefront.Storefronts {
        var cont: AsyncStream<Storefront>.Continuation! = nil
        let stream = AsyncStream<Storefront> { cont = $0 }
        let n = locked { () -> Int in
            let n = nextStorefrontSubscriber
            nextStorefrontSubscriber += 1
            storefrontSubscribers[n] = cont
            return n
        }
        cont.onTermination = { [weak self] _ in self?.locked { _ = self?.storefrontSubscribers.removeValue(forKey: n) } }
        return Storefront.Storefronts(stream: stream)
    }

    func changeStorefront(_ country: String) {
        let subs: [AsyncStream<Storefront>.Continuation] = locked {
            storefrontCountry = country
            return Array(storefrontSubscribers.values)
        }
        for s in subs { s.yield(Storefront(countryCode: country, id: country)) }
    }
}
#endif
