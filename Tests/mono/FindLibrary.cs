// Where plain Mono finds the native library (docs/INTEGRATION.md, "Plain Mono"):
// prints the library's version and exits 0 when the binding loaded it, exits 1
// when it did not (the binding then answers IAP_E_NOT_SUPPORTED).
// Tests/mono/run.sh runs it with the library in each place the guide names.
using System;
using IAPBridge;

static class FindLibrary
{
    static int Main()
    {
        try
        {
            Console.WriteLine("find-library: loaded " + Bridge.Version);
            return 0;
        }
        catch (BridgeException e) when (e.Code == ErrorCode.NotSupported)
        {
            Console.WriteLine("find-library: not loaded (IAP_E_NOT_SUPPORTED)");
            return 1;
        }
    }
}
