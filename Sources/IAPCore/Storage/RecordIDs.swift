/// The live record IDs under one key or one transaction, oldest first: the
/// value of the outbox's two indexes.
///
/// Almost always one ID, kept inline: an array per index entry cost an
/// allocation and a free per record and index, at every store and at every
/// open (2,000 of each for 1,000 pending results). A second ID (a click on
/// something owned, a record copied under another key) goes to `more`.
public struct RecordIDs: RandomAccessCollection, Sendable {
    private var first: UInt64
    private var more: [UInt64] = []

    init(_ id: UInt64) { first = id }

    public var startIndex: Int { 0 }
    public var endIndex: Int { 1 + more.count }
    public subscript(i: Int) -> UInt64 { i == 0 ? first : more[i - 1] }

    mutating func append(_ id: UInt64) { more.append(id) }

    /// These IDs without `id`; nil when none is left.
    func removing(_ id: UInt64) -> RecordIDs? {
        if more.isEmpty { return first == id ? nil : self }
        let left = filter { $0 != id }
        guard let head = left.first else { return nil }
        var r = RecordIDs(head)
        r.more = Array(left.dropFirst())
        return r
    }
}
