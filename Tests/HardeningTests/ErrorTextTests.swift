import Foundation
import IAPBridge
import IAPCore
import Testing

/// `iap_errmsg` is "function: message", put together in C from the two
/// strings' bytes (ErrorReporting.swift): what the game reads is the whole
/// message, a NUL inside it (from a JSON escape in the game's own input)
/// dropped rather than cutting the text short.
@Suite struct ErrorTextTests {
    @Test("an error names its function, then the message, whole")
    func functionThenMessage() {
        var h: OpaquePointer? = nil
        #expect(iap_open("{\"store\":\"simulator\",\"nonsense\":1}", &h) == IAPCode.badConfig.rawValue)
        let text = lastError()
        #expect(text.hasPrefix("iap_open: "), "\(text)")
        #expect(text.contains("unknown config key \"nonsense\""), "\(text)")
        #expect(iap_confirm(nil, 1) == IAPCode.invalidHandle.rawValue)
        #expect(lastError() == "iap_confirm: the bridge is NULL")
    }

    @Test("a NUL in the message (a \\u0000 in the game's JSON) is dropped, not an end of the text")
    func nulDropped() {
        var h: OpaquePointer? = nil
        #expect(iap_open("{\"store\":\"simulator\",\"ab\\u0000cd\":1}", &h) == IAPCode.badConfig.rawValue)
        let text = lastError()
        #expect(text.contains("unknown config key \"abcd\""), "\(text)")
        #expect(text.contains("(known: "), "the text goes on past where the NUL was: \(text)")
    }
}
