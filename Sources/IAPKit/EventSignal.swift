import IAPCore

/// Wakes the event stream when the queue gets a message: `raise` after each
/// push, `finish` at close. A raise with nobody waiting is remembered, so a
/// push between an empty pop and `wait` is never missed.
final class EventSignal: Sendable {
    private struct State {
        var raised = false
        var finished = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }
    private let state = Locked(State())

    var isFinished: Bool { state.withLock { $0.finished } }

    func raise() { wake(finishing: false) }

    func finish() { wake(finishing: true) }

    private func wake(finishing: Bool) {
        let waiters = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            if finishing { s.finished = true }
            let w = s.waiters
            s.waiters = []
            s.raised = w.isEmpty
            return w
        }
        for w in waiters { w.resume() }
    }

    /// Returns once raised since the last wait, finished, or the task is cancelled.
    func wait() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                let now = state.withLock { s -> Bool in
                    if s.raised || s.finished || Task.isCancelled {
                        s.raised = false
                        return true
                    }
                    s.waiters.append(c)
                    return false
                }
                if now { c.resume() }
            }
        } onCancel: {
            raise()
        }
    }
}
