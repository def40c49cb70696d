import IAPCore

/// The `"simulator"` object of the config.
public struct SimulatorOptions: Sendable {
    /// Where the simulated App Store keeps its state. Outside `dataDir`, so
    /// deleting `dataDir` plays a reinstall. Default: `<dataDir>.appstore`.
    public var stateDir: String
    /// True when the game did not set `"simulator"."stateDir"`: the store's
    /// errors then name `dataDir`, the key the game set (issue 23).
    public var stateDirDerived = true
    /// Sync the store's own state (default true). False for benchmarks.
    public var durable = true
    /// Renewal timer period in milliseconds (0: renew only on `advance` and calls).
    public var tickMs: Int64 = 1000
    /// How long a purchase takes before the store answers, in milliseconds
    /// (default 10): the answer always comes after `iap_buy` returned, as
    /// StoreKit's does. 0 answers on the SDK thread's next step.
    public var purchaseDelayMs: Int64 = 10
    /// The version of the game the player runs (the app transaction's
    /// `appVersion`; also its `originalAppVersion` on a fresh store).
    public var appVersion = "1.0"

    public static func parse(_ v: JSONValue?, dataDir: String) throws(IAPError) -> SimulatorOptions {
        var o = SimulatorOptions(stateDir: dataDir + ".appstore")
        guard let obj = v?.objectValue else { return o }
        let known: Set<String> = ["stateDir", "durable", "tickMs", "purchaseDelayMs", "appVersion"]
        if let unknown = obj.keys.sorted().first(where: { !known.contains($0) }) {
            throw IAPError(.badConfig, "unknown key \"simulator\".\"\(unknown)\" (known: \(known.sorted().joined(separator: ", ")))")
        }
        if let s = obj["stateDir"] {
            guard let text = s.stringValue else { throw IAPError(.badConfig, "\"simulator\".\"stateDir\" must be a string path") }
            o.stateDir = try BridgeConfig.checkedDirectory(text, key: "\"simulator\".\"stateDir\"")
            o.stateDirDerived = false
        }
        if let d = obj["durable"] {
            guard let b = d.boolValue else { throw IAPError(.badConfig, "\"simulator\".\"durable\" must be true or false") }
            o.durable = b
        }
        if let t = obj["tickMs"] {
            guard let n = t.int64Value, n >= 0, n <= 3_600_000 else { throw IAPError(.badConfig, "\"simulator\".\"tickMs\" must be 0..3600000") }
            o.tickMs = n
        }
        if let t = obj["purchaseDelayMs"] {
            guard let n = t.int64Value, n >= 0, n <= 600_000 else {
                throw IAPError(.badConfig, "\"simulator\".\"purchaseDelayMs\" must be 0..600000")
            }
            o.purchaseDelayMs = n
        }
        if let a = obj["appVersion"] {
            guard let text = a.stringValue, !text.isEmpty, text.utf8.count <= 64 else {
                throw IAPError(.badConfig, "\"simulator\".\"appVersion\" must be a version string such as \"2.1\"")
            }
            o.appVersion = text
        }
        guard POSIX.lexicallyNormal(o.stateDir) != POSIX.lexicallyNormal(dataDir) else {
            throw IAPError(.badConfig, "\"simulator\".\"stateDir\" must differ from \"dataDir\" (\(o.stateDir) and \(dataDir) name one directory)")
        }
        return o
    }
}
