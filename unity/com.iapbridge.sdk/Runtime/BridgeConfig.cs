// Builds the JSON config of Bridge.Open, with paths quoted correctly
// (Windows backslashes, quotes, non-ASCII folder names).
namespace IAPBridge
{
    /// What happens to a StoreKit message for the player (a billing issue,
    /// consent to a subscription price increase): the config's "storeMessages".
    public enum StoreMessages
    {
        /// Shown at once, over the game, as StoreKit does (the default).
        Show,
        /// Held (a StoreMessageReceived with state "deferred" announces it)
        /// until the game calls Bridge.ShowStoreMessages at a moment that does
        /// not interrupt play.
        Defer,
    }

    public static class BridgeConfig
    {
        /// The simulated App Store: `catalogPath` is an Xcode .storekit file.
        /// `dataDir` (the SDK's outbox) and `stateDir` (the simulated store's
        /// own records) must be absolute; keep them apart, so that deleting
        /// dataDir plays a reinstall. stateDir null: "<dataDir>.appstore".
        /// `appVersion`: the game version the simulated player runs (the
        /// AppTransactionMessage's; null: "1.0").
        public static string Simulator(string dataDir, string catalogPath, string stateDir = null,
                                       StoreMessages storeMessages = StoreMessages.Show, string appVersion = null)
        {
            string sim = "";
            if (stateDir != null) sim = "\"stateDir\":" + Json.Quote(stateDir);
            if (appVersion != null) sim += (sim.Length > 0 ? "," : "") + "\"appVersion\":" + Json.Quote(appVersion);
            if (sim.Length > 0) sim = ",\"simulator\":{" + sim + "}";
            return "{\"store\":\"simulator\",\"dataDir\":" + Json.Quote(dataDir) +
                   ",\"catalog\":" + Json.Quote(catalogPath) + sim + StoreMessagesKey(storeMessages) + "}";
        }

        /// The real App Store (StoreKit 2: iOS 15 and macOS 12 and later; the
        /// package ships no tvOS library).
        public static string StoreKit(string dataDir, StoreMessages storeMessages = StoreMessages.Show)
        {
            return "{\"store\":\"storekit\",\"dataDir\":" + Json.Quote(dataDir) + StoreMessagesKey(storeMessages) + "}";
        }

        private static string StoreMessagesKey(StoreMessages m)
        {
            return m == StoreMessages.Defer ? ",\"storeMessages\":\"defer\"" : "";
        }
    }
}
