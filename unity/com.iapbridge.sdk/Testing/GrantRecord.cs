// One grant (or takeback) in the game's save: the key of the "7" (or
// "revoked"), its product, and optionally its transaction ID.
namespace IAPBridge.Testing
{
    public struct GrantRecord
    {
        public long Key;
        public string ProductID;
        public string TransactionID;

        public GrantRecord(long key, string productId, string transactionId = null)
        {
            Key = key;
            ProductID = productId;
            TransactionID = transactionId;
        }
    }
}
