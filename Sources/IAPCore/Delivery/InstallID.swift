/// This install's identifier: random, made at the first `iap_open` on a
/// dataDir and kept in `dataDir/install-id`, written durably before the first
/// purchase can carry it. It goes into every purchase token (PurchaseToken),
/// so that a transaction whose token another device or another install of
/// the game made (StoreKit shows it to every device of the Apple ID) is not
/// taken for this game's click (C7). Deleting dataDir (a reinstall) makes a
/// new install.
public enum InstallID {
    public static let fileName = "install-id"
    /// The file is one line, "iapbridge-install <n>\n": never more than this.
    static let maxFileBytes = 64

    /// The identifier, and what was wrong with the file when it had to be
    /// replaced (reported to the game as an `"error"` with op `"install"`).
    public struct Loaded: Sendable {
        public let id: UInt32
        public let problem: String?
    }

    /// Reads the identifier, or makes and stores one. Only at open (I/O).
    ///
    /// A bad file (larger than 64 bytes, not an identity, not a regular
    /// file, unreadable) never makes the open fail: that would lock the game
    /// out of its purchases until someone moved a file the game cannot reach
    /// (issue 21). It is set aside as `install-id.damaged-<ms>` and this
    /// install gets a new identity. What that does to purchases in flight
    /// (C5): a purchase started before (a payment sheet still up when the
    /// game quit, an Ask to Buy a parent approves later, a charge that comes
    /// after an error) carries the old identity in its purchase token, which
    /// this install can no longer prove was its own. It is still delivered,
    /// under the click's key: the token's key is the click (C5), and this
    /// dataDir's outbox still awaits that key (its intent), so the result is
    /// stored and shown under it, once; the SDK vouches for a held record's
    /// key from the token whatever install made it (C11). Only its `origin`
    /// says `"store"`, as for a click another install made; the game grants a
    /// success whose key its save does not hold either way. Not kept: the
    /// old identity. A damaged file cannot be trusted to name this install,
    /// and one that did not read cannot name it at all.
    /// `beforeRepair` runs before an unreadable file is set aside, and may refuse.
    public static func load(dataDir: String, beforeRepair: () throws(IAPError) -> Void = {}) throws(IAPError) -> Loaded {
        let path = dataDir + "/" + fileName
        var problem: String? = nil
        do throws(IAPError) {
            if let got = try POSIX.readPrefix(path, upTo: maxFileBytes) {
                if got.isWhole, let v = parse(got.bytes) { return Loaded(id: v, problem: nil) }
                problem = got.isWhole ? "it does not hold an install identity" : "it is \(got.size) bytes, more than the \(maxFileBytes) an identity takes"
            }
        } catch {
            let advice = ": move it away"  // not needed: it is moved away below
            problem = error.message.hasSuffix(advice) ? String(error.message.dropLast(advice.count)) : error.message
        }
        var aside: String? = nil
        if problem != nil {
            try beforeRepair()
            aside = try POSIX.setAside(path)
        }
        var v: UInt32 = 0
        while v == 0 { v = UInt32.random(in: 1...PurchaseToken.installMask) }
        try POSIX.replaceFile(path, with: Array("iapbridge-install \(v)\n".utf8))
        guard let problem, let aside else { return Loaded(id: v, problem: nil) }
        return Loaded(id: v, problem: "\(path) was unreadable (\(problem)): it was set aside as \(aside) and this install has a new identity. Purchases started before it still arrive under their keys, with origin \"store\" (their purchase tokens name the old identity)")
    }

    static func parse(_ bytes: [UInt8]) -> UInt32? {
        let text = String(decoding: bytes, as: UTF8.self)
        guard text.hasPrefix("iapbridge-install "), text.hasSuffix("\n") else { return nil }
        let digits = text.dropFirst("iapbridge-install ".count).dropLast()
        guard let v = UInt32(digits), v != 0, v <= PurchaseToken.installMask else { return nil }
        return v
    }
}
