// The exactly-once check: a game's saved grants and takebacks against the
// store's ledger. Returns every problem as a sentence (none: all good).
using System.Collections.Generic;
using System.Linq;

namespace IAPBridge.Testing
{
    public static class LedgerCheck
    {
        public static List<string> Problems(StoreLedger ledger, IEnumerable<GrantRecord> grants,
                                            IEnumerable<GrantRecord> takebacks, bool allConfirmed = true)
        {
            var problems = new List<string>();
            Side(problems, "granted", "charged", (grants ?? new GrantRecord[0]).ToList(), ledger.Charged);
            Side(problems, "taken back", "refunded", (takebacks ?? new GrantRecord[0]).ToList(), ledger.Refunded);
            if (allConfirmed)
                foreach (Message m in ledger.Unconfirmed)
                    problems.Add("the game left a \"" + m.type + "\" unconfirmed (" + m.json + "): it comes again at every start");
            return problems;
        }

        private static void Side(List<string> problems, string what, string verb, List<GrantRecord> records, List<StoreTransaction> expected)
        {
            foreach (var g in records.GroupBy(r => r.Key).Where(g => g.Count() > 1))
                problems.Add("key " + g.Key + " was " + what + " " + g.Count() + " times (each key once)");
            var products = new SortedSet<string>(expected.Select(t => t.ProductID).Concat(records.Select(r => r.ProductID)));
            foreach (string pid in products)
            {
                int want = expected.Count(t => t.ProductID == pid), have = records.Count(r => r.ProductID == pid);
                if (want != have)
                    problems.Add(pid + ": the store " + verb + " " + want + ", the game's save has " + have + " " + what);
            }
            if (records.Count > 0 && records.All(r => !string.IsNullOrEmpty(r.TransactionID)))
                foreach (StoreTransaction t in expected)
                {
                    int n = records.Count(r => r.TransactionID == t.TransactionID);
                    if (n != 1) problems.Add("transaction " + t.TransactionID + " (" + t.ProductID + ") was " + what + " " + n + " times");
                }
        }
    }
}
