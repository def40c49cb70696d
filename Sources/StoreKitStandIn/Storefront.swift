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

    /// 18.1:1145-1169 (a named AsyncSequence in StoreKit).
    public typealias Storefronts = StandInSequence<Storefront>
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

    func subscribeStorefronts() -> Storefront.Storefronts { subscribe(\.storefrontSubscribers) }

    func changeStorefront(_ country: String) {
        let subs: [AsyncStream<Storefront>.Continuation] = locked {
            storefrontCountry = country
            return Array(storefrontSubscribers.values)
        }
        for s in subs { s.yield(Storefront(countryCode: country, id: country)) }
    }
}
#endif
