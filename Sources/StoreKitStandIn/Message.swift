#if !canImport(StoreKit)  // the module is empty where StoreKit exists (StandIn.swift)
import Foundation

/// 18.1:290-389 (iOS 16, UIKit only): a message StoreKit has for the player
/// (a billing issue, consent to a price increase). Once the app listens to
/// `messages`, StoreKit shows nothing by itself: the app calls `display(in:)`.
/// Sent through `StandIn.sendMessage`.
@available(iOS 16.0, *)
public struct Message: Hashable, Sendable {
    /// 18.1:295.
    public let reason: Reason
    let serial: Int

    /// 18.1:300-314. Raw values are the stand-in's.
    public struct Reason: RawRepresentable, Equatable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        /// 18.1:303.
        public static let generic = Reason(rawValue: "generic")
        /// 18.1:304.
        public static let priceIncreaseConsent = Reason(rawValue: "priceIncreaseConsent")
        /// 18.1:309 (iOS 16.4).
        @available(iOS 16.4, *)
        public static let billingIssue = Reason(rawValue: "billingIssue")
        /// 18.1:314 (iOS 18).
        @available(iOS 18.0, *)
        public static let winBackOffer = Reason(rawValue: "winBackOffer")
    }

    /// 18.1:344: shows the message's sheet over the scene.
    @MainActor
    public func display(in scene: UIWindowScene) throws {
        try World.shared.display(self)
    }

    /// 18.1:389: each message from now on.
    public static var messages: Messages { World.shared.subscribeMessages() }

    /// 18.1:351-374 (a named AsyncSequence in StoreKit).
    public typealias Messages = StandInSequence<Message>
}

extension StandIn {
    /// StoreKit has a message for the player (`Message.messages`).
    public static func sendMessage(_ reason: Message.Reason) { World.shared.sendMessage(reason) }

    /// The reasons of the messages the app displayed, in order.
    public static var displayedMessages: [String] { World.shared.locked { World.shared.extras.displayed } }

    /// `Message.messages` sequences currently listened to.
    public static var messageListeners: Int { World.shared.locked { World.shared.extras.messageSubscribers.count } }
}

extension World {
    func sendMessage(_ reason: Message.Reason) {
        let (m, subs): (Message, [AsyncStream<Message>.Continuation]) = locked {
            extras.nextSubscriber += 1
            return (Message(reason: reason, serial: extras.nextSubscriber), Array(extras.messageSubscribers.values))
        }
        for s in subs { s.yield(m) }
    }

    func display(_ m: Message) throws {
        try locked {
            if let e = extras.sheetError { throw e }
            extras.displayed.append(m.reason.rawValue)
        }
    }

    func subscribeMessages() -> Message.Messages { subscribe(\.extras.messageSubscribers) }
}

/// The stand-in's state for the newer StoreKit features (statuses, sheets,
/// messages, the app transaction); part of `World`, reset with it.
struct WorldExtras {
    var renewals: [String: StandIn.Renewal] = [:]
    /// Groups whose running subscription the player set not to renew.
    var autoRenewOff: Set<String> = []
    var statusError: (any Error)? = nil
    var statusSubscribers: [Int: AsyncStream<Product.SubscriptionInfo.Status>.Continuation] = [:]
    var messageSubscribers: [Int: AsyncStream<Message>.Continuation] = [:]
    var nextSubscriber = 0
    var refundAnswer = StandIn.RefundAnswer.submit(grant: false)
    var offerCodeProduct: String? = nil
    var sheetError: (any Error)? = nil
    var sheets: [String] = []
    var displayed: [String] = []
    var app = StandIn.AppInfo()

    /// Every stream's continuation, to finish outside the lock at a reset.
    var streams: [() -> Void] {
        statusSubscribers.values.map { c in { c.finish() } } + messageSubscribers.values.map { c in { c.finish() } }
    }
}
#endif
