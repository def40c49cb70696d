import IAPCore

/// The simulated App Store's own durable memory (in `simulator.stateDir`,
/// outside the game's `dataDir`, so deleting `dataDir` plays a reinstall).
/// An append-only log of events in the same checksummed frames as the
/// outbox: charges in a binary form, everything else as JSON objects.
/// `durable: false` skips syncs (benchmarks: the store's durability is
/// Apple's, not the SDK's).
final class SimStateLog {
    private let file: any DurableLog
    let durable: Bool
    static let fileName = "appstore.log"

    /// One event of the log, as `open` read it.
    enum Event {
        /// A charge in the binary form (`SimTransaction.encoded`).
        case charge(SimTransaction)
        /// Any other event, and a charge written as JSON before the binary
        /// form: read field by field (JSONFields), not as a JSON tree.
        case fields(JSONFields)
    }

    /// Opens the log and returns it with the events it holds. One that is
    /// neither a whole binary charge nor a whole JSON object is skipped.
    static func open(directory: String, durable: Bool, storage: any LogStorage) throws(IAPError) -> (SimStateLog, [Event]) {
        let (file, scan, _) = try storage.openLog(directory: directory, name: fileName)
        if scan.tailBytes > 0 { try file.truncate(to: scan.validEnd) }
        var events: [Event] = []
        events.reserveCapacity(scan.spans.count)
        var seen = SimTransaction.Seen()
        for span in scan.spans {
            if !span.isEmpty && scan.source[span.lowerBound] == SimTransaction.binaryTag {
                if let t = SimTransaction.decode(binary: scan.source, span, seen: &seen) { events.append(.charge(t)) }
            } else {
                let fields = JSONFields(Array(scan.source[span]))
                if fields.isComplete { events.append(.fields(fields)) }
            }
        }
        return (SimStateLog(file: file, durable: durable), events)
    }

    private init(file: any DurableLog, durable: Bool) {
        self.file = file
        self.durable = durable
    }

    func append(_ events: [[UInt8]]) throws(IAPError) {
        var framed: [UInt8] = []
        for e in events { RecordFrame.encode(e, into: &framed) }
        try file.appendFramed(framed)
        if durable { try file.sync() }
    }

    func close() { file.close_() }
}

func event(_ name: String, _ fill: (inout JSONObjectWriter) -> Void) -> [UInt8] {
    var w = JSONObjectWriter()
    w.string("e", name)
    fill(&w)
    return w.finish()
}
