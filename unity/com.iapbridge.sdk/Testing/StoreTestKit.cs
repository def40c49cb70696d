// The IAPBridge test kit for C# (Unity edit-mode tests, NUnit under Mono):
// a fresh simulated App Store for one test, store actions (approve or decline
// an Ask to Buy, refund, lapse a subscription, fail the next purchase), the
// game's purchase code run and "killed" at a chosen point, restarted, and
// the check that every purchase was granted exactly once (docs/TESTKIT.md).
//
//   using (var kit = new StoreTestKit(catalogPath))
//   {
//       var run = kit.RunGame(config => MyGame.PlayOnce(config, savePath, buy: "coins_100"),
//                             KillPoint.BeforeConfirm);          // granted and saved: killed
//       Assert.AreEqual(KillPoint.BeforeConfirm, run.KilledAt);
//       kit.RunGame(config => MyGame.PlayOnce(config, savePath)); // the restart
//       var ledger = kit.Ledger();
//       Assert.AreEqual(100 * ledger.Net("coins_100"), MyGame.Load(savePath).Coins);
//   }
//
// A kill here is played in-process (the editor cannot run the game's code in
// another process): at the kill point the kit throws SimulatedCrash from
// inside the bridge call, none of the game's code after that point runs
// (catch blocks aside: do not catch Exception around purchase code), and
// every bridge still open is closed, as the process's death would release
// it. The SDK itself is closed cleanly, so a confirm already handed to it is
// kept (a real kill may lose one: the C, Python and Lua kits kill a real
// process for that).
using System;
using System.Collections.Generic;
using System.IO;

namespace IAPBridge.Testing
{
    public sealed class GameRun
    {
        /// The kill point reached, or null when the game's code returned.
        public string KilledAt;
    }

    public sealed class StoreTestKit : IDisposable
    {
        public readonly string Root, DataDir, StateDir, Catalog, Config;
        private static KillProbe current;

        /// catalog: the game's .storekit file. root: a directory for this test
        /// (default: a new one under the system's temporary folder), deleted by Dispose.
        public StoreTestKit(string catalog, string root = null)
        {
            Catalog = Path.GetFullPath(catalog);
            Root = root ?? Path.Combine(Path.GetTempPath(), "iap-testkit-" + Guid.NewGuid().ToString("N"));
            Directory.CreateDirectory(Root);
            DataDir = Path.Combine(Root, "data");
            StateDir = Path.Combine(Root, "appstore");
            Config = "{\"store\":\"simulator\",\"dataDir\":" + Json.Quote(DataDir) + ",\"catalog\":" + Json.Quote(Catalog) +
                     ",\"simulator\":{\"stateDir\":" + Json.Quote(StateDir) + ",\"tickMs\":0}}";
        }

        public void Dispose()
        {
            try { Directory.Delete(Root, true); } catch (IOException) { } catch (UnauthorizedAccessException) { }
        }

        // ---- the store, driven while the game is not running ----------------------

        /// Runs fn on a bridge of the game's directories, closed after it
        /// without confirming anything (results wait for the game's next start).
        public T Session<T>(Func<Bridge, T> fn)
        {
            using (var b = Bridge.Open(Config)) return fn(b);
        }

        /// One simulator command (docs/SIMULATOR.md), e.g. {"op":"advance","seconds":60}; its answer.
        public Dictionary<string, object> Store(string commandJson)
        {
            return Session(b => (Dictionary<string, object>)Json.Parse(b.Simulator(commandJson)));
        }

        public void AskToBuy(bool enabled) { Store("{\"op\":\"ask_to_buy\",\"enabled\":" + (enabled ? "true" : "false") + "}"); }

        /// The ids of the purchases of productId (null: any) waiting for a parent, oldest first.
        public List<string> Pending(string productId = null)
        {
            var ids = new List<string>();
            foreach (object o in (List<object>)Store("{\"op\":\"pending\"}")["pending"])
            {
                var p = (Dictionary<string, object>)o;
                if (productId == null || (string)p["productID"] == productId) ids.Add((string)p["id"]);
            }
            return ids;
        }

        private string OnePending(string productId)
        {
            var ids = Pending(productId);
            if (ids.Count == 0) throw new InvalidOperationException("no purchase of " + (productId ?? "any product") + " waits for approval");
            return ids[0];
        }

