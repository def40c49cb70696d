#if canImport(Glibc)
import Glibc
#endif
import CIAPFrame
import IAPBridge
import IAPCore

// Target "abi": the C entry points in an order and with arguments the fuzzer
// picks: NULLs, garbage and closed handles, empty, invalid UTF-8, 1 MB and
// fuzzer-made strings, extreme keys, and callbacks that call back into the
// SDK (confirm, poll, request, even close their own bridge).
// The input is a program: one opcode byte, then the bytes its arguments take.
// Oracles: no crash, no hang (libFuzzer -timeout), every return code is one
// the header lists for that function, an error always comes with a message
// naming the function, out-parameters are cleared on error, and every string
// handed to the game is one JSON object with a "type".

private let scratch = fuzzScratch + "/abi"
private let catalogPath = sampleCatalogCopy

/// One megabyte of 'a', NUL-terminated: the "huge string" argument.
private let huge: UnsafeMutablePointer<CChar> = {
    let n = 1 << 20
    let p = UnsafeMutablePointer<CChar>.allocate(capacity: n + 1)
    p.initialize(repeating: 0x61, count: n)
    p[n] = 0
    return p
}()

/// The codes each function may return: exactly the header's "Returns" lists
/// (include/iap_bridge.h); scripts/docs/check_fuzz_codes.py compares them.
private let documented: [String: Set<Int32>] = [
    "iap_open": [0, -1, -2, -3, -4, -5, -6, -9, -13, -18],
    "iap_close": [0, -6, -7, -8],
    "iap_request_products": [0, -1, -2, -3, -7, -8, -9],
    "iap_buy": [0, -1, -2, -9, -10, -7, -8],
    "iap_confirm": [0, -17, -12, -7, -8],
    "iap_restore": [0, -9, -7, -8],
    "iap_set_callback": [0, -7, -8],
    "iap_simulator": [0, -1, -2, -3, -14, -15, -10, -6, -13, -7, -8],
    "iap_flush": [0, -6, -7, -8],
    "iap_subscription_status": [0, -2, -3, -9, -13, -7, -8],
    "iap_app_transaction": [0, -9, -13, -7, -8],
    "iap_manage_subscriptions": [0, -9, -13, -7, -8],
    "iap_request_refund": [0, -1, -2, -9, -13, -7, -8],
    "iap_redeem_offer_code": [0, -9, -13, -7, -8],
    "iap_show_store_messages": [0, -7, -8],
]

private func checkCode(_ function: String, _ rc: Int32) {
    check(documented[function]!.contains(rc), "\(function) returned undocumented code \(rc)")
    if rc != 0 {
        let m = String(cString: iap_errmsg())
        check(m.hasPrefix(function + ": ") && m.count > function.count + 2, "\(function) failed without a message naming it: \"\(m)\"")
        check(String(cString: iap_error_name(rc)) != "IAP_E_UNKNOWN_CODE", "no name for \(rc)")
    }
}

/// Reads the program.
private struct Program {
    let b: [UInt8]
    var pos = 0
    var done: Bool { pos >= b.count }
    mutating func byte() -> UInt8 {
        guard pos < b.count else { return 0 }
        defer { pos += 1 }
        return b[pos]
    }
    mutating func u64() -> UInt64 {
        var v: UInt64 = 0
        for _ in 0..<8 { v = v << 8 | UInt64(byte()) }
        return v
    }
    /// Up to 255 fuzzer bytes (length byte first).
    mutating func blob() -> [UInt8] {
        let n = Int(byte())
        let end = min(b.count, pos + n)
        defer { pos = end }
        return Array(b[pos..<end])
    }
}

/// What a callback may do when it receives a message.
private enum CallbackMode: UInt8, CaseIterable {
    case record, confirm, pollAndRequest, close, everything
}

/// Lives until every bridge of the input is closed (iap_close waits for a
/// callback in progress, so no callback runs after that).
private final class Context {
    let mode: CallbackMode
    var handle: OpaquePointer?
    let lock = Lock()
    var messages = 0
    init(mode: CallbackMode, handle: OpaquePointer?) {
        self.mode = mode
        self.handle = handle
    }
}

