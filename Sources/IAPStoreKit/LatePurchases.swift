#if canImport(StoreKit)
import StoreKit
#else
import StoreKitStandIn
#endif
import IAPCore

/// Purchases StoreKit answered after their bridge closed, kept for the
/// process.
///
/// `iap_close` cannot cancel a payment sheet the player still has open: its
/// purchase call answers whenever the player is done, to a store that no
/// longer reports anything. StoreKit gives a purchase made on this device
/// through that answer only (`Transaction.updates` re-sends unfinished
/// transactions once, at launch), so a bridge the game opens again in the
/// same process (leaving the shop scene, a desktop engine's reload) would
/// not see the player's purchase until the next launch. The answer is handed
/// here instead, and the open bridge (or the next one) reports it as a
/// store update: its token gives the click's key (C5). Unfinished until the
/// game confirms it, the transaction is never lost either way; this only
/// brings it sooner.
final class LatePurchases: @unchecked Sendable {
    static let shared = LatePurchases()

    private let lock = Lock()
    /// Answers no open bridge took yet, oldest first.
    private var waiting: [VerificationResult<Transaction>] = []
    /// The open bridge that reports them (the newest to attach); `take`
    /// answers false when its store is stopping (the answer then waits).
    private var owner: (id: Int, take: @Sendable (VerificationResult<Transaction>) -> Bool)? = nil
    private var nextID = 0

    /// A stopped store's late answer: to the open bridge, else kept.
    func hand(_ result: VerificationResult<Transaction>) {
        let take: (@Sendable (VerificationResult<Transaction>) -> Bool)? = lock.withLock {
            if let owner { return owner.take }
            waiting.append(result)
            return nil
        }
        if let take, !take(result) { lock.withLock { waiting.append(result) } }
    }

    /// An opening store takes the late answers from now on, and those kept.
    /// Returns its registration, for `detach`.
    func attach(_ take: @escaping @Sendable (VerificationResult<Transaction>) -> Bool) -> Int {
        let (id, kept): (Int, [VerificationResult<Transaction>]) = lock.withLock {
            nextID += 1
            owner = (nextID, take)
            defer { waiting = [] }
            return (nextID, waiting)
        }
        let refused = kept.filter { !take($0) }
        if !refused.isEmpty { lock.withLock { waiting.insert(contentsOf: refused, at: 0) } }
        return id
    }

    /// A stopping store takes no more (unless a newer one took over already).
    func detach(_ id: Int) {
        lock.withLock { if owner?.id == id { owner = nil } }
    }

    /// Answers waiting for a bridge (tests).
    var waitingCount: Int { lock.withLock { waiting.count } }
}
