import Foundation
@_spi(Testing) import IAPCore
import IAPSimulator
import IAPTestSupport
import Testing

/// What `iap_open` syncs. It used to sync the data and state directories and
/// their parents at every open, on the game's thread (four F_FULLFSYNCs on
/// an Apple device at launches that need none). Now a locked directory is
/// anchored in its parent (its parent synced, then itself) once an open,
/// before the SDK acknowledges a write in it or acts on what it read there:
/// at the open when it has stored results to show again, else before the
/// first purchase asks the store (C2, C12 unchanged).
@Suite("Syncs at open")
struct OpenSyncTests {
    /// dataDir and stateDir under different parents, so each directory's
    /// anchoring is told apart: the game's folder (made by the game,
    /// unsynced, as an engine's persistent-path helper does) holds dataDir.
    struct Dirs {
        let env = TestEnv()
        let disk = SimulatedDisk()
        var dataDir: String { gameDir + "/data" }
        var stateDir: String { env.stateDir }

        /// `nested`: dataDir inside stateDir (allowed), whose store keeps
        /// nothing durable, so only the outbox's syncs anchor anything.
        let nested: Bool
        var gameDir: String { nested ? stateDir : env.root + "/game" }

        init(nested: Bool = false) throws {
            self.nested = nested
            try FileManager.default.createDirectory(atPath: env.root + "/game/data", withIntermediateDirectories: true)
        }

        func open() throws -> Bridge {
            let json = "{\"store\":\"simulator\",\"dataDir\":\"\(dataDir)\",\"catalog\":\"\(env.catalog)\","
                + "\"simulator\":{\"stateDir\":\"\(stateDir)\",\"tickMs\":0,\"purchaseDelayMs\":0,\"durable\":\(!nested)}}"
            let config = try BridgeConfig.parse(Array(json.utf8))
            let store = try SimulatedStore.open(config: config, storage: disk)
            return Bridge(try Coordinator.open(config: config, store: store, storage: disk), disk: disk)
        }

        /// The directories synced under the test's root from now until `taken`.
        func watch() { POSIX.syncedDirectoriesWatch.withLock { $0[env.root] = [] } }
        func taken() -> [String] { POSIX.syncedDirectoriesWatch.withLock { $0.removeValue(forKey: env.root) ?? [] } }

        /// A first launch that buys once, its result confirmed (nothing to
        /// show at the next open) or left pending; returns its key.
        func firstLaunch(confirmed: Bool) throws -> Int64 {
            let b = try open()
            let key = try b.buy("coins_100", 1_700_000_000_001)
            #expect(b.drainResults().map(\.keyValue) == [key])
            if confirmed {
                try b.confirm(key)
                b.c.flush()
            }
            b.close()
            return key
        }

        /// The index of the sync that anchored `dir`: its first sync, right
        /// after a sync of its parent. Nil when it was not anchored.
        func anchoring(_ dir: String, in synced: [String]) -> Int? {
            guard let at = synced.firstIndex(of: dir), at > 0, synced[at - 1] == POSIX.parent(of: dir) else { return nil }
            return at
        }
    }

    @Test("a reopen with nothing to show syncs nothing; its first purchase anchors dataDir (parent, then itself) before the store is asked; the next syncs no directory")
    func nothingToShow() throws {
        let d = try Dirs()
        _ = try d.firstLaunch(confirmed: true)

        d.watch()
        d.disk.startJournal()
        let b = try d.open()
        #expect(b.drainResults().isEmpty)
        // (Appends, not synced, may be made: the store's finished
        // transactions forgotten; they are durable with the next sync.)
        let atOpen = d.disk.stopJournal().filter {
            switch $0 {
            case .append, .note: return false
            default: return true
            }
        }
        #expect(atOpen.isEmpty, "the reopen synced or rewrote a log: \(atOpen)")
        #expect(d.taken().isEmpty, "the reopen synced a directory")

        d.watch()
        let next = try b.buy("coins_100", 1_700_000_000_002)
        #expect(b.drainResults().map(\.keyValue) == [next])
        let synced = d.taken()
        let data = d.anchoring(d.dataDir, in: synced), state = d.anchoring(d.stateDir, in: synced)
        #expect(data != nil && state != nil, "both directories anchored before the \"7\": \(synced)")
        // The store's charge anchors stateDir: dataDir was anchored before it.
        #expect((data ?? .max) < (state ?? .min), "dataDir anchored before the store was asked: \(synced)")
        #expect(synced.filter { $0 == d.dataDir }.count == 1, "once: \(synced)")

        d.watch()
        let third = try b.buy("coins_100", 1_700_000_000_003)
        #expect(b.drainResults().map(\.keyValue) == [third])
        #expect(d.taken().isEmpty, "anchored once an open")
        b.close()
    }

    @Test("a reopen with a result to show anchors dataDir (parent, then itself) before iap_open returns; stateDir is left for its first write")
    func resultToShow() throws {
        let d = try Dirs()
        let pending = try d.firstLaunch(confirmed: false)

        d.watch()
        let b = try d.open()
        let atOpen = d.taken()
        #expect(atOpen == [d.gameDir, d.dataDir], "at open, before anything is shown: \(atOpen)")
        #expect(b.drainResults().map(\.keyValue) == [pending], "the pending result comes back")
        try b.confirm(pending)
        b.c.flush()
        b.close()
    }

    @Test("dataDir inside the stateDir: anchoring dataDir anchors the stateDir first (the directory above is locked and unanchored too)")
    func nested() throws {
        let d = try Dirs(nested: true)
        var b = try d.open()
        b.close()
        b = try d.open()
        d.watch()
        let key = try b.buy("coins_100", 1_700_000_000_001)
        #expect(b.drainResults().map(\.keyValue) == [key])
        let synced = d.taken()
        #expect(d.anchoring(d.stateDir, in: synced) != nil && d.anchoring(d.dataDir, in: synced) != nil,
                "each anchored in its parent: \(synced)")
        try b.confirm(key)
        b.c.flush()
        b.close()
    }
}
