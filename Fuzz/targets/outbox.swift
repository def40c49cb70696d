#if canImport(Glibc)
import Glibc
#endif
import IAPCore

// Target "outbox": the outbox decoder and its recovery. The first byte picks
// how the rest is read:
//   even: the rest is an outbox file as found on disk (torn, flipped, garbage);
//   odd:  the rest is a list of payloads (u16 length + bytes), framed here
//         with correct checksums, so the fuzzer reaches OutboxEntry.decode
//         and replay without having to forge CRC32C.
// Oracles: scan and decode never trap; a decoded entry re-encodes to the same
// bytes; Outbox.open recovers, and a second open of what it left is clean
// and holds the same live records; appends and a compaction keep them.

private let dir = fuzzScratch + "/outbox"

private func frames(_ rest: ArraySlice<UInt8>) -> [UInt8] {
    var out: [UInt8] = []
    var i = rest.startIndex
    while i + 2 <= rest.endIndex {
        let n = Int(rest[i]) | Int(rest[i + 1]) << 8
        i += 2
        let end = min(rest.endIndex, i + n)
        RecordFrame.encode(Array(rest[i..<end]), into: &out)
        i = end
    }
    return out
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOutbox(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = bytes(data, size)
    guard let mode = input.first else { return 0 }
    let file = mode & 1 == 0 ? Array(input.dropFirst()) : frames(input.dropFirst())

    let scan = RecordFrame.scan(file)
    check(scan.validEnd <= file.count && scan.tailBytes <= file.count, "scan offsets out of range")
    for p in scan.records {
        if let e = OutboxEntry.decode(p) {
            // A format 1 result is written again in format 2 (its facts).
            if p.first == 1 {
                check(OutboxEntry.decode(e.encoded()) == e, "a format 1 record does not keep its facts in format 2")
            } else {
                check(e.encoded() == p, "decode/encode is not the identity")
            }
        }
    }

    mkdir(dir, 0o700)
    defer { removeTree(dir) }
    writeFile(dir + "/" + Outbox.fileName, file)
    let first: [OutboxRecord]
    do {
        let (box, report) = try Outbox.open(directory: dir)
        check(report.recovered == box.liveCount, "report disagrees with the live records")
        first = box.liveRecords
        box.close()
    } catch {
        check(false, "Outbox.open failed on a readable file: \(error)")
        return 0
    }
    // What recovery left behind is clean and says the same.
    do {
        let (box, report) = try Outbox.open(directory: dir)
        check(!report.isDamaged && report.droppedTailBytes == 0, "second open still finds damage: \(report)")
        check(box.liveRecords == first, "second open sees different live records")
        // The outbox still works: a put, a confirm of the oldest, a compaction.
        let r = try box.put(key: Int64.min, kind: .failure, transactionID: "", facts: .failure(productID: "", failure: .unknown, detail: ""))
        if let oldest = first.first { box.confirm([oldest.id]) }
        _ = try box.flushConfirms()
        try box.compact()
        let expected = box.liveRecords
        check(expected.contains(r), "the new record is not live")
        box.close()
        let (again, report2) = try Outbox.open(directory: dir)
        check(!report2.isDamaged, "damage after compaction")
        check(again.liveRecords == expected, "compaction changed the live records")
        again.close()
    } catch {
        check(false, "outbox operation failed after recovery: \(error)")
    }
    return 0
}