private let callback: @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?) -> Void = { ctx, json in
    check(json != nil, "callback got NULL json")
    guard let ctx, let json else { return }
    let c = Unmanaged<Context>.fromOpaque(ctx).takeUnretainedValue()
    let v = checkMessage(cBytes(json), "callback")
    c.lock.withLock { c.messages += 1 }
    let key = v["key"]?.stringValue.flatMap { Int64($0) }
    switch c.mode {
    case .record:
        break
    case .confirm:
        if let key { checkCode("iap_confirm", iap_confirm(c.handle, key)) }
    case .pollAndRequest:
        if let m = iap_poll(c.handle) { checkMessage(cBytes(m), "poll in callback"); iap_free(m) }
        checkCode("iap_request_products", iap_request_products(c.handle, "[\"coins_100\"]"))
    case .close:
        checkCode("iap_close", iap_close(c.handle))
    case .everything:
        if let key { checkCode("iap_confirm", iap_confirm(c.handle, key)) }
        var k: Int64 = 0
        checkCode("iap_buy", iap_buy(c.handle, "coins_100", 0, &k))
        var out: UnsafeMutablePointer<CChar>? = nil
        checkCode("iap_simulator", iap_simulator(c.handle, "{\"op\":\"clock\"}", &out))
        iap_free(out)
        checkCode("iap_flush", iap_flush(c.handle))
        checkCode("iap_set_callback", iap_set_callback(c.handle, nil, nil))
    }
}

private final class State {
    var open: [OpaquePointer?] = []
    var closed: [OpaquePointer?] = []
    var keys: [Int64] = [0, -1, 1, Int64.min, Int64.max]
    var contexts: [Context] = []
    var blobs: [[UInt8]] = []

    func config(_ n: Int) -> [UInt8] {
        var w = JSONObjectWriter()
        w.string("store", "simulator")
        w.string("dataDir", "\(scratch)/data\(n)")
        w.string("catalog", catalogPath)
        w.value("simulator", .object(["stateDir": .string("\(scratch)/state\(n)"), "durable": .bool(false), "tickMs": .number("0"), "purchaseDelayMs": .number("0")]))
        return w.finish()
    }

    func handle(_ p: inout Program) -> OpaquePointer? {
        let c = p.byte()
        switch c % 8 {
        case 0, 1, 2, 3: return open.isEmpty ? nil : open[Int(c / 8) % open.count]
        case 4: return closed.isEmpty ? nil : closed[Int(c / 8) % closed.count]
        case 5: return nil
        case 6: return OpaquePointer(bitPattern: UInt(truncatingIfNeeded: p.u64()))
        default: return OpaquePointer(bitPattern: UInt(c) << 12 | UInt(p.byte()))  // small generation, likely closed
        }
    }

    func key(_ p: inout Program) -> Int64 {
        let c = p.byte()
        if c < 200 { return keys[Int(c) % keys.count] }
        return Int64(bitPattern: p.u64())
    }

