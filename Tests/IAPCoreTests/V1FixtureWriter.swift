import Foundation
import IAPCore
import Testing

/// Writes the committed fixtures of Tests/Fixtures/outbox-v1 with the code of
/// the commit it is in (outbox format version 1, results stored as their
/// rendered JSON). Run only on request:
///
///     IAP_WRITE_V1_FIXTURES=Tests/Fixtures/outbox-v1 swift test --filter V1FixtureWriter
///
/// Removed by the change to the typed record format (version 2): from then
/// on it would write version 2 files.
@Suite("V1FixtureWriter")
struct V1FixtureWriter {
    @Test("writes the v1 outbox fixtures and their manifests (only with IAP_WRITE_V1_FIXTURES)")
    func write() throws {
        guard let out = ProcessInfo.processInfo.environment["IAP_WRITE_V1_FIXTURES"] else {
            print("V1FixtureWriter: skipped (set IAP_WRITE_V1_FIXTURES=<dir> to write the fixtures)")
            return
        }
        let fm = FileManager.default
        let root = out.hasPrefix("/") ? out : MessageSchemas.repoRoot + "/" + out
        try? fm.removeItem(atPath: root)
        try fm.createDirectory(atPath: root, withIntermediateDirectories: true)
        let catalog = root + "/Game.storekit"
        try fm.copyItem(atPath: MessageSchemas.repoRoot + "/samples/catalog/Game.storekit", toPath: catalog)

        let env = TestEnv(catalog: catalog)
        try Self.everyKind(env)
        try Self.save(env, as: root + "/every-kind", note: "every record kind version 1 stored, as written by appends")

        // The same outbox after a compaction: tombstones, the key mark,
        // failed clicks and intents as compaction writes them.
        let compacted = try Self.copy(env)
        let (box, _) = try Outbox.open(directory: compacted.dataDir)
        try box.compact()
        box.close()
        try Self.save(compacted, as: root + "/compacted", note: "every-kind after a compaction")

        let log = try Data(contentsOf: URL(fileURLWithPath: env.dataDir + "/" + Outbox.fileName))
        let frames = Self.frameStarts([UInt8](log))

        // A torn last record: the last frame cut half-way (an append a kill interrupted).
        let torn = try Self.copy(env)
        let lastStart = frames.last!
        try Data(log.prefix(lastStart + (log.count - lastStart) / 2))
            .write(to: URL(fileURLWithPath: torn.dataDir + "/" + Outbox.fileName))
        try Self.save(torn, as: root + "/torn-tail", note: "every-kind with its last frame cut half-way")

        // A bad checksum: one byte flipped inside the payload of a middle
        // frame (a success's record: the store delivers it again).
        let bad = try Self.copy(env)
        var flipped = [UInt8](log)
        let victim = try Self.frame(of: "coins_100", result: "0", in: flipped, starts: frames)
        flipped[victim + RecordFrame.headerSize + 20] ^= 0x5A
        try Data(flipped).write(to: URL(fileURLWithPath: bad.dataDir + "/" + Outbox.fileName))
        try Self.save(bad, as: root + "/bad-checksum", note: "every-kind with one byte of a success's record flipped")

        // Garbage after the last frame: not what an append leaves (damage).
        let garbage = try Self.copy(env)
        var tail = [UInt8](log)
        tail += Array("this is not a frame: an editor or a tool wrote it here".utf8) + [0xFF, 0x00, 0x13, 0x37]
        try Data(tail).write(to: URL(fileURLWithPath: garbage.dataDir + "/" + Outbox.fileName))
        try Self.save(garbage, as: root + "/garbage-tail", note: "every-kind with bytes after its end that are not a frame")
    }

