/// The game-facing calls (C10): each checks its arguments and the
/// lifecycle under `gate`, posts a job to the SDK thread and returns. No
/// disk, no store call, nothing that waits: the game's frame never does.
extension Coordinator {
    public static func validateProductID(_ id: String) throws(IAPError) {
        guard !id.isEmpty else { throw IAPError(.invalidArgument, "product ID is empty") }
        guard id.utf8.count <= 256 else { throw IAPError(.invalidArgument, "product ID is longer than 256 bytes") }
    }

    /// An identifier the store gave the game (a win-back offer's, a
    /// subscription group's): 1 to 255 bytes, no control characters.
    /// `what` opens the message ("offer_id must be ...").
    static func checkStoreID(_ id: String, _ what: String) throws(IAPError) {
        guard !id.isEmpty, id.utf8.count <= 255, !id.utf8.contains(where: { $0 < 0x20 }) else {
            throw IAPError(.invalidArgument, "\(what) (1 to 255 bytes, no control characters), got \"\(id.prefix(40))\"")
        }
    }

    /// A request's product IDs: at most 1000, each valid.
    static func validateProductIDs(_ ids: [String]) throws(IAPError) {
        guard ids.count <= 1000 else { throw IAPError(.invalidArgument, "at most 1000 product IDs per request, got \(ids.count)") }
        for id in ids { try validateProductID(id) }
    }

    public func requestProducts(_ ids: [String]) throws(IAPError) {
        try Coordinator.validateProductIDs(ids)
        try postRequestJob { [self] in store.requestProducts(ids) }
    }

    public func restore() throws(IAPError) {
        try postRequestJob { [self] in store.restore() }
    }

    /// Starts a purchase keyed by `clickMs` (or by an SDK key, `max(now,
    /// last key + 1)`, when `clickMs <= 0` or is at or below a key handed
    /// out before: C7); returns the key. The purchase itself starts on the SDK thread; its
    /// result arrives as a `"7"`.
    /// `winBackOfferID`: buy with this win-back offer (one from the `"999"`'s
    /// `winBackOffers`); one unit only.
    public func buy(productID: String, clickMs: Int64, quantity: Int = 1, winBackOfferID: String? = nil) throws(IAPError) -> Int64 {
        try Coordinator.validateProductID(productID)
        guard (1...10).contains(quantity) else {
            throw IAPError(.invalidArgument, "quantity must be 1 to 10 (the App Store's limit), got \(quantity)")
        }
        if let offer = winBackOfferID {
            try Coordinator.checkStoreID(offer, "offer_id must be a win-back offer ID from the \"999\"'s winBackOffers")
            guard quantity == 1 else { throw IAPError(.invalidArgument, "a win-back offer buys one unit, got quantity \(quantity)") }
        }
        guard clickMs < Outbox.clickLimit else {
            throw IAPError(.invalidArgument, "click_ms \(clickMs) is not a time in milliseconds: a click must be below 2^61 (\(Outbox.clickLimit)); pass 0 to let the SDK pick the key")
        }
        try store.validatePurchase(productID: productID, quantity: quantity)
        return try gate.withLock { () throws(IAPError) -> Int64 in
            guard !closing else { throw IAPError(.closed, "the bridge is closed") }
            // Posted under `gate`: a close that follows sees this purchase
            // ahead of it. Posting takes the executor's queue lock only.
            return try keys.take(clickMs: clickMs, nowMs: POSIX.nowMs()) { key in
                executor.post { [self] in
                    startPurchase(key: key, productID: productID, quantity: quantity, winBackOfferID: winBackOfferID)
                }
            }
        }
    }

    /// The game granted (or handled) the result with this key and saved. The
    /// record is dropped and, once the confirm is durable, the store
    /// transaction finished (C3). Takes the key's one result, and only after
    /// the game was shown it in this session (C9).
    public func confirm(key: Int64) throws(IAPError) {
        try gate.withLock { () throws(IAPError) in
            guard !closing else { throw IAPError(.closed, "the bridge is closed") }
            var check = queue.withLedger { ledger, _ in ledger.takeShown(key) }
            if check == .unknown && !keys.isAwaiting(key) {
                // The SDK thread queues a key's result before the key stops
                // awaiting: a result that arrived between the two reads is
                // in the queue now. Asked again, so a confirm racing its
                // "7" answers not-delivered, never unknown-key.
                check = queue.withLedger { ledger, _ in ledger.takeShown(key) }
                if check == .unknown {
                    throw IAPError(.unknownKey, "no unconfirmed result has key \(key) (already confirmed, or never issued)")
                }
            }
            switch check {
            case .taken:
                guard executor.post({ [self] in confirmJob(key: key) }) else {
                    queue.withLedger { ledger, closed in if !closed { ledger.untake(key) } }
                    throw IAPError(.closed, "the bridge is closed")
                }
            case .notShown:
                throw IAPError(.notDelivered, "the result with key \(key) has not been delivered to the game yet; confirm it after handling its message")
            case .unknown:
                throw IAPError(.notDelivered, "the purchase with key \(key) has no result yet; confirm it after handling its \"7\" message")
            }
        }
    }

    /// Runs a simulator command on the SDK thread and waits until what it
    /// made the store report has been handled.
    public func simulate(_ command: JSONValue) throws(IAPError) -> JSONValue {
        let box = Locked<Result<JSONValue, IAPError>>(.failure(IAPError(.closed, "the bridge is closed")))
        try gate.withLock { () throws(IAPError) in
            guard !closing else { throw IAPError(.closed, "the bridge is closed") }
        }
        executor.runAndWait { [self] in
            guard !closed else { return }
            let r: Result<JSONValue, IAPError>
            do throws(IAPError) { r = .success(try store.simulate(command)) } catch { r = .failure(error) }
            box.withLock { $0 = r }
        }
        executor.runWhenIdleAndWait {}
        return try box.withLock { $0 }.get()
    }

    /// `postGameJob` for a request: refused with `.busy` past RequestBudget.
    func postRequestJob(_ job: @escaping @Sendable () -> Void) throws(IAPError) {
        try gate.withLock { () throws(IAPError) in
            guard !closing else { throw IAPError(.closed, "the bridge is closed") }
            try requests.take(nowMs: Int64(POSIX.monotonicNs() / 1_000_000), queuedAnswers: queue.withLedger { ledger, _ in ledger.answersQueued })
            guard executor.post({ [self] in if !closed { job() } }) else { throw IAPError(.closed, "the bridge is closed") }
        }
    }

    func postGameJob(_ job: @escaping @Sendable () -> Void) throws(IAPError) {
        try gate.withLock { () throws(IAPError) in
            guard !closing else { throw IAPError(.closed, "the bridge is closed") }
            guard executor.post({ [self] in if !closed { job() } }) else { throw IAPError(.closed, "the bridge is closed") }
        }
    }
}
