import Foundation
import IAPBridge
import IAPCore
import Testing

/// Files the SDK writes are the player's purchases: owner-only. Directories
/// are created only where the config promises, and every other case is a
/// clear error, never a crash or a silent fallback.
@Suite("File-system safety")
struct FileSecurityTests {
    static func mode(_ path: String) -> Int? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        return Int(st.st_mode) & 0o7777
    }

    static func open(_ config: String) -> (Int32, String, OpaquePointer?) {
        var h: OpaquePointer? = nil
        let rc = config.withCString { iap_open($0, &h) }
        return (rc, rc == 0 ? "" : lastError(), h)
    }

    static func config(dataDir: String, stateDir: String, catalog: String = sampleCatalog) -> String {
        JSONValue.object([
            "store": .string("simulator"), "dataDir": .string(dataDir), "catalog": .string(catalog),
            "simulator": .object(["stateDir": .string(stateDir), "durable": .bool(false), "tickMs": .number("0")]),
        ]).serialized
    }

    @Test("every file in dataDir and stateDir is owner-only, even over a 0644 file left behind")
    func ownerOnly() throws {
        let s = Scratch("perm")
        try FileManager.default.createDirectory(atPath: s.dataDir, withIntermediateDirectories: true)
        write(s.dataDir + "/" + Outbox.fileName, "")
        chmod(s.dataDir + "/" + Outbox.fileName, 0o644)
        let b = try CBridge.open(s.config())
        let key = try b.buy("coins_100")
        _ = try b.buy("remove_ads")
        _ = b.drain()
        #expect(b.confirm(key) == 0)
        _ = iap_flush(b.handle)
        b.close()
        // A damaged outbox is copied aside: the copy is owner-only too.
        let path = s.dataDir + "/" + Outbox.fileName
        var bytes = contents(path)!
        bytes[bytes.count / 2] ^= 0xFF
        write(path, bytes: bytes)
        let b2 = try CBridge.open(s.config())
        #expect(b2.drain().contains { $0["type"]?.stringValue == "outbox_damaged" })
        b2.close()

        var files = 0
        for dir in [s.dataDir, s.stateDir] {
            for name in try FileManager.default.contentsOfDirectory(atPath: dir) {
                let m = try #require(Self.mode(dir + "/" + name))
                #expect(m & 0o077 == 0, "\(dir)/\(name) has mode \(String(m, radix: 8))")
                files += 1
            }
        }
        #expect(files >= 5, "outbox, lock, key reservation, damaged copy, store state")
        #expect(Self.mode(s.stateDir) == 0o700, "a stateDir the SDK created is 0700")
    }

    @Test("a missing dataDir (and stateDir) is created, 0700, when its parent exists")
    func createsMissingDirectory() throws {
        let s = Scratch("create")
        let (rc, msg, h) = Self.open(Self.config(dataDir: s.path + "/new-data", stateDir: s.path + "/new-state"))
        #expect(rc == 0, "\(msg)")
        _ = iap_close(h)
        #expect(Self.mode(s.path + "/new-data") == 0o700)
        #expect(Self.mode(s.path + "/new-state") == 0o700)
    }

    @Test("relative, parent missing, not a directory: a clear error naming the directory, nothing created")
    func refusedDirectories() throws {
        let s = Scratch("refuse")
        write(s.path + "/a-file", "x")
        let cases: [(String, String, Int32, String)] = [
            ("relative dataDir", Self.config(dataDir: "relative/data", stateDir: s.path + "/st1"), -4, "must be an absolute path"),
            ("relative stateDir", Self.config(dataDir: s.path + "/d2", stateDir: "state"), -4, "absolute"),
            ("dataDir whose parent is missing", Self.config(dataDir: s.path + "/no/such/dir", stateDir: s.path + "/st3"), -6, "does not exist"),
            ("stateDir whose parent is missing", Self.config(dataDir: s.path + "/d4", stateDir: s.path + "/no/st"), -6, "does not exist"),
            ("dataDir that is a file", Self.config(dataDir: s.path + "/a-file", stateDir: s.path + "/st5"), -6, "not a directory"),
            ("stateDir that is a file", Self.config(dataDir: s.path + "/d6", stateDir: s.path + "/a-file"), -6, "not a directory"),
            ("dataDir under a file", Self.config(dataDir: s.path + "/a-file/d", stateDir: s.path + "/st7"), -6, "not a directory"),
        ]
        for (what, config, code, words) in cases {
            let (rc, msg, h) = Self.open(config)
            #expect(rc == code, "\(what): \(String(cString: iap_error_name(rc))): \(msg)")
            #expect(msg.hasPrefix("iap_open: ") && msg.contains(words), "\(what): \"\(msg)\"")
            #expect(h == nil)
        }
        #expect(!FileManager.default.fileExists(atPath: s.path + "/no"), "nothing created on the way")
    }

    static var dropPrivileges: [String]? {
        guard getuid() == 0 else { return [] }  // not root: permissions already apply
        for tool in ["/usr/bin/setpriv", "/bin/setpriv"] where FileManager.default.isExecutableFile(atPath: tool) {
            return [tool, "--reuid=65534", "--regid=65534", "--clear-groups"]
        }
        return nil
    }

    @Test("a dataDir or stateDir that is not writable is refused (run as nobody: root bypasses permissions)",
          .enabled(if: FileSecurityTests.dropPrivileges != nil, "running as root without setpriv: cannot test permissions (root bypasses them)"))
    func notWritable() throws {
        let s = Scratch("ro")
        let exe = ConcurrencyTests.binDir + "/iap-hardening-driver"
        try #require(FileManager.default.isExecutableFile(atPath: exe))
        // Read-only directories owned by the user the open runs as.
        let ro = s.path + "/ro"
        let writable = s.path + "/rw"
        for d in [ro, writable] { try FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true) }
        chmod(s.path, 0o755)
        if getuid() == 0 {
            chown(ro, 65534, 65534)
            chown(writable, 65534, 65534)
        }
        chmod(ro, 0o500)
        chmod(writable, 0o700)
        let catalog = s.path + "/Game.storekit"
        try FileManager.default.copyItem(atPath: sampleCatalog, toPath: catalog)
        chmod(catalog, 0o644)
        let cases: [(String, String, String)] = [
            ("dataDir not writable", Self.config(dataDir: ro, stateDir: writable + "/st", catalog: catalog), "IAP_E_IO (-6): iap_open: dataDir \(ro) is not writable"),
            ("stateDir not writable", Self.config(dataDir: writable + "/d", stateDir: ro, catalog: catalog), "is not writable"),
            ("dataDir to create in a read-only parent", Self.config(dataDir: ro + "/d", stateDir: writable + "/st2", catalog: catalog), "cannot create dataDir"),
            ("control: writable directories open", Self.config(dataDir: writable + "/ok", stateDir: writable + "/ok-st", catalog: catalog), "IAP_OK (0)"),
        ]
        for (what, config, expected) in cases {
            let p = Process()
            let argv = (Self.dropPrivileges ?? []) + [exe, "open", "--config", config]
            p.executableURL = URL(fileURLWithPath: argv[0])
            p.arguments = Array(argv.dropFirst())
            let pipe = Pipe()
            p.standardOutput = pipe
            p.standardError = pipe
            try p.run()
            let out = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            p.waitUntilExit()
            print("not writable, \(what) (uid \(getuid() == 0 ? "65534 via setpriv" : String(getuid()))): \(out.trimmingCharacters(in: .newlines))")
            #expect(out.contains(expected), "\(what): \(out)")
            #expect(p.terminationStatus == (expected.hasPrefix("IAP_OK") ? 0 : 1), "\(what): \(out)")
        }
    }
}
