// The example store's logic: products, buying, granting once per key,
// confirming, restoring; VIP that survives a billing grace period; the App
// Store's subscription and offer code sheets; StoreKit messages held back
// during play and shown from the menu; the premium unlock of players who
// bought the game while it was paid. Plain C# (no Unity API), so the Mono test
// runs exactly this code; IAPStoreExample.cs only draws it.
using System;
using System.Globalization;

namespace IAPBridge.Example
{
    public sealed class Shop : IDisposable
    {
        public static readonly string[] ProductIds = { "coins_100", "remove_ads", "vip_monthly", "vip_yearly" };

        /// The game was paid before this version and is free from it on: a
        /// player whose first version is older bought it and gets the premium
        /// unlock. (On iOS the app transaction reports the build number,
        /// CFBundleVersion: compare with your build numbers.)
        public const string FreeSinceVersion = "2.0";

        /// The version the simulated player runs (a device reports the installed one).
        public const string SimulatedGameVersion = "2.1";

        public readonly Bridge Bridge;
        public readonly GameSave Save;
        public ProductInfo[] Products = new ProductInfo[0];
        /// VIP is active: subscribed, or in a billing grace period (the renewal
        /// failed, Apple retries, the player keeps VIP meanwhile).
        public bool Vip;
        /// Set while a VIP renewal could not be charged: show it next to the
        /// "Manage subscription" button.
        public string PaymentHint;
        /// StoreKit messages (a billing issue, a price increase to agree to)
        /// held back during play; ShowStoreMessages shows them.
        public int StoreMessagesWaiting;
        public string Status = "Loading products...";
        private bool subscriptionStatusKnown;

        /// The example's configs: StoreKit messages wait for the menu instead
        /// of covering the game mid-level.
        public static string SimulatorConfig(string dataDir, string catalog, string stateDir)
        {
            return BridgeConfig.Simulator(dataDir, catalog, stateDir, StoreMessages.Defer, SimulatedGameVersion);
        }

        public static string StoreKitConfig(string dataDir)
        {
            return BridgeConfig.StoreKit(dataDir, StoreMessages.Defer);
        }

        public Shop(string configJson, string savePath)
        {
            Save = GameSave.Load(savePath);
            Bridge = Bridge.Open(configJson);
            Bridge.ProductsReceived += m => { Products = m.items; Status = "Tap a product to buy it."; };
            Bridge.PurchaseReceived += OnPurchase;
            Bridge.RevokedReceived += OnRevoked;
            Bridge.EntitlementsReceived += OnEntitlements;
            Bridge.SubscriptionReceived += OnSubscription;
            Bridge.AppTransactionReceived += OnAppTransaction;
            Bridge.StoreMessageReceived += m => { if (m.IsDeferred) StoreMessagesWaiting++; };
            Bridge.SheetClosed += OnSheetClosed;
            Bridge.PendingReceived += m => Status = m.productID + " waits for approval (" + m.reason + ").";
            Bridge.ErrorReceived += m => Status = "Store error (" + m.op + "): " + m.message;
            Bridge.RequestProducts(ProductIds);
            if (!Save.Premium) CheckPremium();
        }

        /// Call once a frame on the main thread: messages become events here.
        public void Update() { Bridge.DispatchPending(); }

        public void Buy(string productId)
        {
            // The click time is the purchase's key.
            Try(() => Bridge.Buy(productId, DateTimeOffset.UtcNow.ToUnixTimeMilliseconds()), "Buying " + productId + "...");
        }

        public void Restore() { Try(Bridge.Restore, "Restoring..."); }

        /// The App Store's sheet: cancel, change plan, fix the payment method.
        public void ManageSubscription() { Try(Bridge.ManageSubscriptions, "Opening your subscriptions..."); }

        /// A redeemed code's purchase arrives as a "7", granted like any.
        public void RedeemOfferCode() { Try(Bridge.RedeemOfferCode, "Opening offer codes..."); }

        /// Call at a calm moment (the menu, between levels).
        public void ShowStoreMessages()
        {
            if (StoreMessagesWaiting == 0) return;
            StoreMessagesWaiting = 0;
            Try(Bridge.ShowStoreMessages, Status);
        }

        /// Asks when the player first got the game; OnAppTransaction decides.
        public void CheckPremium() { Try(Bridge.AppTransaction, Status); }

        private void Try(Action call, string status)
        {
            try
            {
                call();
                Status = status;
            }
            catch (BridgeException e)
            {
                // Busy: another App Store sheet is still open. NotSupported:
                // the store or this iOS version lacks the feature.
                Status = e.Code == ErrorCode.Busy ? "Close the App Store sheet first." : e.Message;
            }
        }

