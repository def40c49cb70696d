/// The game's store requests beyond buying (issue 13): subscription status,
/// the app transaction, the system sheets and deferred StoreKit messages.
/// Like `buy`, each checks its arguments from memory, posts a job to the SDK
/// thread and returns (C10); the answer is a message.
extension Coordinator {
    /// Asks for the status of the subscription groups of `productIDs` (all
    /// groups the player ever subscribed in when empty): a `"subscription"`.
    public func subscriptionStatus(productIDs: [String]) throws(IAPError) {
        guard productIDs.count <= 1000 else {
            throw IAPError(.invalidArgument, "at most 1000 product IDs per request, got \(productIDs.count)")
        }
        for id in productIDs { try Coordinator.validateProductID(id) }
        let request = StoreRequest.subscriptionStatus(productIDs: productIDs)
        try store.validate(request)
        try postGameJob { [self] in store.perform(request) }
    }

    /// Asks for the app transaction: an `"app"`.
    public func appTransaction() throws(IAPError) {
        try store.validate(.appTransaction)
        try postGameJob { [self] in store.perform(.appTransaction) }
    }

    /// Opens a system sheet; a `"sheet"` follows when the player closes it.
    /// One sheet at a time: `.busy` while another is up.
    public func showSheet(_ sheet: StoreSheet) throws(IAPError) {
        if case .refund(let id) = sheet {
            // StoreKit's transaction IDs are UInt64s; the simulator's too.
            guard !id.isEmpty, id.utf8.count <= 20, id.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }), UInt64(id) != nil else {
                throw IAPError(.invalidArgument, "transaction_id must be a store transaction ID: decimal digits, got \"\(id.prefix(40))\"")
            }
        }
        try store.validate(.sheet(sheet))
        try desk.openSheet(sheet.name)
        do throws(IAPError) {
            try postGameJob { [self] in store.perform(.sheet(sheet)) }
        } catch {
            desk.closeSheet()
            throw error
        }
    }

    /// Shows every StoreKit message held because the config says `"defer"`;
    /// each gets a `"storeMessage"` with state `"shown"`. Nothing held: nothing
    /// happens.
    public func showStoreMessages() throws(IAPError) {
        try postGameJob { [self] in
            let held = desk.takeHeldMessages()
            guard !held.isEmpty else { return }
            store.perform(.showMessages(ids: held.map(\.id)))
            for m in held { queue.push(Messages.storeMessage(id: m.id, reason: m.reason, state: "shown")) }
        }
    }

    /// On the SDK thread: the answers to the requests above.
    func handleRequestAnswer(_ event: StoreEvent) {
        switch event {
        case .subscriptions(let list, let invalid, let reason):
            queue.push(Messages.subscriptions(list, invalid: invalid, reason: reason))
        case .appTransaction(let info, let error):
            queue.push(Messages.appTransaction(info, error: error))
        case .sheet(let sheet, let outcome, let message):
            desk.closeSheet()
            queue.push(Messages.sheet(sheet, outcome: outcome, message: message))
        case .storeMessage(let id, let reason):
            switch config.storeMessages {
            case .show:
                store.perform(.showMessages(ids: [id]))
                queue.push(Messages.storeMessage(id: id, reason: reason, state: "shown"))
            case .defer:
                desk.hold(id: id, reason: reason)
                queue.push(Messages.storeMessage(id: id, reason: reason, state: "deferred"))
            }
        default:
            assertionFailure("not a request's answer: \(event)")
        }
    }
}

/// The sheet that is up (checked on the game's thread) and the StoreKit
/// messages held for the game (touched on the SDK thread; locked anyway, the
/// lock is never held across a call out).
final class RequestDesk: @unchecked Sendable {
    private let lock = Lock()
    private var sheetUp: String? = nil
    private var held: [(id: String, reason: String)] = []

    func openSheet(_ name: String) throws(IAPError) {
        try lock.withLock { () throws(IAPError) in
            if let up = sheetUp {
                throw IAPError(.busy, "the \(up) sheet is still up; wait for its \"sheet\" message before opening another")
            }
            sheetUp = name
        }
    }

    func closeSheet() { lock.withLock { sheetUp = nil } }

    func hold(id: String, reason: String) {
        lock.withLock {
            // A store that announces the same message twice holds it once.
            if !held.contains(where: { $0.id == id }) { held.append((id, reason)) }
        }
    }

    func takeHeldMessages() -> [(id: String, reason: String)] {
        lock.withLock {
            defer { held.removeAll() }
            return held
        }
    }
}
