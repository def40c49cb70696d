import Foundation
import IAPCore
import Testing

/// `POSIX.readPrefix`, which reads the outbox, the simulator's log and
/// `install-id` at every open: straight into one array of the size fstat
/// reports, then, for a file that grew, a chunk at a time up to the limit.
@Suite("Reading a file's prefix")
struct ReadPrefixTests {
    let env = TestEnv()

    func file(_ name: String, _ bytes: [UInt8]) throws -> String {
        let path = env.root + "/" + name
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Bytes no two positions of which repeat in a short period, so a chunk
    /// copied to the wrong place would show.
    func pattern(_ n: Int) -> [UInt8] { (0..<n).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ $0 >> 8) } }

    @Test("whole files of every size around a read's chunk are read whole")
    func wholeFiles() throws {
        for n in [0, 1, 7, 4095, 4096, 4097, 65_536, 200_003] {
            let bytes = pattern(n)
            let got = try #require(try POSIX.readPrefix(try file("f\(n)", bytes), upTo: 1 << 20))
            #expect(got.bytes == bytes, "\(n) bytes")
            #expect(got.size == n)
            #expect(got.isWhole)
        }
    }

    @Test("a file over the limit is read up to it, and says it is larger")
    func overTheLimit() throws {
        let bytes = pattern(10_000)
        for limit in [0, 1, 4096, 9_999] {
            let got = try #require(try POSIX.readPrefix(try file("big\(limit)", bytes), upTo: limit))
            #expect(got.bytes == Array(bytes[0..<limit]), "limit \(limit)")
            #expect(got.size == 10_000)
            #expect(!got.isWhole)
        }
        // A negative limit reads nothing, as a limit of 0 does.
        let none = try #require(try POSIX.readPrefix(try file("negative", bytes), upTo: -5))
        #expect(none.bytes.isEmpty)
        #expect(none.size == 10_000)
        // Exactly at the limit: whole, since nothing follows.
        let exact = try #require(try POSIX.readPrefix(try file("exact", bytes), upTo: 10_000))
        #expect(exact.bytes == bytes)
        #expect(exact.isWhole)
    }

    /// A file with more bytes than fstat reported (one that grew while it
    /// was read): the rest is read a chunk at a time. Linux's /proc files
    /// report a size of 0 and have bytes, which makes that path certain.
    @Test("bytes past the size fstat reported are read too, up to the limit",
          .enabled(if: FileManager.default.fileExists(atPath: "/proc/self/maps"), "no /proc/self/maps on this system"))
    func grewWhileRead() throws {
        let path = "/proc/self/maps"
        let got = try #require(try POSIX.readPrefix(path, upTo: 1 << 20))
        #expect(got.bytes.count > 100)
        #expect(got.isWhole)
        #expect(String(decoding: got.bytes, as: UTF8.self).contains("/"))
        let cut = try #require(try POSIX.readPrefix(path, upTo: 50))
        #expect(cut.bytes.count == 50)
        #expect(!cut.isWhole)
    }

    @Test("a missing file is nil; a directory is refused with a clear message")
    func missingAndNotAFile() throws {
        #expect(try POSIX.readPrefix(env.root + "/absent", upTo: 100) == nil)
        #expect(throws: IAPError.self) { try POSIX.readPrefix(env.root, upTo: 100) }
        do {
            _ = try POSIX.readPrefix(env.root, upTo: 100)
        } catch {
            #expect(error.code == .io)
            #expect(error.message.contains("not a regular file"))
        }
    }
}
