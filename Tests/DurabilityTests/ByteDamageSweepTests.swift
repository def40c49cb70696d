import Foundation
import IAPCore
import Testing

/// The byte-damage sweep: a sample outbox written by the real code (results,
/// failures, a revocation, confirms carried alone and riding along with a
/// result, tombstones written by a compaction, a forget), then cut at every
/// byte offset and, separately, every bit of every byte flipped; each damaged
/// file opened with the real `Outbox.open` and compared with an independent
/// replay of the frames that should survive.
@Suite("Byte-damage sweep")
struct ByteDamageSweepTests {
    /// What the outbox should hold after replaying some frames.
    struct Model: Equatable {
        var live: [UInt64: OutboxRecord] = [:]
        var tombstones: Set<String> = []

        static func tag(_ r: OutboxRecord) -> String? {
            switch r.kind {
            case .purchase, .unverified: return "t:" + r.transactionID
            case .revocation: return "r:" + r.transactionID
            case .failure: return nil
            }
        }

        mutating func apply(_ e: OutboxEntry) {
            switch e {
            case .put(let r):
                if live[r.id] == nil { live[r.id] = r }
            case .confirm(let ids):
                for id in ids {
                    if let r = live.removeValue(forKey: id), let t = Model.tag(r) { tombstones.insert(t) }
                }
            case .tombstone(let txn, let flavor):
                tombstones.insert((flavor == .transaction ? "t:" : "r:") + txn)
            case .forget(let tags):
                for t in tags { tombstones.remove(t) }
            case .intent, .keyMark, .failedClicks:
                break  // key bookkeeping: not part of what this model checks
            }
        }
    }

    /// A frame of the sample: where it lies and what it says.
    struct Frame {
        let start: Int
        let end: Int
        let entry: OutboxEntry
    }

    /// Writes the sample outbox with the real code and returns its bytes.
    static func writeSample(in dir: String) throws -> [UInt8] {
        var (box, _) = try Outbox.open(directory: dir)
        var ids: [UInt64] = []
        for i in 1...6 {
            let kind: RecordKind = i == 3 ? .failure : (i == 5 ? .revocation : .purchase)
            let txn = kind == .failure ? "" : String(2_000_000 + i)
            ids.append(try box.put(key: Int64(1_700_000_000_000 + i), kind: kind, transactionID: txn, facts: .sample(i)).id)
        }
        box.confirm([ids[0], ids[1]])
        _ = try box.flushConfirms()
        try box.compact()                         // tombstones t:2000001, t:2000002, live 3...6
        box.close()
        (box, _) = try Outbox.open(directory: dir)  // tombstones now from an earlier session
        try box.forgetFinished(stillUnfinished: ["2000002"])  // forget t:2000001
        ids.append(try box.put(key: 1_700_000_000_007, kind: .purchase, transactionID: "2000007", facts: .sample(7)).id)
        ids.append(try box.put(key: 1_700_000_000_008, kind: .unverified, transactionID: "2000008", facts: .sample(8)).id)
        box.confirm([ids[2], ids[6]])
        // This result carries the two confirms above in the same write.
        ids.append(try box.put(key: 1_700_000_000_009, kind: .purchase, transactionID: "2000009", facts: .sample(9)).id)
        _ = try box.flushConfirms()
        box.confirm([ids[3]])
        _ = try box.flushConfirms()
        box.close()
        return try POSIX.readFile(dir + "/" + Outbox.fileName) ?? []
    }

    /// Frame boundaries read straight from the headers (not through the scanner under test).
    static func frames(_ bytes: [UInt8]) -> [Frame] {
        var out: [Frame] = []
        var pos = 0
        while pos + RecordFrame.headerSize <= bytes.count {
            let len = Int(bytes[pos + 4]) | Int(bytes[pos + 5]) << 8 | Int(bytes[pos + 6]) << 16 | Int(bytes[pos + 7]) << 24
            let end = pos + RecordFrame.headerSize + len
            precondition(end <= bytes.count)
            let entry = OutboxEntry.decode(Array(bytes[(pos + RecordFrame.headerSize)..<end]))!
            out.append(Frame(start: pos, end: end, entry: entry))
            pos = end
        }
        precondition(pos == bytes.count)
        return out
    }

    static func model(_ frames: [Frame]) -> Model {
        var m = Model()
        for f in frames { m.apply(f.entry) }
        return m
    }

    /// What an opened outbox holds, in the model's terms.
    static func observed(_ box: Outbox, like m: Model) -> (live: [OutboxRecord], tombstonesMatch: Bool) {
        let allTombstones = m.tombstones.allSatisfy { t in
            box.hasTombstone(transaction: String(t.dropFirst(2)), flavor: t.hasPrefix("t:") ? .transaction : .revocation)
        } && box.tombstoneCount == m.tombstones.count
        return (box.liveRecords, allTombstones)
    }

    static func reset(_ dir: String) {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? [] {
            unlink(dir + "/" + name)
        }
    }

