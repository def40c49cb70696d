#if canImport(StoreKit)
import StoreKit
#else
import StoreKitStandIn
#endif
#if canImport(UIKit) && os(iOS)
import UIKit
#endif
import Foundation
import IAPCore

// The StoreKit backend's answers to the game's store requests: subscription
// status (`Product.SubscriptionInfo.status(for:)`, `Status.updates`), the app
// transaction (`AppTransaction.shared`, iOS 16), the system sheets
// (`AppStore.showManageSubscriptions(in:)`, `Transaction.beginRefundRequest(
// for:in:)`, `AppStore.presentOfferCodeRedeemSheet(in:)`, iOS 16; UIKit only)
// and StoreKit messages (`Message.messages`, `display(in:)`, iOS 16, UIKit
// only). docs/APPLE.md lists each with its availability.

extension StoreKitStore {
    /// What this device can do, from memory, on the game's thread.
    public func validate(_ request: StoreRequest) throws(IAPError) {
        switch request {
        case .subscriptionStatus, .showMessages:
            return
        case .appTransaction:
            guard #available(iOS 16.0, macOS 13.0, tvOS 16.0, *), OSCheck.atLeast(16, 0) else {
                throw IAPError(.notSupported, "the app transaction needs iOS 16 (StoreKit's AppTransaction)")
            }
        case .sheet(let sheet):
            #if !canImport(StoreKit) || os(iOS)
            if case .offerCode = sheet {
                guard #available(iOS 16.0, *), OSCheck.atLeast(16, 0) else {
                    throw IAPError(.notSupported, "the offer code sheet needs iOS 16 (presentOfferCodeRedeemSheet)")
                }
            }
            if case .manageSubscriptionGroup = sheet {
                guard #available(iOS 17.0, *), OSCheck.atLeast(17, 0) else {
                    throw IAPError(.notSupported, "the manage sheet of one subscription group needs iOS 17 (showManageSubscriptions(in:subscriptionGroupID:)); iap_manage_subscriptions shows every group")
                }
            }
            #else
            throw IAPError(.notSupported, "StoreKit shows the \(sheet.name) sheet on iOS only")
            #endif
        }
    }

    public func perform(_ request: StoreRequest) {
        switch request {
        case .subscriptionStatus(let ids):
            tasks.spawn { [self] in await answerStatus(ids) }
        case .appTransaction:
            tasks.spawn { [self] in
                guard #available(iOS 16.0, macOS 13.0, tvOS 16.0, *) else { return }
                do {
                    emit(.appTransaction(StoreKitStatusMapping.app(try await AppTransaction.shared), error: nil))
                } catch {
                    emit(.appTransaction(nil, error: "the App Store could not give the app transaction: \(StoreKitMapping.describe(error))"))
                }
            }
        case .sheet(let sheet):
            #if !canImport(StoreKit) || os(iOS)
            tasks.spawn { [self] in
                let (outcome, message) = await StoreKitStore.show(sheet)
                emit(.sheet(sheet, outcome: outcome, message: message))
            }
            #else
            emit(.sheet(sheet, outcome: "error", message: "not supported here"))
            #endif
        case .showMessages:
            #if !canImport(StoreKit) || os(iOS)
            let held = messageShelf.takeAll()
            guard !held.isEmpty else { return }
            tasks.spawn { @MainActor [self] in
                let scene = StoreKitStore.foregroundScene()
                for m in held {
                    var shown = false
                    if #available(iOS 16.0, *), let scene, let message = m.message as? Message {
                        shown = (try? message.display(in: scene)) != nil
                    }
                    // Not shown (no scene in front, or StoreKit refused): back
                    // on the shelf for the game's next iap_show_store_messages.
                    if !shown { messageShelf.putBack(m) }
                    emit(.storeMessageShown(id: m.id, reason: m.reason, shown: shown))
                }
            }
            #endif
        }
    }

    /// Answers `iap_subscription_status`: the groups of these products (the
    /// ones StoreKit knows as auto-renewable), or every group the player
    /// ever subscribed in.
    private func answerStatus(_ ids: [String]) async {
        var groups: [String] = []
        var invalid: [String] = []
        if ids.isEmpty {
            groups = await scanHistory()  // every group in the player's history
        } else {
            var seen = Set<String>()
            let unique = ids.filter { seen.insert($0).inserted }
            let found: [Product]
            do { found = try await Product.products(for: unique) } catch {
                emit(.error(op: "subscription", message: "the App Store could not be asked for products: \(StoreKitMapping.describe(error))"))
                return
            }
            for id in unique {
                guard let p = found.first(where: { $0.id == id }), p.type == .autoRenewable, let g = p.subscription?.subscriptionGroupID else {
                    invalid.append(id)
                    continue
                }
                if !groups.contains(g) { groups.append(g) }
            }
        }
        emit(.subscriptions(await statuses(groups: groups), invalid: invalid, reason: .request))
    }

    /// Each group's best status; a group StoreKit has none for is "none"; one
    /// whose lookup failed is reported as an "error" and left out.
    func statuses(groups: [String]) async -> [SubscriptionGroupStatus] {
        var out: [SubscriptionGroupStatus] = []
        for g in groups {
            do {
                let list = try await Product.SubscriptionInfo.status(for: g)
                out.append(StoreKitStatusMapping.best(list, groupID: g))
            } catch {
                emit(.error(op: "subscription", message: "the status of subscription group \(g) could not be read: \(StoreKitMapping.describe(error))"))
            }
        }
        return out
    }

    /// `Status.updates` (iOS 15): each change, from `iap_open` to `iap_close`.
    /// An update names one of the group's statuses (the player's own, or a
    /// family member's); the group's best is read again and reported. The
    /// entitlements are read again too and reported, just before, when they
    /// changed: an expiry, a grace period's end or a billing retry's outcome
    /// reaches a game that reads only `"entitlements"` (issue 22), not at
    /// the next transaction or open.
    func listenForStatusChanges() {
        tasks.spawn { [weak self] in
            for await status in Product.SubscriptionInfo.Status.updates {
                guard let self, !Task.isCancelled else { return }
                guard let g = status.transaction.unsafePayloadValue.subscriptionGroupID, !g.isEmpty else { continue }
                let all = (try? await Product.SubscriptionInfo.status(for: g)) ?? [status]
                // As on the simulator: the entitlements first, then the status.
                await self.announceEntitlementChange()
                self.emit(.subscriptions([StoreKitStatusMapping.best(all.isEmpty ? [status] : all, groupID: g)],
                                         invalid: [], reason: .change))
            }
        }
    }

    #if !canImport(StoreKit) || os(iOS)
    /// `Message.messages` (iOS 16): once the app listens, StoreKit shows no
    /// message by itself. Each is held on the shelf and announced; the
    /// coordinator shows it at once or when the game says (config
    /// `storeMessages`).
    @available(iOS 16.0, *)
    func listenForMessages() {
        tasks.spawn { [weak self] in
            for await message in Message.messages {
                guard let self, !Task.isCancelled else { return }
                let reason = StoreKitStore.reason(message.reason)
                let id = self.messageShelf.put(message, reason: reason)
                self.emit(.storeMessage(id: id, reason: reason))
            }
        }
    }

    @available(iOS 16.0, *)
    static func reason(_ r: Message.Reason) -> String {
        if r == .priceIncreaseConsent { return "priceIncreaseConsent" }
        if #available(iOS 16.4, *), r == .billingIssue { return "billingIssue" }
        if #available(iOS 18.0, *), r == .winBackOffer { return "winBackOffer" }
        return "generic"
    }

    /// Shows a sheet over the app's foreground scene; the outcome as the
    /// `"sheet"` message says it.
    @MainActor
    static func show(_ sheet: StoreSheet) async -> (String, String?) {
        guard let scene = foregroundScene() else {
            return ("error", "the app has no foreground window scene to show the sheet in")
        }
        do {
            switch sheet {
            case .manageSubscriptions:
                try await AppStore.showManageSubscriptions(in: scene)
                return ("dismissed", nil)
            case .manageSubscriptionGroup(let group):
                guard #available(iOS 17.0, *) else { return ("error", "needs iOS 17") }
                try await AppStore.showManageSubscriptions(in: scene, subscriptionGroupID: group)
                return ("dismissed", nil)
            case .offerCode:
                guard #available(iOS 16.0, *) else { return ("error", "needs iOS 16") }
                try await AppStore.presentOfferCodeRedeemSheet(in: scene)
                return ("dismissed", nil)
            case .refund(let text):
                guard let id = UInt64(text) else { return ("error", "not a transaction ID: \(text)") }
                switch try await Transaction.beginRefundRequest(for: id, in: scene) {
                case .success: return ("success", nil)
                case .userCancelled: return ("userCancelled", nil)
                @unknown default: return ("error", "StoreKit answered the refund request with an unknown status")
                }
            }
        } catch Transaction.RefundRequestError.duplicateRequest {
            return ("error", "a refund of this transaction was already requested")
        } catch Transaction.RefundRequestError.failed {
            return ("error", "the refund request failed (is the transaction this player's?)")
        } catch {
            return ("error", "StoreKit could not show the \(sheet.name) sheet: \(StoreKitMapping.describe(error))")
        }
    }
    #endif
}

/// StoreKit messages announced and not shown yet, by the ID the game sees.
/// Messages are `Message`s (iOS 16), kept as `Any` so the store compiles for
/// iOS 15.
final class MessageShelf: @unchecked Sendable {
    struct Held: @unchecked Sendable {
        let id: String
        let serial: Int
        let reason: String
        let message: Any
    }

    private let lock = Lock()
    private var held: [String: Held] = [:]
    private var next = 1

    func put(_ message: Any, reason: String) -> String {
        lock.withLock {
            let serial = next
            next += 1
            let id = "m\(serial)"
            held[id] = Held(id: id, serial: serial, reason: reason, message: message)
            return id
        }
    }

    /// Every message held, in the order they came, off the shelf.
    func takeAll() -> [Held] {
        lock.withLock {
            defer { held.removeAll() }
            return held.values.sorted { $0.serial < $1.serial }
        }
    }

    func putBack(_ m: Held) { lock.withLock { held[m.id] = m } }
}
