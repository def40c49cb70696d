@_spi(Testing) import IAPCore
import IAPTestSupport
import Testing

/// What `iap_open` syncs. It used to sync the data and state directories and
/// their parents at every open, on the game's thread (four F_FULLFSYNCs on
/// an Apple device before a launch that writes nothing needs any); now a
/// locked directory is anchored in its parent by its first sync, before the
/// first write in it is acknowledged (C12 unchanged).
@Suite("Syncs at open")
struct OpenSyncTests {
    /// The directories synced under `env.root` from now until `taken`.
    static func watch(_ env: TestEnv) {
        POSIX.syncedDirectoriesWatch.withLock { $0[env.root] = [] }
    }

    static func taken(_ env: TestEnv) -> [String] {
        POSIX.syncedDirectoriesWatch.withLock { $0.removeValue(forKey: env.root) ?? [] }
    }

    /// Each of `dirs` synced (exactly once when `once`), its first sync
    /// after a sync of its parent.
    static func anchored(_ synced: [String], _ dirs: [String], parent: String, once: Bool = true) -> Bool {
        dirs.allSatisfy { dir in
            let n = synced.filter { $0 == dir }.count
            guard once ? n == 1 : n >= 1, let at = synced.firstIndex(of: dir) else { return false }
            return synced[..<at].contains(parent)
        }
    }

    @Test("a reopen with a result pending syncs nothing; the first purchase after it anchors both directories in their parent first; later ones sync no directory")
    func deferredToFirstWrite() throws {
        let env = TestEnv()
        let disk = SimulatedDisk()
        env.disk = disk

        // First launch: the game made the data directory (unsynced, as an
        // engine's persistent-path helper does); the store's is made by the SDK.
        try env.makeDataDir()
        Self.watch(env)
        var b = try env.open()
        let first = Self.taken(env)
        #expect(Self.anchored(first, [env.dataDir, env.stateDir], parent: env.root, once: false),
                "the logs created at the first open are named durably, their directories anchored: \(first)")
        let pending = try b.buy("coins_100", 1_700_000_000_001)
        #expect(b.drainResults().map(\.keyValue) == [pending])
        b.close()

        // Relaunch: a result is pending, nothing needs writing.
        Self.watch(env)
        disk.startJournal()
        b = try env.open()
        #expect(b.drainResults().map(\.keyValue) == [pending], "the pending result comes back")
        let atOpen = disk.stopJournal().filter {
            switch $0 {
            case .note: return false
            default: return true
            }
        }
        #expect(atOpen.isEmpty, "the reopen wrote or synced a log: \(atOpen)")
        #expect(Self.taken(env).isEmpty, "the reopen synced a directory")

        // The first purchase of this launch: its record (and the store's
        // charge) are acknowledged only after both directories are anchored.
        Self.watch(env)
        let key = try b.buy("coins_100", 1_700_000_000_002)
        #expect(b.drainResults().map(\.keyValue) == [key])
        let firstWrite = Self.taken(env)
        #expect(Self.anchored(firstWrite, [env.dataDir, env.stateDir], parent: env.root),
                "before the first \"7\" of the launch: \(firstWrite)")

        // Anchored once per open: the next purchase syncs no directory.
        Self.watch(env)
        let next = try b.buy("coins_100", 1_700_000_000_003)
        #expect(b.drainResults().map(\.keyValue) == [next])
        #expect(Self.taken(env).isEmpty)
        try b.confirm(pending)
        try b.confirm(key)
        try b.confirm(next)
        b.c.flush()
        b.close()
    }
}