    @Test("the sample holds every kind of frame and opens clean")
    func sampleIsRich() throws {
        let s = Scratch(fast: true)
        mkdir(s.dataDir, 0o700)
        let bytes = try Self.writeSample(in: s.dataDir)
        let frames = Self.frames(bytes)
        var kinds = Set<String>()
        var multiConfirmWrite = false
        for (i, f) in frames.enumerated() {
            switch f.entry {
            case .put: kinds.insert("put")
            case .confirm:
                kinds.insert("confirm")
                if i + 1 < frames.count, case .put = frames[i + 1].entry { multiConfirmWrite = true }
            case .tombstone: kinds.insert("tombstone")
            case .forget: kinds.insert("forget")
            case .intent: kinds.insert("intent")
            case .keyMark: kinds.insert("keyMark")
            case .failedClicks: kinds.insert("failedClicks")
            }
        }
        #expect(kinds.isSuperset(of: ["put", "confirm", "tombstone", "forget"]))
        #expect(multiConfirmWrite, "a confirm should ride along with a result")
        let (box, report) = try Outbox.open(directory: s.dataDir)
        defer { box.close() }
        #expect(report.damagedCopy == nil && report.droppedTailBytes == 0)
        let m = Self.model(frames)
        let seen = Self.observed(box, like: m)
        #expect(seen.live == m.live.keys.sorted().map { m.live[$0]! })
        #expect(seen.tombstonesMatch)
        #expect(m.live.count == 4 && m.tombstones.count == 3, "live \(m.live.count), tombstones \(m.tombstones.count)")
    }

    @Test("truncation at every byte offset: every record wholly before the cut is recovered; the torn tail is dropped silently")
    func truncateEveryByte() throws {
        let s = Scratch(fast: true)
        mkdir(s.dataDir, 0o700)
        let bytes = try Self.writeSample(in: s.dataDir)
        let frames = Self.frames(bytes)
        var recovered = 0, silentTails = 0, mismatches = 0, reported = 0
        for cut in 0...bytes.count {
            Self.reset(s.dataDir)
            s.write(s.outboxPath, Array(bytes[0..<cut]))
            let whole = frames.filter { $0.end <= cut }
            let boundary = whole.last?.end ?? 0
            let m = Self.model(whole)
            let (box, report) = try Outbox.open(directory: s.dataDir)
            let seen = Self.observed(box, like: m)
            box.close()
            if seen.live != m.live.keys.sorted().map({ m.live[$0]! }) || !seen.tombstonesMatch { mismatches += 1 }
            if report.damagedCopy != nil { reported += 1 }
            if cut > boundary {
                silentTails += 1
                #expect(report.droppedTailBytes == cut - boundary, "cut \(cut)")
            }
            #expect(s.read(s.outboxPath).count == boundary, "cut \(cut): the torn tail is cut off the file")
            recovered += seen.live.count
        }
        let offsets = bytes.count + 1
        print("byte-damage sweep: truncation at \(offsets) offsets of a \(bytes.count)-byte outbox (\(frames.count) frames): "
              + "0 crashes, \(offsets - mismatches) exact recoveries, \(mismatches) wrong, \(silentTails) torn tails dropped silently, "
              + "\(reported) reported as damage, \(recovered) live records recovered in all")
        #expect(mismatches == 0)
        #expect(reported == 0, "a torn tail is not damage")
        #expect(silentTails == offsets - frames.count - 1)
    }

    @Test("a flipped bit anywhere costs only the frame it hits, is reported with a copy kept aside, and never crashes")
    func flipEveryBit() throws {
        let s = Scratch(fast: true)
        mkdir(s.dataDir, 0o700)
        let bytes = try Self.writeSample(in: s.dataDir)
        let frames = Self.frames(bytes)
        var flips = 0, exact = 0, reported = 0, copiesIntact = 0, cleanAfter = 0, recovered = 0
        for offset in 0..<bytes.count {
            let hit = frames.firstIndex { $0.start <= offset && offset < $0.end }!
            var rest = frames
            rest.remove(at: hit)
            let m = Self.model(rest)
            let expected = m.live.keys.sorted().map { m.live[$0]! }
            for bit in 0..<8 {
                flips += 1
                Self.reset(s.dataDir)
                var damaged = bytes
                damaged[offset] ^= UInt8(1) << UInt8(bit)
                s.write(s.outboxPath, damaged)
                let (box, report) = try Outbox.open(directory: s.dataDir)
                let seen = Self.observed(box, like: m)
                box.close()
                if seen.live == expected && seen.tombstonesMatch { exact += 1 } else {
                    Issue.record("flip at byte \(offset) bit \(bit) (frame \(hit)): recovered \(seen.live.map(\.id)), expected \(expected.map(\.id))")
                }
                recovered += seen.live.count
                if let copy = report.damagedCopy {
                    reported += 1
                    if s.read(copy) == damaged && mode(of: copy) == 0o600 { copiesIntact += 1 }
                } else {
                    Issue.record("flip at byte \(offset) bit \(bit) (frame \(hit)) was not reported")
                }
                // The repaired file opens clean, with the same records.
                let (again, second) = try Outbox.open(directory: s.dataDir)
                if second.damagedCopy == nil && second.droppedTailBytes == 0 && again.liveRecords == expected { cleanAfter += 1 }
                again.close()
            }
        }
        print("byte-damage sweep: \(flips) bit flips (every bit of \(bytes.count) bytes, \(frames.count) frames): 0 crashes, "
              + "\(exact) lost only the frame hit, \(reported) reported (outbox_damaged), \(copiesIntact) damaged copies kept intact (0600), "
              + "\(cleanAfter) clean on the next open, \(recovered) live records recovered in all")
        #expect(exact == flips)
        #expect(reported == flips)
        #expect(copiesIntact == flips)
        #expect(cleanAfter == flips)
    }
}
