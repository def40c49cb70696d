@testable import IAPCore
import Testing

/// RecordIDs, the outbox index's value (one ID inline, more beside): order
/// kept, and removing any one of them leaves exactly the others.
@Suite("Outbox index entries")
struct RecordIDsTests {
    static func make(_ ids: [UInt64]) -> RecordIDs {
        var r = RecordIDs(ids[0])
        for id in ids.dropFirst() { r.append(id) }
        return r
    }

    @Test("one, two and five IDs: each removed in turn leaves the others in order; the last removed leaves nothing")
    func removeEach() {
        for ids: [UInt64] in [[7], [7, 9], [3, 1, 4, 5, 9]] {
            let r = Self.make(ids)
            #expect(Array(r) == ids)
            for id in ids {
                let left = ids.filter { $0 != id }
                #expect(r.removing(id).map(Array.init) ?? [] == left, "\(ids) without \(id)")
                #expect((r.removing(id) == nil) == left.isEmpty)
            }
            #expect(r.removing(1000).map(Array.init) == ids, "an ID not there changes nothing")
        }
    }
}
