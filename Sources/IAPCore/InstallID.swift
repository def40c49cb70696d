/// This install's identifier: random, made at the first `iap_open` on a
/// dataDir and kept in `dataDir/install-id`, written durably before the first
/// purchase can carry it. It goes into every purchase token (PurchaseToken),
/// so that a transaction whose token another device or another install of
/// the game made (StoreKit shows it to every device of the Apple ID) is not
/// taken for this game's click (C7). Deleting dataDir (a reinstall) makes a
/// new install.
public enum InstallID {
    public static let fileName = "install-id"

    /// Reads the identifier, or makes and stores one. Only at open (I/O).
    public static func load(dataDir: String) throws(IAPError) -> UInt32 {
        let path = dataDir + "/" + fileName
        if let bytes = try POSIX.readFile(path, limit: 64), let v = parse(bytes) { return v }
        // Absent or damaged: a new one (a damaged file only means that
        // purchases made before it arrive as store-initiated).
        var v: UInt32 = 0
        while v == 0 { v = UInt32.random(in: 1...PurchaseToken.installMask) }
        try POSIX.replaceFile(path, with: Array("iapbridge-install \(v)\n".utf8))
        return v
    }

    static func parse(_ bytes: [UInt8]) -> UInt32? {
        let text = String(decoding: bytes, as: UTF8.self)
        guard text.hasPrefix("iapbridge-install "), text.hasSuffix("\n") else { return nil }
        let digits = text.dropFirst("iapbridge-install ".count).dropLast()
        guard let v = UInt32(digits), v != 0, v <= PurchaseToken.installMask else { return nil }
        return v
    }
}
