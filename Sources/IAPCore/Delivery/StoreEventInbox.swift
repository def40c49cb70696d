/// Store events on their way to the SDK thread, in the order the store
/// reported them: the first event into an empty inbox posts one job, which
/// handles every event put in before it runs.
///
/// A store reports from any thread (StoreKit's tasks, the simulator on the
/// SDK thread itself). One job per event cost a closure, a lock and a
/// signal each: at an open with 1,000 unfinished transactions, about 4,700
/// instructions an event. Events keep their order among themselves; a game
/// job posted between two events may now run after both (the store and the
/// game are independent sources: no order between them was ever promised).
final class StoreEventInbox: @unchecked Sendable {
    private let lock = Lock()
    // Read and written only under `lock`, which nothing called while it is
    // held can reach: the run-time exclusivity checks are off.
    @exclusivity(unchecked) private var events: [StoreEvent] = []
    /// The buffer the next batch is swapped into: touched only by the jobs
    /// `sink` posts, which run one at a time on the executor.
    @exclusivity(unchecked) private var spare: [StoreEvent] = []

    /// A batch this long is handed to `retire` once handled, instead of
    /// being emptied in place (its events released) in its job.
    static let retiredBatch = 1024

    /// The store's sink: puts each event in; the first into an empty inbox
    /// posts the job that hands every event in it, oldest first, to
    /// `handle` on `executor`. A long batch (a store's start re-delivering
    /// thousands) goes to `retire` once handled, which may keep it a while
    /// (`Coordinator.releaseAfterOpen`).
    func sink(to executor: Executor, retire: (@Sendable ([StoreEvent]) -> Void)? = nil,
              _ handle: @escaping @Sendable (StoreEvent) -> Void) -> @Sendable (StoreEvent) -> Void {
        { [self] event in
            guard put(event) else { return }
            executor.post { [self] in
                // The last batch's buffer, emptied: a batch allocates nothing.
                var batch = spare
                spare = []
                take(into: &batch)
                for e in batch { handle(e) }
                if batch.count >= StoreEventInbox.retiredBatch, let retire {
                    retire(batch)
                    batch = []
                } else {
                    batch.removeAll(keepingCapacity: true)
                }
                spare = batch
            }
        }
    }

    /// Adds `event`; true when the inbox was empty, so the caller posts the
    /// job that takes it (`take`).
    func put(_ event: StoreEvent) -> Bool {
        lock.withLock {
            events.append(event)
            return events.count == 1
        }
    }

    /// Every event put in so far, oldest first, swapped into `batch` (which
    /// the caller passes empty, keeping its capacity); the inbox is then
    /// empty.
    func take(into batch: inout [StoreEvent]) {
        lock.withLock { swap(&events, &batch) }
    }
}
