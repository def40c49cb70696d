import Foundation
import CIAPFrame
import IAPBridge
import IAPCore
import Testing

/// The repository root (this file is Tests/HardeningTests/HardeningSupport.swift).
let repoRoot: String = {
    var url = URL(fileURLWithPath: #filePath)
    for _ in 0..<3 { url.deleteLastPathComponent() }
    return url.path
}()

let sampleCatalog = repoRoot + "/samples/catalog/Game.storekit"

/// A fresh directory under the system temp dir, removed by `remove()`.
final class Scratch: @unchecked Sendable {
    let path: String
    init(_ name: String = "hardening") {
        path = NSTemporaryDirectory() + "iap-\(name)-\(UUID().uuidString)"
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
    func remove() { try? FileManager.default.removeItem(atPath: path) }
    deinit { remove() }

    var dataDir: String { path + "/data" }
    var stateDir: String { path + "/state" }

    /// A simulator config on `catalog` (non-durable store state: the outbox stays durable).
    func config(catalog: String = sampleCatalog, tickMs: Int = 0) -> String {
        var w = JSONObjectWriter()
        w.string("store", "simulator")
        w.string("dataDir", dataDir)
        w.string("catalog", catalog)
        w.value("simulator", .object(["stateDir": .string(stateDir), "durable": .bool(false), "tickMs": .number(String(tickMs)),
                                             "purchaseDelayMs": .number("0")]))
        return String(decoding: w.finish(), as: UTF8.self)
    }
}

/// The C ABI seen from Swift: the @_cdecl functions are public Swift functions.
struct CBridge {
    let handle: OpaquePointer?

    static func open(_ config: String) throws -> CBridge {
        var h: OpaquePointer? = nil
        let rc = config.withCString { iap_open($0, &h) }
        guard rc == 0 else { throw CError(code: rc, message: lastError()) }
        return CBridge(handle: h)
    }

    func close() { _ = iap_close(handle) }

    @discardableResult
    func buy(_ id: String, _ click: Int64 = 0) throws -> Int64 {
        var key: Int64 = 0
        let rc = id.withCString { iap_buy(handle, $0, click, &key) }
        guard rc == 0 else { throw CError(code: rc, message: lastError()) }
        return key
    }

    func confirm(_ key: Int64) -> Int32 { iap_confirm(handle, key) }

    func simulator(_ command: String) throws -> JSONValue {
        var out: UnsafeMutablePointer<CChar>? = nil
        let rc = command.withCString { iap_simulator(handle, $0, &out) }
        guard rc == 0, let out else { throw CError(code: rc, message: lastError()) }
        defer { iap_free(out) }
        return try JSONParser.parse(String(cString: out))
    }

    /// Every queued message, raw.
    func drainRaw() -> [String] {
        // iap_flush waits until the SDK thread has handled everything posted
        // so far (with no purchase delay: the store's answers too).
        _ = iap_flush(handle)
        var out: [String] = []
        while let m = iap_poll(handle) {
            out.append(String(cString: m))
            iap_free(m)
        }
        return out
    }

    /// Every queued message, parsed (a message that does not parse fails the test).
    func drain() -> [JSONValue] {
        drainRaw().compactMap { text in
            do { return try JSONParser.parse(text) } catch {
                Issue.record("message is not JSON: \(error): \(text)")
                return nil
            }
        }
    }
}

struct CError: Error, CustomStringConvertible {
    let code: Int32
    let message: String
    var description: String { "\(String(cString: iap_error_name(code))) (\(code)): \(message)" }
}

func lastError() -> String { String(cString: iap_errmsg()) }

/// Writes a file (test setup).
func write(_ path: String, _ text: String) {
    _ = FileManager.default.createFile(atPath: path, contents: Data(text.utf8))
}

/// The bytes of a file, or nil.
func contents(_ path: String) -> [UInt8]? {
    FileManager.default.contents(atPath: path).map { [UInt8]($0) }
}

/// A .storekit catalog with the given consumable products (id, title, description).
func catalogJSON(_ products: [(id: String, title: String, description: String)], settings: [String: JSONValue] = [:]) -> String {
    let list: [JSONValue] = products.map { p in
        .object([
            "productID": .string(p.id), "type": .string("Consumable"), "displayPrice": .string("0.99"),
            "referenceName": .string(p.id), "familyShareable": .bool(false),
            "localizations": .array([.object(["locale": .string("en_US"), "displayName": .string(p.title),
                                              "description": .string(p.description)])]),
        ])
    }
    return JSONValue.object([
        "identifier": .string("hardening"), "products": .array(list), "settings": .object(settings),
        "version": .object(["major": .number("4"), "minor": .number("0")]),
    ]).serialized
}

/// Writes raw bytes to a file (test setup).
func write(_ path: String, bytes: [UInt8]) {
    _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
}
