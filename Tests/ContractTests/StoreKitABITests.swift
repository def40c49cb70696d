import IAPBridge
import Testing

#if !canImport(StoreKit)
/// Where StoreKit does not exist, a bridge opened with `"store": "storekit"`
/// is refused through the C ABI with a code, never opened over the stand-in.
@Suite("StoreKit through the C ABI where StoreKit does not exist")
struct StoreKitABITests {
    @Test("iap_open with \"store\": \"storekit\" answers IAP_E_NOT_SUPPORTED and says why")
    func notSupported() {
        var handle: OpaquePointer? = OpaquePointer(bitPattern: 0x1)
        let code = #"{"store":"storekit","dataDir":"/tmp/iap-storekit-abi-test"}"#.withCString { iap_open($0, &handle) }
        #expect(code == -13, "IAP_E_NOT_SUPPORTED")
        #expect(handle == nil)
        let message = String(cString: iap_errmsg())
        #expect(message.contains("StoreKit"))
    }
}
#endif
