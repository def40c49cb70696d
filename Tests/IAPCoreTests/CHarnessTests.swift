import Foundation
import Testing

/// Runs the programs the package builds: the C harness (the real C ABI from
/// C) and the demo (README's first command).
@Suite("C ABI from C")
struct CHarnessTests {
    static var binDir: String {
        // The test bundle lives in the build products directory.
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().path
    }

    static func run(_ path: String, _ args: [String]) throws -> (Int32, String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: path)
        p.arguments = args
        p.currentDirectoryURL = URL(fileURLWithPath: MessageSchemas.repoRoot)
        let pipe = Pipe()
        p.standardOutput = pipe
        p.standardError = pipe
        try p.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    @Test("the C harness passes, and every message it saw matches its schema")
    func harness() throws {
        let exe = Self.binDir + "/iap-c-harness"
        try #require(FileManager.default.isExecutableFile(atPath: exe), "build the package first: \(exe)")
        let env = TestEnv()
        let (status, output) = try Self.run(exe, ["--catalog", env.catalog, "--dir", env.root + "/h"])
        print(String(output.split(separator: "\n").last ?? ""))
        #expect(status == 0, "\(output)")
        #expect(output.contains(" 0 failed"))
        let log = try String(contentsOfFile: env.root + "/h/messages.jsonl", encoding: .utf8)
        let lines = log.split(separator: "\n")
        #expect(lines.count > 10)
        for line in lines { #expect(MessageSchemas.validate(String(line)).isEmpty, "\(MessageSchemas.validate(String(line)))") }
    }

    @Test("threads or descriptors running out: a code from iap_open, every entry point of an open bridge still works, never a crash or hang (C8)")
    func exhaustion() throws {
        let exe = Self.binDir + "/iap-exhaustion"
        try #require(FileManager.default.isExecutableFile(atPath: exe), "build the package first: \(exe)")
        let env = TestEnv()
        let (status, output) = try Self.run(exe, ["--catalog", env.catalog, "--dir", env.root + "/x"])
        print(String(output.split(separator: "\n").last ?? ""))
        #expect(status == 0, "\(output)")
        #expect(output.contains(" 0 failed"))
    }

    @Test("the lifecycle demo (renewal, expiry, Ask to Buy after a restart, refund) runs and exits 0")
    func lifecycleDemo() throws {
        let exe = Self.binDir + "/iap-lifecycle-demo"
        try #require(FileManager.default.isExecutableFile(atPath: exe))
        let (status, output) = try Self.run(exe, [])
        #expect(status == 0, "\(output)")
        #expect(output.contains("\"revoked\" remove_ads") && output.contains("VIP off"))
        #expect(output.contains("inBillingRetryPeriod -> VIP off") && output.contains("\"sheet\" refund: success"), "\(output)")
        #expect(output.contains("billingIssue: deferred") && output.contains("billingIssue: shown"), "\(output)")
    }

    @Test("the demo runs to the end and exits 0")
    func demo() throws {
        let exe = Self.binDir + "/iap-demo"
        try #require(FileManager.default.isExecutableFile(atPath: exe))
        let env = TestEnv()
        let (status, output) = try Self.run(exe, ["--dir", env.root + "/demo"])
        #expect(status == 0, "\(output)")
        #expect(output.contains("exactly once"))
    }
}
