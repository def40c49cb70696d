import Foundation
import IAPCore
import IAPSimulator
import Testing

/// C7 (docs/CONTRACT.md, "keys only increase"): a key is never handed out
/// twice on one dataDir, whatever the game's clock, a restored backup or the
/// outbox's key mark say.
@Suite("Keys (C7)")
struct KeyTests {
    /// One launch of the game: buys with these clicks, grants and confirms
    /// every result, closes. Returns the keys `iap_buy` handed out.
    static func session(_ env: TestEnv, _ clicks: [Int64]) throws -> [Int64] {
        let b = try env.open()
        try b.confirmAll(b.drainResults())
        var keys: [Int64] = []
        for click in clicks { keys.append(try b.buy("coins_100", click)) }
        let results = b.drainResults()
        #expect(results.compactMap(\.keyValue).sorted() == keys.sorted(), "one \"7\" per purchase, under the key iap_buy returned")
        try b.confirmAll(results)
        b.close()
        return keys
    }

    /// The dataDir's files (the lock file aside), as a device backup holds them.
    static func backup(_ dir: String) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: dir) where name != ".lock" {
            files[name] = try Data(contentsOf: URL(fileURLWithPath: dir + "/" + name))
        }
        return files
    }

    /// Puts a backup back: the dataDir holds exactly its files again.
    static func restore(_ files: [String: Data], to dir: String) throws {
        for name in try FileManager.default.contentsOfDirectory(atPath: dir) where name != ".lock" {
            try FileManager.default.removeItem(atPath: dir + "/" + name)
        }
        for (name, data) in files { try data.write(to: URL(fileURLWithPath: dir + "/" + name)) }
    }

    @Test("an outbox restored from an older backup (the game's cloud save not) hands out no key again to an engine clock (issue 21, defect 3)")
    func restoredBackup() throws {
        let env = TestEnv()
        // An engine clock: milliseconds since launch, so every launch clicks
        // low. The game's save (restored from the cloud, not from the
        // backup) holds every key it was handed.
        var handed = try Self.session(env, [5_000, 9_000])
        let older = try Self.backup(env.dataDir)
        handed += try Self.session(env, [3_000, 4_000, 12_000])
        handed += try Self.session(env, [2_000])
        #expect(Set(handed).count == handed.count)
        // The device is restored from the older backup, some time later.
        try Self.restore(older, to: env.dataDir)
        usleep(20_000)
        let after = try Self.session(env, [3_000, 4_000, 12_000, 2_000, 5_000])
        #expect(Set(after).count == after.count)
        #expect(Set(after).isDisjoint(with: handed),
                "handed out again after the restore: \(Set(after).intersection(handed).sorted()); the game ignores those keys and the player loses the purchase")
    }
}
