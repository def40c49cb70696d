/// How many requests a game may have the store work on or waiting for it
/// (`iap_request_products`, `iap_restore`, `iap_subscription_status`,
/// `iap_app_transaction`). A request costs nothing to make and may cost the
/// store a network round trip and the queue a message: a game calling one in
/// a loop (every frame, or 100,000 times) must not pile up work or memory
/// (issue 21, item 1). Two bounds, both exact:
/// - at most `perSecond` requests accepted in any second (what reaches the
///   store, and so how many store tasks can be running, is bounded by rate);
/// - none while `maxQueuedAnswers` answers (`"999"`, `"subscription"`,
///   `"app"`, `"entitlements"`) wait unpolled in the queue: a game that
///   does not poll cannot grow it.
/// Past either, the call answers IAP_E_BUSY at once and nothing is queued.
struct RequestBudget {
    static let perSecond = 64
    static let maxQueuedAnswers = 64

    /// Acceptance times (ms) of the last `perSecond` requests, a ring.
    private var times = [Int64](repeating: .min, count: RequestBudget.perSecond)
    private var next = 0

    /// Takes one request at `nowMs` with `queuedAnswers` unpolled; throws
    /// `.busy` (nothing taken) past a bound.
    mutating func take(nowMs: Int64, queuedAnswers: Int) throws(IAPError) {
        guard queuedAnswers < RequestBudget.maxQueuedAnswers else {
            throw IAPError(.busy, "\(queuedAnswers) answers to requests wait in the queue unpolled (at most \(RequestBudget.maxQueuedAnswers)): poll them first; nothing was asked of the store")
        }
        // `times[next]` is the oldest of the last `perSecond` acceptances.
        guard times[next] == .min || nowMs - times[next] >= 1000 else {
            throw IAPError(.busy, "\(RequestBudget.perSecond) requests were made in the last second (at most \(RequestBudget.perSecond) a second): nothing was asked of the store; ask again later, once")
        }
        times[next] = nowMs
        next = (next + 1) % times.count
    }
}
