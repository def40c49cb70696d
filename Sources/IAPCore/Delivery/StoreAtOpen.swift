/// The store of a bridge being opened, finished on the SDK thread while the
/// opening thread reads dataDir (Coordinator.open): what that job made of
/// it, and what the open does with it when it fails.
final class StoreAtOpen: @unchecked Sendable {
    private let monitor = Monitor()
    // Under `monitor`.
    private var outcome: Result<Store, IAPError>? = nil
    private var abandoned = false

    /// The job (on the SDK thread, or inline without one): finishes the
    /// opening and, with `prepare`, has the store make its start ready
    /// (not once the open was abandoned). The opening is always finished,
    /// even for an open failing elsewhere: the store's own failure is what
    /// such an open reports, as when the store was opened first.
    func finish(_ opening: StoreOpening, prepare: Bool) {
        let result: Result<Store, IAPError>
        do throws(IAPError) {
            let store = try opening.finish()
            if prepare && !monitor.locked({ abandoned }) { store.prepareStart() }
            result = .success(store)
        } catch {
            result = .failure(error)
        }
        monitor.locked {
            outcome = result
            monitor.broadcast()
        }
    }

    /// The opening thread: the open failed; the store need not prepare.
    func abandon() { monitor.locked { abandoned = true } }

    /// The opening thread: waits for the job's outcome (the job never
    /// waits for this thread).
    func wait() -> Result<Store, IAPError> {
        monitor.locked {
            while true {
                if let outcome { return outcome }
                monitor.wait()
            }
        }
    }

    /// The opening thread, the open having failed, once the job has run:
    /// stops the store it made (unless its maker owns it) and returns the
    /// store's own failure, which the open reports first.
    func cleanUp(_ opening: StoreOpening) -> IAPError? {
        switch wait() {
        case .success(let store):
            if opening.bridgeStopsStore { store.stop() }
            return nil
        case .failure(let error):
            return error
        }
    }

    /// What dataDir's read calls before it repairs anything (sets a file
    /// aside, rewrites the outbox, replaces the install identity): waits
    /// for the store and throws its failure, so that an open the store
    /// fails leaves dataDir as it found it, and the next open reports the
    /// damage.
    func throwIfFailed() throws(IAPError) {
        if case .failure(let error) = wait() { throw error }
    }
}
