import Foundation
import IAPCore
import IAPTestSupport
import Testing

/// Outboxes an installed game has on disk, as version 1 of the format wrote
/// them (Tests/Fixtures/outbox-v1, README there): every record kind, after
/// appends and after a compaction, and with damaged tails. Opening one must
/// show the game exactly what its manifest lists (the same bytes), and after
/// the game confirms it all, nothing again: no result lost, none twice.
@Suite("Version 1 outboxes on disk")
struct V1FixtureTests {
    static let root = MessageSchemas.repoRoot + "/Tests/Fixtures/outbox-v1"
    static let fixtures = ["every-kind", "compacted", "torn-tail", "bad-checksum", "garbage-tail"]

    /// The messages a manifest lists, as compared: results, revocations,
    /// pending purchases, unvouched records and damage reports, in a stable
    /// order; the damaged copy's path (a temporary directory, a time) blanked.
    static func shown(_ raw: [[UInt8]]) -> [String] {
        var out: [String] = []
        for m in raw {
            var text = String(decoding: m, as: UTF8.self)
            let type = (try? JSONParser.parse(bytes: m))?["type"]?.stringValue ?? ""
            guard ["7", "revoked", "pending", "unvouched", "outbox_damaged"].contains(type) else { continue }
            if type == "outbox_damaged", let r = text.range(of: #""copy":""#),
               let end = text[r.upperBound...].firstIndex(of: "\"") {
                text.replaceSubrange(r.upperBound..<end, with: "<copy>")
            }
            out.append(text)
        }
        return out.sorted()
    }

    /// The key of a result the game confirms ("7" or "revoked").
    static func resultKey(_ text: String) -> Int64? {
        guard let v = try? JSONParser.parse(text), ["7", "revoked"].contains(v["type"]?.stringValue ?? "") else { return nil }
        return v.keyValue
    }

    /// A working copy of a fixture in a fresh environment.
    static func open(_ name: String) throws -> (TestEnv, JSONValue) {
        let dir = root + "/" + name
        let env = TestEnv(catalog: root + "/Game.storekit")
        let fm = FileManager.default
        try fm.copyItem(atPath: dir + "/data", toPath: env.dataDir)
        try fm.copyItem(atPath: dir + "/appstore", toPath: env.stateDir)
        let manifest = try JSONParser.parse(bytes: [UInt8](try Data(contentsOf: URL(fileURLWithPath: dir + "/manifest.json"))))
        return (env, manifest)
    }

    @Test("the fixtures are there, each with a manifest listing results", arguments: fixtures)
    func present(_ name: String) throws {
        let (_, manifest) = try Self.open(name)
        #expect((manifest["resultKeys"]?.arrayValue?.count ?? 0) >= 10, "\(name): too few results to prove anything")
    }

    @Test("every kind of record is in the v1 fixture")
    func everyKindIsThere() throws {
        let (_, manifest) = try Self.open("every-kind")
        let shown = (manifest["messages"]?.arrayValue ?? []).compactMap { $0.stringValue }.compactMap { try? JSONParser.parse($0) }
        let codes = Set(shown.compactMap { $0["type"]?.stringValue == "7" ? $0["result"]?.stringValue : nil })
        #expect(codes == ["0", "1", "2", "3", "4", "5", "6", "8"])
        #expect(shown.contains { $0["type"]?.stringValue == "revoked" })
        #expect(shown.contains { $0["origin"]?.stringValue == "store" && $0["result"]?.stringValue == "0" })
        #expect(shown.contains { $0["clickKey"] != nil })
        #expect(shown.contains { $0["alreadyOwned"]?.boolValue == true })
        #expect(shown.contains { $0["ownershipType"]?.stringValue == "familyShared" })
        #expect(shown.contains { $0["storefront"]?.stringValue == "FRA" })
        #expect(shown.contains { $0["offer"]?.objectValue != nil })
    }

    @Test("opening a v1 outbox shows exactly its manifest; once confirmed, nothing comes again", arguments: fixtures)
    func opens(_ name: String) throws {
        let (env, manifest) = try Self.open(name)
        let expected = (manifest["messages"]?.arrayValue ?? []).compactMap(\.stringValue)
        let b = try env.open()
        let shown = Self.shown(b.drainRaw())
        #expect(shown == expected, "\(name): shown \(shown.count), manifest \(expected.count)")
        for m in expected where !shown.contains(m) { Issue.record("\(name): not shown: \(m)") }
        for m in shown where !expected.contains(m) { Issue.record("\(name): not in the manifest: \(m)") }
        // The game grants and confirms every result.
        let keys = shown.compactMap(Self.resultKey)
        #expect(Set(keys).count == keys.count, "\(name): two results under one key")
        for k in keys { try b.confirm(k) }
        #expect(b.c.flush() == nil)
        // The purchase waiting for a parent completes under the key its intent kept.
        let waiting = try b.sim(#"{"op":"pending"}"#)["pending"]?.arrayValue ?? []
        #expect(waiting.count == 1, "\(name): the ask-to-buy purchase is no longer pending")
        b.close()

        let again = try env.open()
        let later = again.drain()
        let repeated = later.filter { ["7", "revoked", "unvouched", "outbox_damaged"].contains($0["type"]?.stringValue ?? "") }
        #expect(repeated.isEmpty, "\(name): shown again after the game confirmed everything: \(repeated)")
        if let id = waiting.first?["id"], let key = waiting.first?["key"]?.stringValue.flatMap({ Int64($0) }) {
            _ = try again.sim(#"{"op":"approve","id":\#(id.serialized)}"#)
            let approved = again.drainResults()
            #expect(approved.map(\.keyValue) == [key], "\(name): the approved purchase came under \(approved.map(\.keyValue)), not \(key)")
            #expect(approved.first?["productID"]?.stringValue == "vip_yearly")
        }
        again.close()
    }

    @Test("a v1 outbox opens, and shows its manifest, when the rewrite to format 2 fails (a full disk); the next open rewrites it")
    func upgradeOnAFullDisk() throws {
        let (env, manifest) = try Self.open("torn-tail")
        let expected = (manifest["messages"]?.arrayValue ?? []).compactMap(\.stringValue)
        let log = env.dataDir + "/" + Outbox.fileName
        let disk = SimulatedDisk(faultyLog: Outbox.fileName)
        env.disk = disk
        disk.inject(.write, count: -1, code: ENOSPC)
        let b = try env.open()
        #expect(Self.shown(b.drainRaw()) == expected)
        b.close()
        disk.clear()
        let stillV1 = RecordFrame.scan(try POSIX.readFile(log) ?? []).records.filter { $0.first == 1 }.count
        #expect(stillV1 > 0, "the failed rewrite left the file as it was")
        let (box, report) = try Outbox.open(directory: env.dataDir)
        #expect(report.upgradedRecords == stillV1 && report.droppedTailBytes == 0 && !report.isDamaged)
        box.close()
        #expect(RecordFrame.scan(try POSIX.readFile(log) ?? []).records.allSatisfy { $0.first != 1 }, "rewritten in format 2")
        let again = try env.open()
        #expect(Self.shown(again.drainRaw()) == expected, "the same results after the rewrite")
        again.close()
    }
}
