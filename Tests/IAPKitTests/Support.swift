import Foundation
@testable import IAPKit
import Testing

/// The repository root and the sample catalog.
let repoRoot: String = {
    var url = URL(fileURLWithPath: #filePath)
    for _ in 0..<3 { url.deleteLastPathComponent() }  // Support.swift, IAPKitTests, Tests
    return url.path
}()
let sampleCatalog = repoRoot + "/samples/catalog/Game.storekit"

/// The products directory (the test bundle lives there).
let binDir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().path

/// A fresh game install: a temporary dataDir (the simulator keeps its
/// state inside it), removed at the end.
final class Install: Sendable {
    let root: String
    var dataDir: String { root + "/data" }

    init() {
        var template = Array((NSTemporaryDirectory() + "/iap-kit-XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(made != nil, "mkdtemp failed")
        root = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    deinit { try? FileManager.default.removeItem(atPath: root) }

    func open() throws -> PurchaseBridge { try PurchaseBridge(simulatorCatalog: sampleCatalog, dataDir: dataDir) }
}

/// A liveness bound, not a timing goal.
let deadlineSeconds: UInt64 = 20

/// Takes events from the bridge until `stop` holds for one (included), or
/// the deadline passes (the taking task is cancelled, which ends the
/// stream; the caller's expectations then fail on what is missing).
func take(_ b: PurchaseBridge, until stop: @escaping @Sendable (IAPEvent) -> Bool) async -> [IAPEvent] {
    let taker = Task { () -> [IAPEvent] in
        var got: [IAPEvent] = []
        for await e in b.events {
            got.append(e)
            if stop(e) { break }
        }
        return got
    }
    let dog = Task {
        try? await Task.sleep(nanoseconds: deadlineSeconds * 1_000_000_000)
        taker.cancel()
    }
    let got = await taker.value
    dog.cancel()
    if let last = got.last, stop(last) { return got }
    Issue.record("the awaited event never came; got: \(got)")
    return got
}

/// Every event up to the answer of a products request: everything queued
/// before it (at open: every result delivered again) has been handed out.
func drain(_ b: PurchaseBridge) async throws -> [IAPEvent] {
    try b.requestProducts(["coins_100"])
    return await take(b) { if case .products = $0 { return true } else { return false } }
}

func results(_ events: [IAPEvent]) -> [PurchaseResult] {
    events.compactMap { if case .purchase(let r) = $0 { return r } else { return nil } }
}

/// Waits for the result under `key`.
func result(_ b: PurchaseBridge, key: Int64) async -> PurchaseResult? {
    let got = await take(b) { if case .purchase(let r) = $0 { return r.key == key } else { return false } }
    return results(got).first { $0.key == key }
}
