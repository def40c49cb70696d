#if !canImport(StoreKit)  // the module is empty where StoreKit exists (StandIn.swift)

// The top-level names iOS 18.4+ StoreKit declares for nested types (iPhoneOS
// 26.2 SDK, StoreKit.swiftmodule/arm64e-apple-ios.swiftinterface, lines 35,
// 778, 2372, 2374, 2376). They are here so that the Linux build sees the
// same names as an Xcode build: a type of IAPCore with one of these names is
// ambiguous in IAPStoreKit on iOS, and now on Linux too (issue 20: IAPCore's
// `SubscriptionStatus` did exactly that and was renamed
// `SubscriptionGroupStatus`).
@available(iOS 18.4, macOS 15.4, tvOS 18.4, watchOS 11.4, visionOS 2.4, *)
public typealias SubscriptionPeriod = Product.SubscriptionPeriod
@available(iOS 18.4, macOS 15.4, tvOS 18.4, watchOS 11.4, visionOS 2.4, *)
public typealias SubscriptionInfo = Product.SubscriptionInfo
@available(iOS 18.4, macOS 15.4, tvOS 18.4, watchOS 11.4, visionOS 2.4, *)
public typealias SubscriptionRenewalState = Product.SubscriptionInfo.RenewalState
@available(iOS 18.4, macOS 15.4, tvOS 18.4, watchOS 11.4, visionOS 2.4, *)
public typealias SubscriptionStatus = Product.SubscriptionInfo.Status
@available(iOS 18.4, macOS 15.4, tvOS 18.4, watchOS 11.4, visionOS 2.4, *)
public typealias SubscriptionRenewalInfo = Product.SubscriptionInfo.RenewalInfo
#endif
