import IAPCore

extension SimulatedStore {
    /// Creates and locks the store's state directory. When the game set only
    /// `dataDir`, a failure names `dataDir` and says the directory was derived
    /// from it: a game that never wrote "stateDir" or "<dataDir>.appstore" in
    /// its config is not told about a key it did not set (issue 23, item 4).
    static func prepareStateDirectory(_ options: SimulatorOptions, dataDir: String) throws(IAPError) -> Int32 {
        let role = options.stateDirDerived
            ? "the simulated store's directory, derived from dataDir \(dataDir) (set \"simulator\".\"stateDir\" to choose another),"
            : "\"simulator\".\"stateDir\""
        // A stateDir inside a dataDir not made yet (a first launch): dataDir
        // first, as the open would make it (checked already).
        let data = POSIX.lexicallyNormal(dataDir)
        if POSIX.parent(of: POSIX.lexicallyNormal(options.stateDir)) == data && !POSIX.exists(data) {
            try POSIX.prepareDirectory(data, role: "dataDir")
        }
        try POSIX.prepareDirectory(options.stateDir, role: role)
        do throws(IAPError) {
            return try POSIX.lockDirectory(options.stateDir)
        } catch {
            guard options.stateDirDerived else { throw error }
            if error.code == .busy {
                throw IAPError(.busy, "dataDir \(dataDir) is in use by another open bridge (its simulated store's directory \(options.stateDir) is locked)")
            }
            throw IAPError(error.code, "\(role) \(error.message)")
        }
    }
}
