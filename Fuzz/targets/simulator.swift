#if canImport(Glibc)
import Glibc
#endif
import CIAPFrame
import IAPBridge
import IAPCore

// Target "simulator": iap_simulator commands on an open bridge (a fresh one
// per input, on samples/catalog/Game.storekit). The input is a list of lines;
// each line is a command:
//   {"op": ...}          passed to iap_simulator as is
//   B<productID>         iap_buy(productID, click key 0)
//   C<n>                 iap_confirm of the n-th key seen in a message
//   R                    iap_restore
//   X                    close the bridge and open it again (re-emission)
// Oracles: every call returns a code the header documents for it, with a
// message naming the function; an answer is a JSON object; every message is
// JSON with a "type"; a confirmed key never comes back as a "7".

private let scratch = fuzzScratch + "/sim"
private let catalogPath = sampleCatalogCopy

private let config: [UInt8] = {
    var w = JSONObjectWriter()
    w.string("store", "simulator")
    w.string("dataDir", scratch + "/data")
    w.string("catalog", catalogPath)
    w.value("simulator", .object(["stateDir": .string(scratch + "/state"), "durable": .bool(false), "tickMs": .number("0"), "purchaseDelayMs": .number("0")]))
    return w.finish()
}()

private let simulatorCodes: Set<Int32> = [0, -1, -2, -3, -6, -7, -8, -10, -13, -14, -15]
private let buyCodes: Set<Int32> = [0, -1, -2, -6, -10, -11, -7, -8]

private final class Session {
    var h: OpaquePointer? = nil
    var keys: [Int64] = []
    var confirmed: Set<Int64> = []

    func open() {
        let rc = withCString(config) { iap_open($0, &h) }
        check(rc == 0, "iap_open failed: \(String(cString: iap_errmsg()))")
    }

    func drain() {
        _ = iap_flush(h)  // results are made on the SDK thread
        while let m = iap_poll(h) {
            let v = checkMessage(cBytes(m), "simulator bridge")
            iap_free(m)
            guard let k = v["key"]?.stringValue.flatMap({ Int64($0) }) else { continue }
            if v["type"]?.stringValue == "7" {
                // C4: confirmed (and flushed by the close in between) never again.
                check(!confirmed.contains(k), "a \"7\" for key \(k) came back after its confirm")
            }
            if !keys.contains(k) { keys.append(k) }
        }
    }
}

private func expectError(_ rc: Int32, _ function: String) {
    guard rc != 0 else { return }
    let msg = String(cString: iap_errmsg())
    check(msg.hasPrefix(function + ": ") && msg.count > function.count + 2, "\(function) error without its message: \(msg)")
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSimulator(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    _ = catalogPath
    let input = bytes(data, size)
    mkdir(scratch, 0o700)
    defer { removeTree(scratch) }
    let s = Session()
    s.open()
    var ops = 0
    for line in input.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true) where ops < 64 {
        ops += 1
        switch line.first! {
        case UInt8(ascii: "B"):
            var key: Int64 = 0
            let rc = withCString(Array(line.dropFirst())) { iap_buy(s.h, $0, 0, &key) }
            check(buyCodes.contains(rc), "iap_buy returned \(rc)")
            expectError(rc, "iap_buy")
        case UInt8(ascii: "C"):
            guard !s.keys.isEmpty else { continue }
            let n = Int(line.dropFirst().first ?? 0) % s.keys.count
            let rc = iap_confirm(s.h, s.keys[n])
            check(rc == 0 || rc == -12 || rc == -17, "iap_confirm returned \(rc)")
            expectError(rc, "iap_confirm")
            if rc == 0 { s.confirmed.insert(s.keys[n]) }
        case UInt8(ascii: "R"):
            check(iap_restore(s.h) == 0, "iap_restore failed")
        case UInt8(ascii: "X"):
            check(iap_close(s.h) == 0, "iap_close failed")
            s.open()
        default:
            var out: UnsafeMutablePointer<CChar>? = nil
            let rc = withCString(Array(line)) { iap_simulator(s.h, $0, &out) }
            check(simulatorCodes.contains(rc), "iap_simulator returned undocumented \(rc): \(String(cString: iap_errmsg()))")
            expectError(rc, "iap_simulator")
            if rc == 0 {
                check(out != nil, "iap_simulator OK without an answer")
                if let out {
                    let v = try? JSONParser.parse(bytes: cBytes(out))
                    check(v?.objectValue != nil, "iap_simulator answer is not a JSON object")
                    iap_free(out)
                }
            } else {
                check(out == nil, "iap_simulator failed but set *out_json")
            }
        }
        s.drain()
    }
    check(iap_close(s.h) == 0, "iap_close failed")
    // Everything not confirmed comes back after a restart, as JSON.
    s.open()
    s.drain()
    check(iap_close(s.h) == 0, "iap_close failed")
    saveOutbox()
    return 0
}

/// With IAP_FUZZ_SAVE_OUTBOX=dir, keeps the outbox this input left, as a seed
/// of the outbox target (mode byte 0: a file as found on disk).
private func saveOutbox() {
    guard let d = getenv("IAP_FUZZ_SAVE_OUTBOX"),
          let file = try? POSIX.readFile(scratch + "/data/" + Outbox.fileName), !file.isEmpty else { return }
    var h: UInt64 = 0xcbf29ce484222325
    for b in file { h = (h ^ UInt64(b)) &* 0x100000001b3 }
    writeFile(String(cString: d) + "/real-outbox-" + String(h, radix: 16), [0] + file)
}
