import Foundation
import IAPCore
import Testing

/// Odd files where the outbox should be (issue: storage that survives real
/// disks and real players): iap_open answers a code at once and names the
/// file, never blocks (a FIFO), never reads forever (a link to /dev/zero),
/// never reads a file larger than the cap into memory. Each runs in a child
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

    func expectRefused(_ s: Scratch, _ what: String, mentions: String) throws {
        let (text, seconds) = try Self.open(s)
        #expect(text.contains("IAP_E_IO"), "\(what): \(text)")
        #expect(text.contains(mentions), "\(what): the message says what is wrong: \(text)")
        #expect(seconds < 10, "\(what): iap_open took \(seconds) s")
    }

    @Test("an outbox that is a FIFO: IAP_E_IO at once, not a blocked iap_open")
    func fifo() throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.driver))
        let s = Scratch("fifo")
        mkdir(s.dataDir, 0o700)
        #expect(mkfifo(Self.outbox(s), 0o600) == 0)
        try expectRefused(s, "FIFO", mentions: "not a regular file")
    }

    @Test("an outbox that links to /dev/zero: IAP_E_IO at once, nothing read")
    func linkToDevZero() throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.driver))
        let s = Scratch("devzero")
        mkdir(s.dataDir, 0o700)
        #expect(symlink("/dev/zero", Self.outbox(s)) == 0)
        try expectRefused(s, "link to /dev/zero", mentions: "symbolic link")
    }

    @Test("an outbox that is a directory: IAP_E_IO")
    func directory() throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.driver))
        let s = Scratch("dir")
        mkdir(s.dataDir, 0o700)
        mkdir(Self.outbox(s), 0o700)
        try expectRefused(s, "directory", mentions: "not a regular file")
    }

    @Test("an outbox larger than the cap (128 MiB) is refused without being read")
    func tooLarge() throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.driver))
        let s = Scratch("huge")
        mkdir(s.dataDir, 0o700)
        let fd = Glibc.open(Self.outbox(s), O_WRONLY | O_CREAT, 0o600)
        #expect(fd >= 0 && ftruncate(fd, off_t(RecordLogFile.maxFileBytes + 1)) == 0)  // sparse: no disk used
        close(fd)
        try expectRefused(s, "huge file", mentions: "more than")
    }
}
