// The example store's logic: products, buying, granting once per key,
// confirming, restoring, VIP status. Plain C# (no Unity API), so the Mono test
// runs exactly this code; IAPStoreExample.cs only draws it.
using System;

namespace IAPBridge.Example
{
    public sealed class Shop : IDisposable
    {
        public static readonly string[] ProductIds = { "coins_100", "remove_ads", "vip_monthly", "vip_yearly" };

        public readonly Bridge Bridge;
        public readonly GameSave Save;
        public ProductInfo[] Products = new ProductInfo[0];
        public bool Vip;
        public string Status = "Loading products...";

        public Shop(string configJson, string savePath)
        {
            Save = GameSave.Load(savePath);
            Bridge = Bridge.Open(configJson);
            Bridge.ProductsReceived += m => { Products = m.items; Status = "Tap a product to buy it."; };
            Bridge.PurchaseReceived += OnPurchase;
            Bridge.RevokedReceived += OnRevoked;
            Bridge.EntitlementsReceived += OnEntitlements;
            Bridge.PendingReceived += m => Status = m.productID + " waits for approval (" + m.reason + ").";
            Bridge.ErrorReceived += m => Status = "Store error (" + m.op + "): " + m.message;
            Bridge.RequestProducts(ProductIds);
        }

        /// Call once a frame on the main thread: messages become events here.
        public void Update() { Bridge.DispatchPending(); }

        public void Buy(string productId)
        {
            try
            {
                // The click time is the purchase's key.
                Bridge.Buy(productId, DateTimeOffset.UtcNow.ToUnixTimeMilliseconds());
                Status = "Buying " + productId + "...";
            }
            catch (BridgeException e) { Status = e.Message; }
        }

        public void Restore()
        {
            Bridge.Restore();
            Status = "Restoring...";
        }

        private void OnPurchase(PurchaseMessage p)
        {
            if (!p.IsSuccess)
                Status = p.productID + ": " + p.resultName + ". Nothing was charged.";
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
        // on a new device and says when VIP ends. Coins only come from "7";
        // refunds come as "revoked".
        private void OnEntitlements(EntitlementsMessage e)
        {
            Vip = e.Owns("vip_monthly") || e.Owns("vip_yearly");
            if (e.Owns("remove_ads") && !Save.RemoveAds)
            {
                Save.RemoveAds = true;
                Save.Save();
            }
            if (e.reason == "restore") Status = "Restored " + e.items.Length + " purchase(s).";
        }

        public void Dispose() { Bridge.Dispose(); }
    }
}
