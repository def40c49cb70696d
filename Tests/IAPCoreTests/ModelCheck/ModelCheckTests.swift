import Foundation
import IAPCore
import Testing

/// The model checker of the delivery core (docs/CONTRACT.md): for each
/// scenario it enumerates every interleaving, up to the scenario's number of
/// actions, of store events (a purchase answered as a success, a cancel, an
/// interrupted payment or Ask to Buy then resolved, a twin through the update
/// stream, a store-initiated purchase, an error after which the store charges
/// all the same, re-delivery at open), the SDK thread's
/// steps and commit timer, the game's polls, handling and confirms (one at a
/// time or a frame's batch, confirming saved keys before polling after a
/// restart, double confirms) and a crash at every point; then lets the run
/// finish and checks: every charged transaction granted exactly once, none
/// finished before it was granted, one result per key, nothing delivered
/// after everything was confirmed.
///
/// Stateless search: each interleaving is replayed from scratch on fresh
/// files (in /dev/shm where it exists: a sync there costs nothing).
@Suite("Model checker", .serialized)
struct ModelCheckTests {
    static let catalog = MessageSchemas.repoRoot + "/samples/catalog/Game.storekit"

    static func scratchRoot() -> String {
        let base = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
        var t = Array((base + "/iap-model-XXXXXX").utf8CString)
        let made = t.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(made != nil, "mkdtemp failed")
        return String(decoding: t.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    struct Report {
        var runs = 0
        var violations: [String] = []
        var example: [String] = []
    }

    /// Depth-first over the choice tree: `path` holds the index chosen at
    /// each step; after a run, the last step with an untried choice moves on.
    static func explore(_ s: ModelRun.Scenario, limit: Int) throws -> Report {
        var report = Report()
        var path: [Int] = []
        let root = scratchRoot()
        defer { try? FileManager.default.removeItem(atPath: root) }
        while report.runs < limit {
            let dir = root + "/r\(report.runs)"
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            let run = try ModelRun(s, root: dir, catalog: catalog)
            var widths: [Int] = []
            var trace: [String] = []
            for depth in 0..<s.maxActions {
                let choices = run.enabled()
                if choices.isEmpty { break }
                if depth >= path.count { path.append(0) }
                widths.append(choices.count)
                let a = choices[path[depth]]
                trace.append(a.description)
                try run.perform(a)
            }
            try run.finishAndCheck()
            report.runs += 1
            if !run.violations.isEmpty && report.violations.count < 10 {
                report.violations.append(contentsOf: run.violations.map { "\($0) after [\(trace.joined(separator: " "))]" })
            }
            try? FileManager.default.removeItem(atPath: dir)
            // Next path: bump the deepest index that has choices left.
            path = Array(path.prefix(widths.count))
            while let last = path.last, last + 1 >= widths[path.count - 1] {
                path.removeLast()
            }
            if path.isEmpty { return report }
            path[path.count - 1] += 1
        }
        report.violations.append("the search did not finish within \(limit) runs (raise the limit or lower maxActions)")
        return report
    }

    static let scenarios: [ModelRun.Scenario] = [
        .init(name: "one purchase: success or cancel", outcomes: [.success, .cancel], maxActions: 14),
        .init(name: "interrupted payment, then completed", outcomes: [.interrupted], maxActions: 14),
        .init(name: "Ask to Buy, approved or declined", outcomes: [.askToBuy], twins: 0, maxActions: 14),
        .init(name: "two purchases", buys: 2, twins: 0, maxActions: 13),
        .init(name: "a store-initiated purchase and its twin", buys: 0, externals: 1, maxActions: 12),
        .init(name: "one purchase, any answer, two crashes", outcomes: ModelRun.Outcome.allCases, twins: 0, crashes: 2, maxActions: 13),
        .init(name: "an error, then the charge after all, and its twin", outcomes: [.errorThenCharge], maxActions: 13),
    ]

    @Test("every interleaving of store events, SDK steps, game patterns and a crash keeps the contract", arguments: scenarios.indices)
    func exhaustive(_ i: Int) throws {
        let s = Self.scenarios[i]
        let start = Date()
        let report = try Self.explore(s, limit: 400_000)
        print("model checker: \"\(s.name)\": \(report.runs) interleavings explored (up to \(s.maxActions) actions, \(s.crashes) crash) in \(String(format: "%.1f", Date().timeIntervalSince(start))) s, \(report.violations.count) violations")
        #expect(report.violations.isEmpty, "\(report.violations.joined(separator: "\n"))")
        #expect(report.runs > 10)
    }
}
