/// The game's store requests beyond buying (issue 13): subscription status,
/// the app transaction, the system sheets and deferred StoreKit messages.
/// Like `buy`, each checks its arguments from memory, posts a job to the SDK
/// thread and returns (C10); the answer is a message.
extension Coordinator {
    /// Asks for the status of the subscription groups of `productIDs` (all
    /// groups the player ever subscribed in when empty): a `"subscription"`.
    public func subscriptionStatus(productIDs: [String]) throws(IAPError) {
        try Coordinator.validateProductIDs(productIDs)
        let request = StoreRequest.subscriptionStatus(productIDs: productIDs)
        try store.validate(request)
        try postRequestJob { [self] in store.perform(request) }
    }

    /// Asks for the app transaction: an `"app"`.
    public func appTransaction() throws(IAPError) {
        try store.validate(.appTransaction)
        try postRequestJob { [self] in store.perform(.appTransaction) }
    }

    /// Opens a system sheet; a `"sheet"` follows when the player closes it.
    /// One sheet at a time: `.busy` while another is up.
    public func showSheet(_ requested: StoreSheet) throws(IAPError) {
        let sheet = try Coordinator.checked(requested)
        try store.validate(.sheet(sheet))
        try desk.openSheet(sheet.name)
        do throws(IAPError) {
            try postGameJob { [self] in store.perform(.sheet(sheet)) }
        } catch {
            desk.closeSheet()
            throw error
        }
    }

    /// A refund's transaction ID must be a store transaction ID (a UInt64,
    /// StoreKit's and the simulator's); it is written the way the "7" writes
    /// it (no leading zeros), so the "sheet" and the "revoked" that follows
    /// name it alike.
    static func checked(_ sheet: StoreSheet) throws(IAPError) -> StoreSheet {
        if case .manageSubscriptionGroup(let g) = sheet {
            // StoreKit's group IDs are short digit strings; the simulator's
            // come from the catalog. Anything longer is not one.
            try checkStoreID(g, "group_id must be a subscription group ID")
            return sheet
        }
        guard case .refund(let id) = sheet else { return sheet }
        guard !id.isEmpty, id.utf8.count <= 20, id.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }), let n = UInt64(id) else {
            throw IAPError(.invalidArgument, "transaction_id must be a store transaction ID: decimal digits, got \"\(id.prefix(40))\"")
        }
        return .refund(transactionID: String(n))
    }

    /// Shows every StoreKit message held because the config says `"defer"`
    /// (or because it could not be shown when it came); each one shown gets
    /// a `"storeMessage"` with state `"shown"`. Nothing held: nothing happens.
    public func showStoreMessages() throws(IAPError) {
        try postGameJob { [self] in store.perform(.showMessages) }
    }

    /// On the SDK thread: the answers to the requests above.
    func handleRequestAnswer(_ event: StoreEvent) {
        assertOwner()
        switch event {
        case .subscriptions(let list, let invalid, let reason):
            queue.push(BridgeMessage.subscriptions(list, invalid: invalid, reason: reason))
        case .appTransaction(let info, let error):
            queue.push(BridgeMessage.appTransaction(info, error: error))
        case .sheet(let sheet, let outcome, let message):
            desk.closeSheet()
            queue.push(BridgeMessage.sheet(sheet, outcome: outcome, message: message))
        case .storeMessage(let id, let reason):
            // The store holds it until it was shown: a message is never
            // reported shown that the player did not see.
            switch config.storeMessages {
            case .show: store.perform(.showMessages)
            case .defer: queue.push(BridgeMessage.storeMessage(id: id, reason: reason, state: "deferred"))
            }
        case .storeMessageShown(let id, let reason, let shown):
            // Not shown now (no scene in front): it waits for the game's
            // next iap_show_store_messages.
            queue.push(BridgeMessage.storeMessage(id: id, reason: reason, state: shown ? "shown" : "deferred"))
        default:
            assertionFailure("not a request's answer: \(event)")
        }
    }
}

/// The sheet that is up: set on the game's thread, cleared on the SDK
/// thread when the store answers (the lock is never held across a call out).
final class RequestDesk: @unchecked Sendable {
    private let lock = Lock()
    private var sheetUp: String? = nil

    func openSheet(_ name: String) throws(IAPError) {
        try lock.withLock { () throws(IAPError) in
            if let up = sheetUp {
                throw IAPError(.busy, "the \(up) sheet is still up; wait for its \"sheet\" message before opening another")
            }
            sheetUp = name
        }
    }

    func closeSheet() { lock.withLock { sheetUp = nil } }
}