        /// A parent approves the oldest waiting purchase of productId: the game gets its "7" at its next start.
        public void Approve(string productId = null) { Store("{\"op\":\"approve\",\"id\":" + Json.Quote(OnePending(productId)) + "}"); }
        public void Decline(string productId = null) { Store("{\"op\":\"decline\",\"id\":" + Json.Quote(OnePending(productId)) + "}"); }

        /// Refunds the newest unrefunded transaction of productId; the game gets a
        /// "revoked" at its next start. Returns the transaction ID.
        public string Refund(string productId = null)
        {
            string tid = null;
            foreach (StoreTransaction t in Ledger().Charged)
                if (!t.Revoked && (productId == null || t.ProductID == productId)) tid = t.TransactionID;
            if (tid == null) throw new InvalidOperationException("no transaction of " + (productId ?? "any product") + " to refund");
            Store("{\"op\":\"refund\",\"transactionID\":" + Json.Quote(tid) + "}");
            return tid;
        }

        public void Advance(long seconds) { Store("{\"op\":\"advance\",\"seconds\":" + seconds + "}"); }

        /// Auto-renew off, then the store's clock past the period's end: the subscription expires.
        public void LapseSubscription(string productId)
        {
            Session(b =>
            {
                var st = (Dictionary<string, object>)((Dictionary<string, object>)Json.Parse(b.Simulator(
                    "{\"op\":\"auto_renew\",\"productID\":" + Json.Quote(productId) + ",\"enabled\":false}")))["status"];
                object expires;
                if (!st.TryGetValue("expiresDate", out expires) || !(expires is long))
                    throw new InvalidOperationException(productId + " has no running subscription to lapse");
                long now = (long)((Dictionary<string, object>)Json.Parse(b.Simulator("{\"op\":\"clock\"}")))["now"];
                long seconds = Math.Max(0, ((long)expires - now) / 1000) + 1;
                return b.Simulator("{\"op\":\"advance\",\"seconds\":" + seconds + "}");
            });
        }

        // ---- the game ----------------------------------------------------------------

        /// Runs the game's purchase code game(config) with killAt armed (a
        /// KillPoint, a Checkpoint name, "name:N" for the Nth time; null: none)
        /// and storeOps (one-session simulator commands such as
        /// {"op":"fail_next","error":"networkError"}) run right after the game's
        /// bridge opens. Throws InvalidOperationException when killAt was
        /// given and not reached.
        public GameRun RunGame(Action<string> game, string killAt = null, params string[] storeOps)
        {
            var probe = new KillProbe(killAt, storeOps);
            current = probe;
            TestHooks.Probe = probe;
            var run = new GameRun();
            try
            {
                game(Config);
            }
            catch (SimulatedCrash crash)
            {
                run.KilledAt = crash.Point;
            }
            finally
            {
                TestHooks.Probe = null;
                current = null;
                Bridge.DisposeAll(); // the process is gone: what it had open is released
            }
            if (killAt != null && run.KilledAt == null)
                throw new InvalidOperationException("the game was to be killed at " + killAt + ", but its code returned without reaching it");
            return run;
        }

        /// A kill point of the game's own (e.g. between granting and saving):
        /// the game dies here when the running test asked for it. Does nothing
        /// otherwise (also outside tests).
        public static void Checkpoint(string name)
        {
            var probe = current;
            if (probe != null) probe.Checkpoint(name);
        }

        // ---- the check -------------------------------------------------------------------

        /// The store's transactions and what the SDK holds unconfirmed (run it while the game is not running).
        public StoreLedger Ledger() { return Session(StoreLedger.Read); }

        /// Each charge granted exactly once, each refund taken back exactly
        /// once, no key twice, nothing left unconfirmed. Throws
        /// InvalidOperationException listing every problem; returns the ledger.
        public StoreLedger AssertGrantedExactlyOnce(IEnumerable<GrantRecord> grants, IEnumerable<GrantRecord> takebacks = null,
                                                    bool allConfirmed = true)
        {
            var ledger = Ledger();
            var problems = LedgerCheck.Problems(ledger, grants, takebacks, allConfirmed);
            if (problems.Count > 0)
                throw new InvalidOperationException("not granted exactly once:\n  " + string.Join("\n  ", problems.ToArray()));
            return ledger;
        }
    }
}
