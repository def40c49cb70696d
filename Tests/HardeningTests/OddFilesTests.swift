import Foundation
import IAPCore
import Testing

/// Odd files where the outbox should be (issue: storage that survives real
/// disks and real players): iap_open never blocks (a FIFO), never reads
/// forever (a link to /dev/zero), never refuses for good what is not a file
/// (issue 21, item 7: it is moved aside whole, never opened or followed),
/// never reads more than the cap of a larger file into memory, and never
/// refuses for good a file that is only too large (it is set aside). Each runs in a child
/// process (the hardening driver's `open` mode) with a time limit, so a hang
/// is a failure, not a stuck suite.
@Suite("Odd files")
struct OddFilesTests {
    static let driver = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().path + "/iap-hardening-driver"

    /// Runs `iap_open` + `iap_close` in a child; returns its output and how long it took.
    static func open(_ s: Scratch) throws -> (String, Double) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: driver)
        p.arguments = ["open", "--config", s.config()]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = out
        let start = Date()
        try p.run()
        let deadline = Date().addingTimeInterval(20)
        while p.isRunning && Date() < deadline { usleep(10_000) }
        if p.isRunning { kill(p.processIdentifier, SIGKILL) }
        p.waitUntilExit()
        return (String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self), Date().timeIntervalSince(start))
    }

    static func outbox(_ s: Scratch) -> String { s.dataDir + "/" + Outbox.fileName }

    /// Open succeeds at once; the odd thing is moved aside as it was
    /// (`kind`, per lstat) and a regular outbox takes its place.
    func expectSetAside(_ s: Scratch, _ what: String, kind: String) throws {
        let (text, seconds) = try Self.open(s)
        #expect(text.contains("IAP_OK"), "\(what): \(text)")
        #expect(seconds < 10, "\(what): iap_open took \(seconds) s")
        let aside = Self.files(s, "outbox.damaged-").keys.map { s.dataDir + "/" + $0 }
        #expect(aside.count == 1 && aside.allSatisfy { POSIX.nonRegularKind($0) == kind }, "\(what): \(aside)")
        #expect(POSIX.exists(Self.outbox(s)) && POSIX.nonRegularKind(Self.outbox(s)) == nil, "\(what): a new outbox file")
    }

    @Test("an outbox that is a FIFO: opened at once (never a blocked iap_open), the FIFO moved aside")
    func fifo() throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.driver))
        let s = Scratch("fifo")
        mkdir(s.dataDir, 0o700)
        #expect(mkfifo(Self.outbox(s), 0o600) == 0)
        try expectSetAside(s, "FIFO", kind: "a FIFO")
    }

    @Test("an outbox that links to /dev/zero: opened at once, nothing read, the link moved aside")
    func linkToDevZero() throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.driver))
        let s = Scratch("devzero")
        mkdir(s.dataDir, 0o700)
        #expect(symlink("/dev/zero", Self.outbox(s)) == 0)
        try expectSetAside(s, "link to /dev/zero", kind: "a symbolic link")
    }

    @Test("an outbox that is a directory: opened, the directory moved aside")
    func directory() throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.driver))
        let s = Scratch("dir")
        mkdir(s.dataDir, 0o700)
        mkdir(Self.outbox(s), 0o700)
        try expectSetAside(s, "directory", kind: "a directory")
    }

    /// Names in dataDir starting with `prefix`, with their sizes.
    static func files(_ s: Scratch, _ prefix: String) -> [String: Int] {
        var out: [String: Int] = [:]
        for name in (try? FileManager.default.contentsOfDirectory(atPath: s.dataDir)) ?? [] where name.hasPrefix(prefix) {
            var st = stat()
            out[name] = stat(s.dataDir + "/" + name, &st) == 0 ? Int(st.st_size) : -1
        }
        return out
    }

    func expectOpened(_ s: Scratch, _ what: String) throws {
        let (text, seconds) = try Self.open(s)
        #expect(text.contains("IAP_OK"), "\(what): \(text)")
        #expect(seconds < 10, "\(what): iap_open took \(seconds) s")
    }

    @Test("an outbox larger than the cap (128 MiB): iap_open succeeds at once, reading only the cap; the whole file is kept aside (issue 21: it was refused at every open, for good)")
    func tooLarge() throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.driver))
        let s = Scratch("huge")
        mkdir(s.dataDir, 0o700)
        let fd = Glibc.open(Self.outbox(s), O_WRONLY | O_CREAT, 0o600)
        #expect(fd >= 0 && ftruncate(fd, off_t(POSIXLogFile.maxFileBytes + 1)) == 0)  // sparse: no disk used
        close(fd)
        try expectOpened(s, "huge file")
        #expect(Self.files(s, "outbox.damaged-").values.sorted() == [POSIXLogFile.maxFileBytes + 1], "\(Self.files(s, "outbox"))")
        #expect((Self.files(s, Outbox.fileName)[Outbox.fileName] ?? -1) < 4096, "the outbox is clean again: \(Self.files(s, "outbox"))")
        try expectOpened(s, "the next open")
        #expect(Self.files(s, "outbox.damaged-").count == 1, "set aside once")
    }

    @Test("an install-id that is a FIFO: iap_open succeeds at once (nothing read); it is set aside and a new identity made")
    func installIDFIFO() throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.driver))
        let s = Scratch("fifo-install")
        mkdir(s.dataDir, 0o700)
        #expect(mkfifo(s.dataDir + "/" + InstallID.fileName, 0o600) == 0)
        try expectOpened(s, "FIFO install-id")
        #expect(Self.files(s, InstallID.fileName + ".damaged-").count == 1)
        let id = String(decoding: contents(s.dataDir + "/" + InstallID.fileName) ?? [], as: UTF8.self)
        #expect(id.hasPrefix("iapbridge-install "), "a new identity: \(id)")
    }

    @Test("an install-id larger than 64 bytes: iap_open succeeds (issue 21: it was refused at every open, for good)")
    func installIDTooLarge() throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.driver))
        let s = Scratch("huge-install")
        mkdir(s.dataDir, 0o700)
        write(s.dataDir + "/" + InstallID.fileName, "iapbridge-install 12345\n" + String(repeating: "x", count: 100))
        try expectOpened(s, "oversized install-id")
        #expect(Self.files(s, InstallID.fileName + ".damaged-").values.sorted() == [124])
        try expectOpened(s, "the next open")
        #expect(Self.files(s, InstallID.fileName + ".damaged-").count == 1, "set aside once")
    }
}
