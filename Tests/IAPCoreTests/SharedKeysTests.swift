@testable import IAPCore
import Testing

/// `Outbox.sharedKeys`: the keys of more than one live record, which the
/// resolution at open asks the key index about; under any other key the
/// record being resolved is the only one, and no index is asked.
@Suite struct SharedKeysTests {
    @Test func keysOfMoreThanOneLiveRecord() throws {
        let env = TestEnv()
        try env.makeDataDir()
        var (box, _) = try Outbox.open(directory: env.dataDir)
        #expect(box.sharedKeys().isEmpty)
        let a = try box.put(key: 5, kind: .purchase, transactionID: "100", facts: .sample(1))
        _ = try box.put(key: 6, kind: .purchase, transactionID: "101", facts: .sample(2))
        #expect(box.sharedKeys().isEmpty)
        // A second record under key 5 (another transaction), and a failure under key 7 beside a purchase.
        let b = try box.put(key: 5, kind: .purchase, transactionID: "200", facts: .sample(3))
        _ = try box.put(key: 7, kind: .purchase, transactionID: "300", facts: .sample(4))
        _ = try box.put(key: 7, kind: .failure, transactionID: "",
                        facts: .failure(productID: "coins_100", failure: .declined, detail: "declined"))
        var shared = box.sharedKeys()
        #expect(shared.count == 2 && shared.contains(5) && shared.contains(7) && !shared.contains(6))
        #expect(box.hasLive(key: 5, otherThan: "100"))
        // The second leaves: key 5 is held by one record again.
        box.confirm([b.id])
        shared = box.sharedKeys()
        #expect(shared.count == 1 && shared.contains(7) && !shared.contains(5))
        #expect(!box.hasLive(key: 5, otherThan: "100"))
        _ = try box.flushConfirms()
        box.close()
        // The same after a reopen (the index rebuilt from the file).
        (box, _) = try Outbox.open(directory: env.dataDir)
        shared = box.sharedKeys()
        #expect(shared.count == 1 && shared.contains(7))
        #expect(box.key(ofLive: a.id) == 5)
        box.close()
    }
}
