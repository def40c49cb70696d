#if canImport(Glibc)
import Glibc
#endif
import CIAPFrame
import IAPBridge
import IAPCore
import IAPSimulator

// Target "config": the iap_open configuration. Every input goes through
// BridgeConfig.parse and the simulator's own options; inputs whose paths stay
// inside this fuzzer's scratch directory also go through a real iap_open and
// iap_close. "@D" in the input stands for the scratch directory and "@C" for
// a copy of samples/catalog/Game.storekit, so the seeds can name real paths
// without the fuzzer ever creating directories elsewhere.

private let scratch = fuzzScratch + "/config"
private let catalogPath = sampleCatalogCopy

/// Replaces every "@D" and "@C" (the fuzzer's spelling of our paths).
private func expand(_ input: [UInt8]) -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(input.count + 64)
    var i = 0
    while i < input.count {
        if input[i] == UInt8(ascii: "@"), i + 1 < input.count {
            if input[i + 1] == UInt8(ascii: "D") { out += Array(scratch.utf8); i += 2; continue }
            if input[i + 1] == UInt8(ascii: "C") { out += Array(catalogPath.utf8); i += 2; continue }
        }
        out.append(input[i])
        i += 1
    }
    return out
}

/// True for an absolute path under the scratch directory without "..": the
/// only paths iap_open may be given here. Relative and empty paths are
/// allowed too (refused by iap_open before anything is created).
private func confined(_ p: String?) -> Bool {
    guard let p else { return true }
    if !p.hasPrefix("/") { return true }
    return (p.hasPrefix(scratch + "/") || p == catalogPath) && !p.contains("/..") && !p.utf8.contains(0)
}

private let allowedOpenCodes: Set<Int32> = [0, -2, -3, -4, -5, -6, -9, -13]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzConfig(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    _ = catalogPath
    let text = expand(bytes(data, size))
    let config: BridgeConfig
    do { config = try BridgeConfig.parse(text) } catch {
        check([.badJSON, .badConfig, .invalidArgument].contains(error.code), "parse failed with \(error)")
        check(!error.message.isEmpty, "empty error message")
        return 0
    }
    // Whatever the config says, asking it about terms never traps.
    _ = config.nonRenewingTerm("coins_100").added(to: POSIX.nowMs())
    let options = try? SimulatorOptions.parse(config.simulator, dataDir: config.dataDir)
    guard confined(config.dataDir), confined(config.catalog), confined(options?.stateDir),
          !text.contains(0) else { return 0 }

    // A real open, from C's side.
    var cstr = text
    cstr.append(0)
    var handle: OpaquePointer? = nil
    let rc = cstr.withUnsafeBufferPointer { b in
        b.baseAddress!.withMemoryRebound(to: CChar.self, capacity: b.count) { iap_open($0, &handle) }
    }
    check(allowedOpenCodes.contains(rc), "iap_open returned undocumented \(rc)")
    if rc == 0 {
        check(handle != nil, "iap_open OK without a handle")
        while let m = iap_poll(handle) {
            checkMessage(Array(UnsafeBufferPointer(start: UnsafeRawPointer(m).assumingMemoryBound(to: UInt8.self), count: strlen(m))), "open")
            iap_free(m)
        }
        check(iap_close(handle) == 0, "iap_close failed: \(String(cString: iap_errmsg()))")
    } else {
        check(handle == nil, "iap_open failed but set *out")
        let msg = String(cString: iap_errmsg())
        check(msg.hasPrefix("iap_open: "), "error message does not name iap_open: \(msg)")
    }
    removeTree(scratch)
    mkdir(scratch, 0o700)
    return 0
}
