#if !canImport(StoreKit)  // the module is empty where StoreKit exists (StandIn.swift)
// PurchaseIntent (purchases promoted on the App Store), mirrored from the
// iPhoneOS16.4 SDK interface (xybp888/iOS-SDKs, iPhoneOS16.4.sdk/.../
// StoreKit.swiftmodule/arm64-apple-ios.swiftinterface, lines 163-196, the
// struct at character offset 7200); it is not in the 16.2 interface.

/// 16.4:163-173; iOS 16.4, Mac Catalyst 16.4 and macOS 14.4, unavailable on
/// tvOS (26.2:228-231).
@available(iOS 16.4, macOS 14.4, macCatalyst 16.4, *)
@available(tvOS, unavailable)
@available(watchOS, unavailable)
public struct PurchaseIntent: Equatable, Sendable {
    public let product: Product
    /// iPhoneOS18.1 interface (`PurchaseIntent`, iOS 18.0): the win-back
    /// offer the App Store showed with the product, if any.
    @available(iOS 18.0, macOS 15.0, *)
    public var offer: Product.SubscriptionOffer? { storedOffer }
    public var id: Product.ID { product.id }

    let storedOffer: Product.SubscriptionOffer?

    init(product: Product, offer: Product.SubscriptionOffer? = nil) {
        self.product = product
        self.storedOffer = offer
    }
}

@available(iOS 16.4, macOS 14.4, macCatalyst 16.4, *)
@available(tvOS, unavailable)
@available(watchOS, unavailable)
extension PurchaseIntent {
    /// 16.4:179-190. Not declared Sendable in 16.4, so neither here.
    public struct PurchaseIntents: AsyncSequence {
        public typealias Element = PurchaseIntent

        public struct AsyncIterator: AsyncIteratorProtocol {
            var base: AsyncStream<PurchaseIntent>.Iterator
            public mutating func next() async -> PurchaseIntent? { await base.next() }
        }

        let stream: AsyncStream<PurchaseIntent>
        public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: stream.makeAsyncIterator()) }
    }

    /// 16.4:191-195: never ends; scripted through `StandIn.promote(productID:)`.
    public static var intents: PurchaseIntents { PurchaseIntents(stream: World.shared.subscribeIntents()) }
}
#endif
