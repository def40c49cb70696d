import CIAPSupport
import IAPCore

/// Sets this thread's `iap_errmsg` ("function: message") and returns the
/// code for the C caller. The text is put together in C from the two
/// strings' bytes: no Swift string is built for it.
@inline(never)
func report(_ function: StaticString, _ e: IAPError) -> Int32 {
    var message = e.message
    message.withUTF8 { m in
        function.withUTF8Buffer { f in iapc_set_errmsg_parts(f.baseAddress, f.count, m.baseAddress, m.count) }
    }
    return e.code.rawValue
}

/// Runs `body` on the open bridge behind `h`, mapping every failure to a code.
@inline(__always)
func withBridge(_ function: StaticString, _ h: OpaquePointer?, _ body: (Coordinator) throws(IAPError) -> Void) -> Int32 {
    switch Registry.lookup(h) {
    case .invalid:
        return report(function, IAPError(.invalidHandle, h == nil ? "the bridge is NULL" : "not a bridge returned by iap_open"))
    case .closed, .closing:  // (lookup never answers .closing)
        return report(function, IAPError(.closed, "the bridge was closed"))
    case .open(let c):
        do throws(IAPError) {
            try body(c)
            return IAPCode.ok.rawValue
        } catch {
            return report(function, error)
        }
    }
}
