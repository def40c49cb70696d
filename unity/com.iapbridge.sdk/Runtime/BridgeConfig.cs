// Builds the JSON config of Bridge.Open, with paths quoted correctly
// (Windows backslashes, quotes, non-ASCII folder names).
namespace IAPBridge
{
    public static class BridgeConfig
    {
        /// The simulated App Store: `catalogPath` is an Xcode .storekit file.
        /// `dataDir` (the SDK's outbox) and `stateDir` (the simulated store's
        /// own records) must be absolute; keep them apart, so that deleting
        /// dataDir plays a reinstall. stateDir null: "<dataDir>.appstore".
        public static string Simulator(string dataDir, string catalogPath, string stateDir = null)
        {
            string sim = stateDir == null ? "" : ",\"simulator\":{\"stateDir\":" + Json.Quote(stateDir) + "}";
            return "{\"store\":\"simulator\",\"dataDir\":" + Json.Quote(dataDir) +
                   ",\"catalog\":" + Json.Quote(catalogPath) + sim + "}";
        }

        /// The real App Store (StoreKit 2: iOS 15, macOS 12, tvOS 15 and later).
        public static string StoreKit(string dataDir)
        {
            return "{\"store\":\"storekit\",\"dataDir\":" + Json.Quote(dataDir) + "}";
        }
    }
}
