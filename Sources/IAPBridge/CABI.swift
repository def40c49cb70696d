#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import CIAPSupport
import IAPCore
import IAPStores

// The C ABI of include/iap_bridge.h. Marshalling only: every decision lives
// in IAPCore. Each function validates its arguments, maps errors to the
// header's codes and never traps on caller input.

private let maxJSONBytes = 64 * 1024
private let maxProductIDBytes = 256

@_cdecl("iap_version")
public func iap_version() -> UnsafePointer<CChar> {
    let v: StaticString = "1.1.0"
    return UnsafeRawPointer(v.utf8Start).assumingMemoryBound(to: CChar.self)
}

/// major * 10000 + minor * 100 + patch; a test checks it against the header.
@_cdecl("iap_version_number")
public func iap_version_number() -> Int32 { 10100 }

@_cdecl("iap_launch")
public func iap_launch() -> Int32 {
    do throws(IAPError) {
        try StoreFactory.listenFromLaunch()
        return IAPCode.ok.rawValue
    } catch {
        return report("iap_launch", error)
    }
}

@_cdecl("iap_open")
public func iap_open(_ configJSON: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    out?.pointee = nil
    do throws(IAPError) {
        guard let out else { throw IAPError(.nullArgument, "out is NULL") }
        let text = try CStrings.bytes(configJSON, name: "config_json", limit: maxJSONBytes)
        let config = try BridgeConfig.parse(text)
        let handle = try Registry.register { (counter: UnsafeMutablePointer<Int64>) throws(IAPError) -> Coordinator in
            try Coordinator.open(config: config, opening: try StoreFactory.begin(config), counter: counter)
        }
        out.pointee = handle
        return IAPCode.ok.rawValue
    } catch {
        return report("iap_open", error)
    }
}

@_cdecl("iap_close")
public func iap_close(_ b: OpaquePointer?) -> Int32 {
    switch Registry.unregister(b) {
    case .invalid:
        return report("iap_close", IAPError(.invalidHandle, b == nil ? "the bridge is NULL" : "not a bridge returned by iap_open"))
    case .closed:
        return report("iap_close", IAPError(.closed, "the bridge was already closed"))
    case .closing(let done, let c):
        // Another iap_close is closing it: answered once that close has
        // finished (the dataDir unlocked, so the caller may open it again),
        // unless this is the bridge's own thread, which that close waits for.
        if !c.isCallerOnBridgeThread { done.wait() }
        return report("iap_close", IAPError(.closed, "the bridge was already closed"))
    case .open(let c):
        let failure = c.close()
        Registry.release(b)
        if let failure { return report("iap_close", failure) }
        return IAPCode.ok.rawValue
    }
}

@_cdecl("iap_request_products")
public func iap_request_products(_ b: OpaquePointer?, _ idsJSON: UnsafePointer<CChar>?) -> Int32 {
    withBridge("iap_request_products", b) { (c: Coordinator) throws(IAPError) in
        try c.requestProducts(try CStrings.productIDs(idsJSON))
    }
}

@_cdecl("iap_buy")
public func iap_buy(_ b: OpaquePointer?, _ productID: UnsafePointer<CChar>?, _ clickMs: Int64,
                    _ outKey: UnsafeMutablePointer<Int64>?) -> Int32 {
    outKey?.pointee = 0
    return withBridge("iap_buy", b) { (c: Coordinator) throws(IAPError) in
        let id = try CStrings.string(productID, name: "product_id", limit: maxProductIDBytes)
        let key = try c.buy(productID: id, clickMs: clickMs)
        outKey?.pointee = key
    }
}

@_cdecl("iap_buy_quantity")
public func iap_buy_quantity(_ b: OpaquePointer?, _ productID: UnsafePointer<CChar>?, _ quantity: Int32, _ clickMs: Int64,
                             _ outKey: UnsafeMutablePointer<Int64>?) -> Int32 {
    outKey?.pointee = 0
    return withBridge("iap_buy_quantity", b) { (c: Coordinator) throws(IAPError) in
        let id = try CStrings.string(productID, name: "product_id", limit: maxProductIDBytes)
        let key = try c.buy(productID: id, clickMs: clickMs, quantity: Int(quantity))
        outKey?.pointee = key
    }
}