        private void OnPurchase(PurchaseMessage p)
        {
            if (!p.IsSuccess)
                // After a network or unknown error the store may charge anyway:
                // that charge comes later under this same key, as a success.
                Status = p.productID + ": " + p.resultName + (p.result == PurchaseResult.NetworkError || p.result == PurchaseResult.Unknown
                    ? ". If you were charged anyway, the item arrives by itself." : ". Nothing was charged.");
            else if (Save.WasGranted(p.Key))
                Status = p.productID + " was already granted."; // delivered again after a crash
            else
            {
                if (p.productID == "coins_100") Save.Coins += 100 * Math.Max(1, p.quantity);
                if (p.productID == "remove_ads") Save.RemoveAds = true;
                if (p.productID.StartsWith("vip_", StringComparison.Ordinal)) Vip = true;
                Save.MarkGranted(p.Key);
                Save.Save(); // 1. the player's items are on disk...
                Status = "Thank you! " + p.productID + " is yours.";
            }
            Bridge.Confirm(p.Key); // 2. ...before the SDK forgets the purchase.
        }

        private void OnRevoked(RevokedMessage r)
        {
            if (!Save.WasGranted(r.Key))
            {
                if (r.productID == "coins_100") Save.Coins = Math.Max(0, Save.Coins - 100 * Math.Max(1, r.quantity));
                if (r.productID == "remove_ads") Save.RemoveAds = false;
                Save.MarkGranted(r.Key);
                Save.Save();
                Status = r.productID + " was refunded.";
            }
            Bridge.Confirm(r.Key);
        }

        // Non-consumables and subscriptions: the store's list brings them back
        // on a new device. Coins only come from "7"; refunds come as "revoked".
        private void OnEntitlements(EntitlementsMessage e)
        {
            // A store that reports no subscription status: VIP from the list.
            if (!subscriptionStatusKnown) Vip = e.Owns("vip_monthly") || e.Owns("vip_yearly");
            if (e.Owns("remove_ads") && !Save.RemoveAds)
            {
                Save.RemoveAds = true;
                Save.Save();
            }
            if (e.reason == "restore") Status = "Restored " + e.items.Length + " purchase(s).";
        }

        // VIP follows its group's status: at start, and whenever it changes (a
        // message lists only the groups it is about; others keep their state).
        private void OnSubscription(SubscriptionMessage m)
        {
            foreach (SubscriptionGroupStatus g in m.groups)
            {
                if (!g.productID.StartsWith("vip_", StringComparison.Ordinal)) continue;
                subscriptionStatusKnown = true;
                Vip = g.active; // subscribed, or in a billing grace period
                if (g.state == SubscriptionState.InGracePeriod)
                    PaymentHint = "Your VIP payment failed: update your payment method to keep VIP.";
                else if (g.state == SubscriptionState.InBillingRetryPeriod)
                    PaymentHint = "VIP is paused: your payment failed. Update your payment method to get it back.";
                else
                    PaymentHint = null;
            }
        }

        private void OnAppTransaction(AppTransactionMessage m)
        {
            if (m.error != null || !m.verified) return; // asked again at the next start
            if (Save.Premium || !VersionBefore(m.originalAppVersion, FreeSinceVersion)) return;
            Save.Premium = true;
            Save.Save();
            Status = "You bought the game before it was free: premium is yours. Thank you!";
        }

        private void OnSheetClosed(SheetMessage m)
        {
            if (m.outcome == SheetOutcome.Error) Status = "The App Store could not open it: " + m.message;
            else if (m.sheet == SheetKind.OfferCode) Status = "Offer codes closed."; // a redeemed one arrives as a "7"
            else Status = "Back in the game."; // changes arrive as "subscription" and "entitlements"
        }

        /// "1.9.3" is before "2.0": compared number by number (a missing part is 0).
        public static bool VersionBefore(string version, string other)
        {
            string[] a = (version ?? "").Split('.'), b = other.Split('.');
            for (int i = 0; i < Math.Max(a.Length, b.Length); i++)
            {
                long x = i < a.Length ? Part(a[i]) : 0, y = i < b.Length ? Part(b[i]) : 0;
                if (x != y) return x < y;
            }
            return false;
        }

        private static long Part(string s)
        {
            long n;
            return long.TryParse(s, NumberStyles.None, CultureInfo.InvariantCulture, out n) ? n : 0;
        }

        public void Dispose() { Bridge.Dispose(); }
    }
}
