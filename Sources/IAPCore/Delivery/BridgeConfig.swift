/// The `iap_open` configuration, checked strictly: unknown keys, wrong
/// types and missing required keys are errors, never silently ignored.
public struct BridgeConfig: Sendable {
    public enum StoreChoice: String, Sendable { case simulator, storekit }

    public var store: StoreChoice
    /// Absolute path of the directory holding the outbox.
    public var dataDir: String
    /// The `.storekit` catalog (simulator only).
    public var catalog: String?
    /// The `"simulator"` object, validated by the simulator itself.
    public var simulator: JSONValue?
    /// The `"storekit"` object, validated by the StoreKit backend.
    public var storekit: JSONValue?
    /// Emit `"entitlements"` at open (default true).
    public var entitlementsAtOpen: Bool
    /// Term of each non-renewing subscription (StoreKit gives them no end
    /// date; the game decides). Product ID -> ISO 8601 duration; "*" is the
    /// default for the others. Without one, a year.
    public var nonRenewingTerms: [String: ISODuration] = [:]

    /// What happens to a StoreKit message (billing issue, price increase
    /// consent): shown at once (`show`, the default, as StoreKit does), or
    /// held until the game calls `iap_show_store_messages` at a moment that
    /// does not interrupt play (`defer`).
    public enum StoreMessages: String, Sendable { case show, `defer` }
    public var storeMessages: StoreMessages = .show

    /// How many purchases may wait for the store's answer before `iap_buy`
    /// answers IAP_E_BUSY (`"purchasesInFlight"`, 1 to 1,000,000; default
    /// 32). A game never needs more than the default; load tests and
    /// benchmarks that buy in bulk raise it.
    public var purchasesInFlight = 32
    public static let purchasesInFlightRange = 1...1_000_000

    public func nonRenewingTerm(_ productID: String) -> ISODuration {
        nonRenewingTerms[productID] ?? nonRenewingTerms["*"] ?? ISODuration("P1Y")!
    }

    public static let maxConfigBytes = 64 * 1024

    /// A directory path from the config: non-empty, absolute, no NUL, its
    /// trailing slashes dropped ("/games/x/data/" is "/games/x/data").
    public static func checkedDirectory(_ path: String, key: String) throws(IAPError) -> String {
        guard !path.isEmpty else { throw IAPError(.badConfig, "\(key) is empty; expected an absolute directory path") }
        guard path.hasPrefix("/") else {
            throw IAPError(.badConfig, "\(key) must be an absolute path (starting with /), got \"\(path)\"")
        }
        guard !path.utf8.contains(0) else { throw IAPError(.badConfig, "\(key) contains a NUL byte") }
        return POSIX.withoutTrailingSlashes(path)
    }

    public static func parse(_ text: [UInt8]) throws(IAPError) -> BridgeConfig {
        guard !text.isEmpty else { throw IAPError(.badJSON, "config is empty; expected a JSON object") }
        guard text.count <= maxConfigBytes else { throw IAPError(.invalidArgument, "config is larger than \(maxConfigBytes) bytes") }
        let v: JSONValue
        do { v = try JSONParser.parse(bytes: text) } catch { throw IAPError(.badJSON, "config is not valid JSON: \(error)") }
        guard let o = v.objectValue else { throw IAPError(.badConfig, "config must be a JSON object") }
        let known: Set<String> = ["store", "dataDir", "catalog", "simulator", "storekit", "entitlementsAtOpen", "nonRenewingTerms",
                                   "storeMessages", "purchasesInFlight"]
        if let unknown = o.keys.sorted().first(where: { !known.contains($0) }) {
            throw IAPError(.badConfig, "unknown config key \"\(unknown)\" (known: \(known.sorted().joined(separator: ", ")))")
        }
        guard let storeText = o["store"]?.stringValue else { throw IAPError(.badConfig, "config needs \"store\": \"simulator\" or \"storekit\"") }
        guard let store = StoreChoice(rawValue: storeText) else {
            throw IAPError(.badConfig, "\"store\" must be \"simulator\" or \"storekit\", got \"\(storeText)\"")
        }
        guard let dataDirText = o["dataDir"]?.stringValue else { throw IAPError(.badConfig, "config needs \"dataDir\": an absolute directory path") }
        // Checked here, before anything derives a path from it (the
        // simulator's default stateDir is dataDir + ".appstore"), so an error
        // names the key the game set.
        let dataDir = try checkedDirectory(dataDirText, key: "dataDir")
        var catalog: String? = nil
        if let c = o["catalog"] {
            guard let s = c.stringValue else { throw IAPError(.badConfig, "\"catalog\" must be a string path") }
            catalog = s
        }
        if let s = o["simulator"], s.objectValue == nil { throw IAPError(.badConfig, "\"simulator\" must be an object") }
        if let s = o["storekit"], s.objectValue == nil { throw IAPError(.badConfig, "\"storekit\" must be an object") }
        var ent = true
        if let e = o["entitlementsAtOpen"] {
            guard let b = e.boolValue else { throw IAPError(.badConfig, "\"entitlementsAtOpen\" must be true or false") }
            ent = b
        }
        var terms: [String: ISODuration] = [:]
        if let t = o["nonRenewingTerms"] {
            guard let to = t.objectValue else { throw IAPError(.badConfig, "\"nonRenewingTerms\" must be an object of product ID -> ISO 8601 duration") }
            for (k, v) in to {
                guard let text = v.stringValue, let d = ISODuration(text) else {
                    throw IAPError(.badConfig, "\"nonRenewingTerms\".\"\(k)\" must be an ISO 8601 duration such as \"P1M\"")
                }
                terms[k] = d
            }
        }
        var messages = StoreMessages.show
        if let m = o["storeMessages"] {
            guard let text = m.stringValue, let v = StoreMessages(rawValue: text) else {
                throw IAPError(.badConfig, "\"storeMessages\" must be \"show\" or \"defer\"")
            }
            messages = v
        }
        var inFlight = 32
        if let p = o["purchasesInFlight"] {
            guard let n = p.int64Value, BridgeConfig.purchasesInFlightRange.contains(Int(clamping: n)) else {
                throw IAPError(.badConfig, "\"purchasesInFlight\" must be an integer from 1 to 1000000 (default 32)")
            }
            inFlight = Int(n)
        }
        switch store {
        case .simulator:
            guard catalog != nil else { throw IAPError(.badConfig, "the simulator needs \"catalog\": the path of a .storekit file") }
            if o["storekit"] != nil { throw IAPError(.badConfig, "\"storekit\" options given with \"store\": \"simulator\"") }
        case .storekit:
            if catalog != nil { throw IAPError(.badConfig, "\"catalog\" is for the simulator; StoreKit reads products from the App Store") }
            if o["simulator"] != nil { throw IAPError(.badConfig, "\"simulator\" options given with \"store\": \"storekit\"") }
        }
        var config = BridgeConfig(store: store, dataDir: dataDir, catalog: catalog, simulator: o["simulator"],
                                  storekit: o["storekit"], entitlementsAtOpen: ent, nonRenewingTerms: terms)
        config.storeMessages = messages
        config.purchasesInFlight = inFlight
        return config
    }
}
