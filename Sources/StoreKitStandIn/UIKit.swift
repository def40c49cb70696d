#if !canImport(StoreKit)  // the module is empty where StoreKit exists (StandIn.swift)
// The few UIKit members the backend uses to find where a purchase sheet goes
// (Product.purchase(confirmIn:options:)): the app's scenes, their windows,
// the key window's root view controller. UIKit declares them @MainActor;
// so does the stand-in. What the app has on screen is scripted through
// `StandIn.screen`.

/// UIKit's `UIScene.ActivationState`.
public enum UISceneActivationState: Sendable {
    case unattached
    case foregroundActive
    case foregroundInactive
    case background
}

@MainActor
open class UIViewController {
    /// The view controller this one presents (a modal on top), if any.
    public let presentedViewController: UIViewController?
    nonisolated public init(presenting: UIViewController? = nil) { presentedViewController = presenting }
}

@MainActor
open class UIWindow {
    public let isKeyWindow: Bool
    public let rootViewController: UIViewController?
    nonisolated init(isKeyWindow: Bool, rootViewController: UIViewController?) {
        self.isKeyWindow = isKeyWindow
        self.rootViewController = rootViewController
    }
}

@MainActor
open class UIScene: Hashable {
    public typealias ActivationState = UISceneActivationState
    public let activationState: ActivationState
    nonisolated init(activationState: ActivationState) { self.activationState = activationState }
    nonisolated public static func == (a: UIScene, b: UIScene) -> Bool { a === b }
    nonisolated public func hash(into h: inout Hasher) { h.combine(ObjectIdentifier(self)) }
}

@MainActor
open class UIWindowScene: UIScene {
    public let windows: [UIWindow]
    /// iOS 15+.
    public var keyWindow: UIWindow? { windows.first { $0.isKeyWindow } }
    nonisolated init(activationState: ActivationState, windows: [UIWindow]) {
        self.windows = windows
        super.init(activationState: activationState)
    }
}

@MainActor
public final class UIApplication {
    public static let shared = UIApplication()
    nonisolated init() {}
    /// The scenes the app has, as `StandIn.screen` says.
    public var connectedScenes: Set<UIScene> { World.shared.scenes() }
}
#endif