    /// Plays a game that leaves one record of every kind in its outbox.
    static func everyKind(_ env: TestEnv) throws {
        let b = try env.open()
        _ = b.drain()
        // Successes (origin game): a consumable, a non-consumable, a
        // subscription with its free trial (an offer), a non-renewing one.
        _ = try b.buy("coins_100", 0)
        _ = try b.buy("remove_ads", 0)
        _ = try b.buy("vip_monthly", 0)
        _ = try b.buy("season_pass", 0)
        _ = b.drain()
        // The subscription must not renew when a test opens this years later.
        _ = try b.sim(#"{"op":"auto_renew","productID":"vip_monthly","enabled":false}"#)
        // Already owned: the existing transaction under a new key.
        _ = try b.buy("remove_ads", 0)
        _ = b.drain()
        // Every failure a purchase can end with.
        for error in ["networkError", "notAllowed", "productUnavailable", "unknown"] {
            _ = try b.sim(#"{"op":"fail_next","error":"\#(error)"}"#)
            _ = try b.buy("coins_100", 0)
            _ = b.drain()
        }
        _ = try b.sim(#"{"op":"cancel_next"}"#)
        _ = try b.buy("coins_100", 0)
        _ = b.drain()
        _ = try b.sim(#"{"op":"ask_to_buy","enabled":true}"#)
        _ = try b.buy("coins_100", 0)
        _ = b.drain()
        let asked = try b.sim(#"{"op":"pending"}"#)["pending"]!.arrayValue!.last!["id"]!
        _ = try b.sim(#"{"op":"decline","id":\#(asked.serialized)}"#)
        _ = try b.sim(#"{"op":"ask_to_buy","enabled":false}"#)
        _ = b.drain()
        // Unverified (result 6) and a purchase made outside the app (origin store).
        _ = try b.sim(#"{"op":"forge","productID":"coins_100"}"#)
        _ = try b.sim(#"{"op":"external_purchase","productID":"coins_100"}"#)
        _ = try b.sim(#"{"op":"family_share","productID":"remove_ads"}"#)
        _ = b.drain()
        // A charge after the failure it was reported as: its own key, the click's in clickKey.
        _ = try b.sim(#"{"op":"fail_next","error":"networkError","chargeLater":true}"#)
        _ = try b.buy("coins_100", 0)
        _ = b.drain()
        let later = try b.sim(#"{"op":"pending"}"#)["pending"]!.arrayValue!.last!["id"]!
        _ = try b.sim(#"{"op":"resolve","id":\#(later.serialized)}"#)
        _ = b.drain()
        // Another storefront: another currency and "storefront".
        _ = try b.sim(#"{"op":"storefront","countryCode":"FRA"}"#)
        _ = try b.buy("coins_100", 0)
        _ = b.drain()
        // Confirmed history: two purchases confirmed (confirm records), one
        // of them then refunded (a live "revoked").
        let k1 = try b.buy("coins_100", 0)
        let k2 = try b.buy("coins_100", 0)
        let ms = b.drain()
        try b.confirm(k1)
        try b.confirm(k2)
        b.c.flush()
        let refunded = ms.first { $0.keyValue == k1 }!["transactionID"]!.stringValue!
        _ = try b.sim(#"{"op":"refund","transactionID":"\#(refunded)"}"#)
        _ = b.drain()
        // An intent left open: a purchase waiting for a parent.
        _ = try b.sim(#"{"op":"ask_to_buy","enabled":true}"#)
        _ = try b.buy("vip_yearly", 0)
        _ = b.drain()
        b.c.flush()
        b.close()
    }

    /// A fresh environment holding a copy of `env`'s directories.
    static func copy(_ env: TestEnv) throws -> TestEnv {
        let c = TestEnv(catalog: env.catalog)
        for (from, to) in [(env.dataDir, c.dataDir), (env.stateDir, c.stateDir)] {
            try FileManager.default.copyItem(atPath: from, toPath: to)
            try? FileManager.default.removeItem(atPath: to + "/.lock")
        }
        return c
    }

    /// Copies the fixture's files to `dir` and writes its manifest: what a
    /// game is shown when it opens a copy of it (results, revocations,
    /// unvouched records and damage reports, each as its exact JSON text).
    static func save(_ env: TestEnv, as dir: String, note: String) throws {
        let fm = FileManager.default
        try fm.createDirectory(atPath: dir, withIntermediateDirectories: true)
        for (from, name) in [(env.dataDir, "data"), (env.stateDir, "appstore")] {
            try fm.createDirectory(atPath: dir + "/" + name, withIntermediateDirectories: true)
            for f in try fm.contentsOfDirectory(atPath: from) where f != ".lock" {
                try fm.copyItem(atPath: from + "/" + f, toPath: dir + "/" + name + "/" + f)
            }
        }
        let probe = try copy(env)
        let b = try probe.open()
        let shown = V1FixtureTests.shown(b.drainRaw())
        b.close()
        var manifest: [String: JSONValue] = ["note": .string(note), "messages": .array(shown.map { .string($0) })]
        manifest["resultKeys"] = .array(shown.compactMap { V1FixtureTests.resultKey($0) }.map { .string(String($0)) })
        let text = JSONValue.object(manifest).serialized
        try Data(text.utf8).write(to: URL(fileURLWithPath: dir + "/manifest.json"))
    }

    static func frameStarts(_ b: [UInt8]) -> [Int] {
        var out: [Int] = []
        var pos = 0
        while pos + RecordFrame.headerSize <= b.count {
            out.append(pos)
            let len = Int(b[pos + 4]) | Int(b[pos + 5]) << 8 | Int(b[pos + 6]) << 16 | Int(b[pos + 7]) << 24
            pos += RecordFrame.headerSize + len
        }
        return out
    }

    /// The start of the first put frame of `product` with this result code.
    static func frame(of product: String, result: String, in b: [UInt8], starts: [Int]) throws -> Int {
        for s in starts {
            let len = Int(b[s + 4]) | Int(b[s + 5]) << 8
            let text = String(decoding: b[(s + RecordFrame.headerSize)..<(s + RecordFrame.headerSize + len)], as: UTF8.self)
            if text.contains(#""productID":"\#(product)","result":"\#(result)""#) { return s }
        }
        throw IAPError(.notFound, "no record of \(product) with result \(result)")
    }
}