    /// Calls `body` with a string argument of the fuzzer's choice.
    func string<T>(_ p: inout Program, _ body: (UnsafePointer<CChar>?) -> T) -> T {
        let c = p.byte()
        switch c % 12 {
        case 0: return body(nil)
        case 1: return body("")
        case 2: return withCString([0xFF, 0xFE, 0xC3, 0x28]) { body($0) }  // invalid UTF-8
        case 3: return body(UnsafePointer(huge))
        case 4: return body("coins_100")
        case 5: return body("remove_ads")
        case 6: return body("[\"coins_100\",\"remove_ads\",\"vip_monthly\",\"nope\"]")
        case 7: return body("{\"op\":\"transactions\"}")
        case 8: return body("{\"op\":\"cancel_next\"}")
        default: return withCString(p.blob()) { body($0) }
        }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzABI(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    _ = catalogPath
    mkdir(scratch, 0o700)
    defer { removeTree(scratch) }
    var p = Program(b: bytes(data, size))
    let s = State()
    var steps = 0
    while !p.done && steps < 200 {
        steps += 1
        switch p.byte() % 16 {
        case 0:  // iap_open
            let n = Int(p.byte() % 3)
            var h: OpaquePointer? = OpaquePointer(bitPattern: 0x1234)
            let rc: Int32
            let form = p.byte() % 4
            switch form {
            case 0: rc = iap_open(nil, &h)
            case 1: rc = s.string(&p) { iap_open($0, &h) }
            case 2: rc = withCString(s.config(n)) { iap_open($0, nil) }
            default: rc = withCString(s.config(n)) { iap_open($0, &h) }
            }
            checkCode("iap_open", rc)
            if rc == 0 {
                s.open.append(h)
            } else if form != 2 {
                check(h == nil, "iap_open failed but left *out set")
            }
        case 1:  // iap_close
            let h = s.handle(&p)
            let rc = iap_close(h)
            checkCode("iap_close", rc)
            if rc == 0 {
                s.open.removeAll { $0 == h }
                s.closed.append(h)
            }
        case 2:
            let h = s.handle(&p)
            checkCode("iap_request_products", s.string(&p) { iap_request_products(h, $0) })
        case 3:
            let h = s.handle(&p)
            let click = s.key(&p)
            var k: Int64 = 99
            let withOut = p.byte() & 1 == 0
            let rc = s.string(&p) { withOut ? iap_buy(h, $0, click, &k) : iap_buy(h, $0, click, nil) }
            checkCode("iap_buy", rc)
            if withOut {
                if rc == 0 { s.keys.append(k) } else { check(k == 0, "iap_buy failed but *out_key is \(k)") }
            }
        case 4:
            let h = s.handle(&p)
            checkCode("iap_confirm", iap_confirm(h, s.key(&p)))
        case 5:
            checkCode("iap_restore", iap_restore(s.handle(&p)))
        case 6:
            let h = s.handle(&p)
            if let m = iap_poll(h) {
                let v = checkMessage(cBytes(m), "iap_poll")
                if let k = v["key"]?.stringValue.flatMap({ Int64($0) }) { s.keys.append(k) }
                iap_free(m)
            }
        case 7:
            let h = s.handle(&p)
            let c = p.byte()
            if c % 7 == 0 {
                checkCode("iap_set_callback", iap_set_callback(h, nil, nil))
            } else {
                let ctx = Context(mode: CallbackMode(rawValue: c % 5)!, handle: h)
                s.contexts.append(ctx)
                checkCode("iap_set_callback", iap_set_callback(h, callback, Unmanaged.passUnretained(ctx).toOpaque()))
            }
        case 8:
            let m = iap_errmsg()
            _ = strlen(m)
        case 9:
            let code = Int32(bitPattern: UInt32(truncatingIfNeeded: p.u64()))
            check(strlen(iap_error_name(code)) > 0, "empty error name")
        case 10:
            let h = s.handle(&p)
            var out: UnsafeMutablePointer<CChar>? = UnsafeMutablePointer(bitPattern: 0x42)
            let withOut = p.byte() & 1 == 0
            let rc = s.string(&p) { withOut ? iap_simulator(h, $0, &out) : iap_simulator(h, $0, nil) }
            checkCode("iap_simulator", rc)
            if withOut {
                if rc == 0 {
                    check(out != nil, "iap_simulator OK without an answer")
                    if let out { check((try? JSONParser.parse(bytes: cBytes(out)))?.objectValue != nil, "answer is not an object") }
                    iap_free(out)
                } else {
                    check(out == nil, "iap_simulator failed but set *out_json")
                }
            }
        case 11:
            checkCode("iap_flush", iap_flush(s.handle(&p)))
        case 12:
            check(String(cString: iap_version()) == "1.1.0" && iap_version_number() == 10100, "iap_version")
        case 13:
            iap_free(nil)
            // The store requests beyond buying.
            let h = s.handle(&p)
            switch p.byte() % 6 {
            case 0: checkCode("iap_subscription_status", s.string(&p) { iap_subscription_status(h, $0) })
            case 1: checkCode("iap_app_transaction", iap_app_transaction(h))
            case 2: checkCode("iap_manage_subscriptions", iap_manage_subscriptions(h))
            case 3: checkCode("iap_request_refund", s.string(&p) { iap_request_refund(h, $0) })
            case 4: checkCode("iap_redeem_offer_code", iap_redeem_offer_code(h))
            default: checkCode("iap_show_store_messages", iap_show_store_messages(h))
            }
        default:
            // A burst of polls, the per-frame path.
            let h = s.handle(&p)
            for _ in 0..<Int(p.byte() % 8) {
                if let m = iap_poll(h) { checkMessage(cBytes(m), "iap_poll"); iap_free(m) }
            }
        }
    }
    for h in s.open {
        let rc = iap_close(h)
        check(rc == 0 || rc == -8, "final iap_close returned \(rc)")  // -8: a callback closed it
    }
    _ = s.contexts  // kept alive until here
    return 0
}
