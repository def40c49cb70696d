// What the simulated store charged and refunded (its "transactions"), and the
// results the SDK still holds unconfirmed: the truth a game's save is checked
// against (StoreTestKit.AssertGrantedExactlyOnce).
using System.Collections.Generic;

namespace IAPBridge.Testing
{
    public sealed class StoreTransaction
    {
        public string TransactionID, ProductID;
        /// The key of the game's click that bought it (0 for a purchase the store started).
        public long Key;
        public bool Revoked;
    }

    public sealed class StoreLedger
    {
        /// Every verified transaction the store charged (a forged one is no charge).
        public readonly List<StoreTransaction> Charged = new List<StoreTransaction>();
        /// The "7" and "revoked" messages the SDK would deliver again: the game left them unconfirmed.
        public readonly List<Message> Unconfirmed = new List<Message>();

        public int ChargedCount(string productId) { return Charged.FindAll(t => t.ProductID == productId).Count; }
        public int RefundedCount(string productId) { return Charged.FindAll(t => t.ProductID == productId && t.Revoked).Count; }
        /// Charged minus refunded: what the player should own of it.
        public int Net(string productId) { return ChargedCount(productId) - RefundedCount(productId); }
        public List<StoreTransaction> Refunded { get { return Charged.FindAll(t => t.Revoked); } }

        internal static StoreLedger Read(Bridge b)
        {
            var ledger = new StoreLedger();
            var answer = (Dictionary<string, object>)Json.Parse(b.Simulator("{\"op\":\"transactions\"}"));
            foreach (object o in (List<object>)answer["transactions"])
            {
                var t = (Dictionary<string, object>)o;
                object v;
                if (t.TryGetValue("verified", out v) && v is bool && !(bool)v) continue;
                long key = 0;
                if (t.TryGetValue("key", out v) && v is string) long.TryParse((string)v, out key);
                ledger.Charged.Add(new StoreTransaction
                {
                    TransactionID = (string)t["transactionID"],
                    ProductID = (string)t["productID"],
                    Key = key,
                    Revoked = t.TryGetValue("revoked", out v) && v is bool && (bool)v,
                });
            }
            b.Flush();
            string json;
            while ((json = b.Poll()) != null)
            {
                var m = Message.Parse(json);
                if (m is PurchaseMessage || m is RevokedMessage) ledger.Unconfirmed.Add(m);
            }
            return ledger;
        }
    }
}
