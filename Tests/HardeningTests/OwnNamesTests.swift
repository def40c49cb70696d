import Foundation
import IAPCore
import Testing

/// The SDK's own names in dataDir (`.lock`, `install-id.tmp`, `outbox.log.tmp`)
/// holding what the SDK did not put there: a dataDir copied or synced from
/// elsewhere, a player's tool. A symbolic link is never followed (the SDK
/// chmodded and overwrote a game save a `.lock` or `install-id.tmp` link
/// named, and created a dangling link's target: found by an attack on the
/// disk), and something that is not a file is set aside, never a reason to
/// refuse every iap_open for good.
@Suite("The SDK's own names")
struct OwnNamesTests {
    /// A game file outside dataDir, mode 0644, and its bytes.
    static func gameSave(_ s: Scratch) -> String {
        let path = s.path + "/game-save.dat"
        write(path, "PLAYER SAVE: level 42, 9000 gold")
        chmod(path, 0o644)
        return path
    }

    static func mode(_ path: String) -> mode_t {
        var st = stat()
        return stat(path, &st) == 0 ? st.st_mode & 0o777 : 0
    }

    func expectUntouched(_ save: String, _ what: String) {
        #expect(String(decoding: contents(save) ?? [], as: UTF8.self) == "PLAYER SAVE: level 42, 9000 gold", "\(what): the game's file was written")
        #expect(Self.mode(save) == 0o644, "\(what): the game's file's mode changed to \(String(Self.mode(save), radix: 8))")
    }

    @Test("a .lock that links to a game file outside dataDir: opened, the game file untouched (mode and bytes), the link set aside")
    func lockLink() throws {
        try #require(FileManager.default.isExecutableFile(atPath: OddFilesTests.driver))
        let s = Scratch("lock-link")
        mkdir(s.dataDir, 0o700)
        let save = Self.gameSave(s)
        #expect(symlink(save, s.dataDir + "/.lock") == 0)
        try OddFilesTests().expectOpened(s, ".lock link")
        expectUntouched(save, ".lock link")
        #expect(POSIX.nonRegularKind(s.dataDir + "/.lock") == nil, "a regular lock file now")
        #expect(OddFilesTests.files(s, ".lock.damaged-").count == 1)
        try OddFilesTests().expectOpened(s, "the next open")
    }

    @Test("a .lock that is a dangling link: opened, its target not created")
    func lockDangling() throws {
        try #require(FileManager.default.isExecutableFile(atPath: OddFilesTests.driver))
        let s = Scratch("lock-dangling")
        mkdir(s.dataDir, 0o700)
        let target = s.path + "/made-by-the-sdk"
        #expect(symlink(target, s.dataDir + "/.lock") == 0)
        try OddFilesTests().expectOpened(s, "dangling .lock link")
        #expect(!POSIX.exists(target), "the link's target was created")
    }

    @Test("a .lock that is a directory: opened (it refused every iap_open), the directory set aside")
    func lockDirectory() throws {
        try #require(FileManager.default.isExecutableFile(atPath: OddFilesTests.driver))
        let s = Scratch("lock-dir")
        mkdir(s.dataDir, 0o700)
        #expect(mkdir(s.dataDir + "/.lock", 0o700) == 0)
        try OddFilesTests().expectOpened(s, ".lock directory")
        #expect(POSIX.nonRegularKind(s.dataDir + "/.lock") == nil)
    }

    @Test("an install-id.tmp that links to a game file: the identity is written to dataDir, the game file untouched")
    func installTmpLink() throws {
        try #require(FileManager.default.isExecutableFile(atPath: OddFilesTests.driver))
        let s = Scratch("install-tmp-link")
        mkdir(s.dataDir, 0o700)
        let save = Self.gameSave(s)
        #expect(symlink(save, s.dataDir + "/" + InstallID.fileName + ".tmp") == 0)
        try OddFilesTests().expectOpened(s, "install-id.tmp link")
        expectUntouched(save, "install-id.tmp link")
        let id = s.dataDir + "/" + InstallID.fileName
        #expect(POSIX.nonRegularKind(id) == nil && String(decoding: contents(id) ?? [], as: UTF8.self).hasPrefix("iapbridge-install "))
    }

    @Test("an install-id.tmp that is a directory, with no install-id yet: opened (a new identity made; it refused every iap_open)")
    func installTmpDirectory() throws {
        try #require(FileManager.default.isExecutableFile(atPath: OddFilesTests.driver))
        let s = Scratch("install-tmp-dir")
        mkdir(s.dataDir, 0o700)
        #expect(mkdir(s.dataDir + "/" + InstallID.fileName + ".tmp", 0o700) == 0)
        try OddFilesTests().expectOpened(s, "install-id.tmp directory")
        #expect(POSIX.nonRegularKind(s.dataDir + "/" + InstallID.fileName) == nil)
    }
}
