/// The store of a bridge being opened, finished on the SDK thread while the
/// opening thread reads dataDir (Coordinator.open): what that job made of
/// it, and what the open does with it when it fails.
final class StoreAtOpen: @unchecked Sendable {
    private enum State {
        /// The SDK thread's job has not run.
        case pending
        /// The open failed before the job ran: the job released the opening.
        case released
        case done(Result<Store, IAPError>)
    }

    private let monitor = Monitor()
    // Under `monitor`.
    private var state = State.pending
    private var abandoned = false

    /// The job (on the SDK thread, or inline without one): finishes the
    /// opening and, with `prepare`, has the store make its start ready.
    /// Releases the opening instead when the open was abandoned first.
    func finish(_ opening: StoreOpening, prepare: Bool) {
        if monitor.locked({ abandoned }) {
            opening.abandon()
            settle(.released)
            return
        }
        let result: Result<Store, IAPError>
        do throws(IAPError) {
            let store = try opening.finish()
            if prepare && !monitor.locked({ abandoned }) { store.prepareStart() }
            result = .success(store)
        } catch {
            result = .failure(error)
        }
        settle(.done(result))
    }

    private func settle(_ s: State) {
        monitor.locked {
            state = s
            monitor.broadcast()
        }
    }

    /// The opening thread: the open failed; the job, if it has not begun,
    /// reads nothing.
    func abandon() { monitor.locked { abandoned = true } }

    /// The opening thread, once the job can no longer run (the SDK thread
    /// stopped): stops a store the job made (unless its maker owns it) or
    /// releases an opening the job never took, and returns the store's own
    /// failure, which an open reports first.
    func cleanUp(_ opening: StoreOpening) -> IAPError? {
        switch monitor.locked({ state }) {
        case .pending:
            opening.abandon()
            return nil
        case .released:
            return nil
        case .done(.success(let store)):
            if opening.bridgeStopsStore { store.stop() }
            return nil
        case .done(.failure(let error)):
            return error
        }
    }

    /// The opening thread: waits for the job's outcome.
    func wait() -> Result<Store, IAPError> {
        monitor.locked {
            while true {
                if case .done(let r) = state { return r }
                precondition(!abandoned, "an abandoned open does not wait for its store")
                monitor.wait()
            }
        }
    }
}