@_cdecl("iap_buy_offer")
public func iap_buy_offer(_ b: OpaquePointer?, _ productID: UnsafePointer<CChar>?, _ offerID: UnsafePointer<CChar>?,
                          _ clickMs: Int64, _ outKey: UnsafeMutablePointer<Int64>?) -> Int32 {
    outKey?.pointee = 0
    return withBridge("iap_buy_offer", b) { (c: Coordinator) throws(IAPError) in
        let id = try CStrings.string(productID, name: "product_id", limit: maxProductIDBytes)
        let offer = try CStrings.string(offerID, name: "offer_id", limit: maxProductIDBytes)
        let key = try c.buy(productID: id, clickMs: clickMs, winBackOfferID: offer)
        outKey?.pointee = key
    }
}

@_cdecl("iap_confirm")
public func iap_confirm(_ b: OpaquePointer?, _ key: Int64) -> Int32 {
    withBridge("iap_confirm", b) { (c: Coordinator) throws(IAPError) in try c.confirm(key: key) }
}

@_cdecl("iap_restore")
public func iap_restore(_ b: OpaquePointer?) -> Int32 {
    withBridge("iap_restore", b) { (c: Coordinator) throws(IAPError) in try c.restore() }
}

@_cdecl("iap_flush")
public func iap_flush(_ b: OpaquePointer?) -> Int32 {
    withBridge("iap_flush", b) { (c: Coordinator) throws(IAPError) in
        if let failure = c.flush() { throw failure }
    }
}

/// `iap_poll` is C (CIAPFrame's poll.c): its per-frame path, a live handle
/// with nothing queued, returns NULL there after two lock-free loads, with
/// no Swift thunk in between. Everything else comes here: a bad or closed
/// handle (reported like any call's) or a message to hand out.
/// Internal: called from poll.c inside the library, exported by nothing.
@_cdecl("iapc_poll_slow")
func iapc_poll_slow(_ b: OpaquePointer?) -> UnsafeMutablePointer<CChar>? {
    var message: [UInt8]? = nil
    let rc = withBridge("iap_poll", b) { (c: Coordinator) throws(IAPError) in message = c.queue.pop() }
    guard rc == IAPCode.ok.rawValue, let message else { return nil }
    return CStrings.duplicate(message)
}

@_cdecl("iap_free")
public func iap_free(_ p: UnsafeMutableRawPointer?) {
    free(p)
}

@_cdecl("iap_set_callback")
public func iap_set_callback(_ b: OpaquePointer?, _ cb: (@convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?) -> Void)?,
                             _ ctx: UnsafeMutableRawPointer?) -> Int32 {
    withBridge("iap_set_callback", b) { (c: Coordinator) throws(IAPError) in
        if c.isClosed { throw IAPError(.closed, "the bridge was closed") }
        guard let cb else {
            c.queue.setListener(nil)
            return
        }
        let context = UInt(bitPattern: ctx)
        c.queue.setListener { json in cb(UnsafeMutableRawPointer(bitPattern: context), json) }
    }
}

@_cdecl("iap_errmsg")
public func iap_errmsg() -> UnsafePointer<CChar> {
    iapc_errmsg()
}

@_cdecl("iap_error_name")
public func iap_error_name(_ code: Int32) -> UnsafePointer<CChar> {
    // Static strings (never freed, nothing allocated: the library may be
    // unloaded); IAPCode is the one list, checked against the header by a test.
    let name: StaticString = IAPCode(rawValue: code)?.staticName ?? "IAP_E_UNKNOWN_CODE"
    return UnsafeRawPointer(name.utf8Start).assumingMemoryBound(to: CChar.self)
}

@_cdecl("iap_simulator")
public func iap_simulator(_ b: OpaquePointer?, _ commandJSON: UnsafePointer<CChar>?,
                          _ outJSON: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    outJSON?.pointee = nil
    return withBridge("iap_simulator", b) { (c: Coordinator) throws(IAPError) in
        guard let outJSON else { throw IAPError(.nullArgument, "out_json is NULL") }
        let bytes = try CStrings.bytes(commandJSON, name: "command_json", limit: maxJSONBytes)
        let v: JSONValue
        do { v = try JSONParser.parse(bytes: bytes) } catch {
            throw IAPError(.badJSON, "command_json is not valid JSON: \(error)")
        }
        let answer = try c.simulate(v)
        var buf = JSONBuffer()
        buf.appendValue(answer)
        outJSON.pointee = CStrings.duplicate(buf.bytes)
    }
}
