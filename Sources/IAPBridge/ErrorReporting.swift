import CIAPSupport
import IAPCore

/// Sets this thread's `iap_errmsg` and returns the code for the C caller.
@inline(never)
func report(_ function: String, _ e: IAPError) -> Int32 {
    var text = Array("\(function): \(e.message)".utf8)
    text.removeAll { $0 == 0 }
    text.withUnsafeBufferPointer { buf in
        buf.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buf.count) { iapc_set_errmsg($0, buf.count) }
    }
    return e.code.rawValue
}

/// Runs `body` on the open bridge behind `h`, mapping every failure to a code.
@inline(__always)
func withBridge(_ function: String, _ h: OpaquePointer?, _ body: (Coordinator) throws(IAPError) -> Void) -> Int32 {
    switch Registry.lookup(h) {
    case .invalid:
        return report(function, IAPError(.invalidHandle, h == nil ? "the bridge is NULL" : "not a bridge returned by iap_open"))
    case .closed:
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
