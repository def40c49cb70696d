/// `iap_open`'s wait, put to work. The open waits while the SDK thread
/// resolves what the outbox held (C11) and queues a message for each record;
/// rendering those messages to JSON was a fifth of that thread's work, done
/// one after another while the opening thread slept on the other core. While
/// the open lasts, the queue keeps the messages pushed unrendered
/// (`MessageQueue.beginRenderingAhead`) and the opening thread renders them
/// (`help`) as the SDK thread goes on resolving.
///
/// Nothing the game sees changes: a message is the same bytes whichever
/// thread renders it, the queue's order and count are untouched, and a
/// message still unrendered when it is taken is rendered by the taker
/// (`MessageQueue.pop`, the callback thread's drain).
final class RenderAhead: @unchecked Sendable {
    private let monitor = Monitor()
    // Under `monitor`.
    private var pokes: UInt64 = 0
    private var finished = false
    private var waiting = false
    /// What the SDK thread rendered itself once its work was done.
    private var renderedByFinisher = 0

    /// How many messages the SDK thread queues unrendered between two
    /// wake-ups of the helper, and how many the helper renders per visit to
    /// the queue's lock: a wake-up or a lock round trip per message would
    /// cost more than the render it moves.
    static let batch = 128

    /// SDK thread: `batch` more messages wait to be rendered.
    func poke() {
        monitor.locked {
            pokes &+= 1
            if waiting { monitor.signal() }
        }
    }

    /// SDK thread: the open's work is done (the queue renders at push
    /// again); it rendered `rendered` of the messages itself.
    func finish(rendered: Int = 0) {
        monitor.locked {
            finished = true
            renderedByFinisher = rendered
            monitor.signal()
        }
    }

    /// The opening thread: renders what `queue` holds unrendered until
    /// `finish`, and then what is left (the SDK thread ended the rendering
    /// ahead before it finished: nothing unrendered comes after), so that
    /// the game's polls only copy; returns how many both threads rendered.
    @discardableResult
    func help(_ queue: MessageQueue) -> Int {
        var rendered = 0
        while true {
            let seen = monitor.locked { pokes }
            rendered += RenderAhead.renderAll(queue)
            let done: Bool = monitor.locked {
                // A poke since `seen` means more to render: no wait (a poke
                // made while this thread rendered is not lost).
                while !finished && pokes == seen {
                    waiting = true
                    monitor.wait()
                    waiting = false
                }
                return finished
            }
            if done { return rendered + RenderAhead.renderAll(queue) + monitor.locked { renderedByFinisher } }
        }
    }

    /// Renders until nothing is left unrendered; returns how many. Two
    /// threads may both call it: each takes a batch at a time.
    static func renderAll(_ queue: MessageQueue) -> Int {
        var rendered = 0
        while true {
            let n = queue.renderAhead(limit: RenderAhead.batch * 2)
            if n == 0 { return rendered }
            rendered += n
        }
    }
}
