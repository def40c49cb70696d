// The real-client test: the Unity package's binding (unity/com.iapbridge.sdk/
// Runtime, compiled as IAPBridge.Runtime.dll) and the example store's logic
// (its "Example Store" sample) run under Mono against the library
// (libIAPBridge.so), on the simulated App Store; and domain unloads with a
// bridge open, as Unity's script reloads do them.
//
//   mono driver.exe <catalog.storekit>       (Tests/mono/run.sh builds and runs it)
//
// Prints one line per check and, last, "mono: N passed, M failed"; exits
// non-zero when any check failed.
using System;
using System.Collections.Generic;
using System.IO;
using System.Text.RegularExpressions;
using System.Threading;
using IAPBridge;
using IAPBridge.Example;

static partial class Driver
{
    static int passed, failed;
    static int mainThread;
    static string catalog, root;

    static int Main(string[] args)
    {
        if (args.Length != 1) { Console.Error.WriteLine("usage: driver.exe CATALOG.storekit"); return 2; }
        catalog = Path.GetFullPath(args[0]);
        root = Path.Combine(Path.GetTempPath(), "iap-mono-" + Guid.NewGuid().ToString("N"));
        Directory.CreateDirectory(root);
        mainThread = Thread.CurrentThread.ManagedThreadId;
        try
        {
            BridgeScenario();
            CallbackScenario();
            ThrowingHandlerScenario();
            ErrorScenario();
            JsonScenario();
            ExampleShopScenario();
            SubscriptionScenario();
            OffersScenario();
            StoreMessagesShownScenario();
            ExampleSubscriptionScenario();
            DomainUnloadScenario();
            ReloadDuringOpenScenario();
            PlayModeResetScenario();
        }
        catch (Exception e)
        {
            Fail("unexpected exception", e.ToString());
        }
        finally
        {
            try { Directory.Delete(root, true); } catch (Exception) { }
        }
        Console.WriteLine("mono: " + passed + " passed, " + failed + " failed");
        return failed == 0 && passed > 0 ? 0 : 1;
    }

    // ---- checks ---------------------------------------------------------------

    static bool Check(bool ok, string what, string detail = "")
    {
        if (ok) { passed++; Console.WriteLine("ok   " + what); }
        else Fail(what, detail);
        return ok;
    }

    static void Fail(string what, string detail)
    {
        failed++;
        Console.WriteLine("FAIL " + what + (detail.Length > 0 ? ": " + detail : ""));
    }

    /// Runs `a`, which must throw a BridgeException with `code` and a message from the library.
    static BridgeException Expect(int code, string what, Action a)
    {
        try { a(); }
        catch (BridgeException e)
        {
            Check(e.Code == code && e.LibraryMessage.Length > 0 && e.Message.Contains(ErrorCode.Name(code)),
                  what, "got " + e.Message);
            return e;
        }
        Fail(what, "no BridgeException");
        return null;
    }

    static string Config(string name)
    {
        return BridgeConfig.Simulator(Path.Combine(root, name, "data"), catalog, Path.Combine(root, name, "appstore"));
    }

    static void Prepare(string name) { Directory.CreateDirectory(Path.Combine(root, name)); }

    /// Collects every message the bridge raises and waits for the one wanted,
    /// dispatching like a game's Update does (2 ms "frames").
    sealed class Inbox
    {
        readonly Bridge bridge;
        public readonly List<Message> All = new List<Message>();
        public Inbox(Bridge b) { bridge = b; b.MessageReceived += m => All.Add(m); }

        /// The first message of type T `wanted` accepts, among all received
        /// (or those from index `from` on: take `from` = Mark() before the call
        /// whose answer is wanted).
        public T WaitFor<T>(Func<T, bool> wanted, int timeoutMs = 15000, int from = 0) where T : Message
        {
            int seen = from;
            var until = DateTime.UtcNow.AddMilliseconds(timeoutMs);
            while (true)
            {
                for (; seen < All.Count; seen++)
                {
                    var m = All[seen] as T;
                    if (m != null && wanted(m)) return m;
                }
                if (DateTime.UtcNow > until) return null;
                if (bridge.DispatchPending() == 0) Thread.Sleep(2);
            }
        }

        public void Pump(int ms)
        {
            var until = DateTime.UtcNow.AddMilliseconds(ms);
            while (DateTime.UtcNow < until) { if (bridge.DispatchPending() == 0) Thread.Sleep(2); }
        }

        public int Count<T>(Func<T, bool> which, int from = 0) where T : Message
        {
            int n = 0;
            for (int i = from; i < All.Count; i++) { var t = All[i] as T; if (t != null && which(t)) n++; }
            return n;
        }

        /// Where the next message will be in All.
        public int Mark() { bridge.DispatchPending(); return All.Count; }
    }

    static bool Finished(Bridge b, string transactionID)
    {
        b.Flush();
        var list = new JsonObjectView(Json.Parse(b.Simulator("{\"op\":\"transactions\"}"))).List("transactions");
        foreach (var t in list)
            if ((string)t["transactionID"] == transactionID) return (bool)t["finished"];
        return false;
    }

    // ---- scenarios ------------------------------------------------------------

    /// Products, a purchase, a restart that delivers it again, confirm, and a
    /// restart that does not.
    static void BridgeScenario()
    {
        Check(Regex.IsMatch(Bridge.Version ?? "", @"^\d+\.\d+\.\d+"), "iap_version through the binding", Bridge.Version);
        Check(Bridge.VersionNumber >= 10100 && Bridge.VersionNumber < 20000, "iap_version_number: 1.x, at least 1.1",
              Bridge.VersionNumber.ToString());
        Prepare("main");
        string config = Config("main");
        long click = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();  // a wall-clock click: its own key
        string txn;

        using (var b = Bridge.Open(config))
        {
            var inbox = new Inbox(b);
            var ent = inbox.WaitFor<EntitlementsMessage>(m => m.reason == "open");
            var status = inbox.WaitFor<StoreStatusMessage>(m => m.reason == "open");
            Check(status != null && status.canMakePayments && status.storefront == "USA",
                  "\"store\" at open: payments allowed, storefront USA (StoreStatusMessage)", status == null ? "none" : status.json);
            Check(ent != null && ent.items.Length == 0, "first open: an empty \"entitlements\" (reason open)");

            // Non-ASCII both ways: an unknown ID in Latin, emoji and Hebrew comes back intact.
            const string odd = "épée_⚔️_שלום";
            b.RequestProducts("coins_100", "remove_ads", "vip_monthly", odd);
            var p = inbox.WaitFor<ProductsMessage>(m => true);
            if (Check(p != null && p.items.Length == 3, "\"999\" parsed: 3 products", p == null ? "none" : p.json))
            {
                var coins = p.Find("coins_100");
                var vip = p.Find("vip_monthly");
                Check(coins != null && coins.title == "100 Coins" && coins.displayPrice == "$0.99" && coins.price == "0.99" &&
                      coins.currency == "USD" && coins.kind == "consumable" && coins.description.EndsWith("💰"),
                      "\"999\": localized title, price and UTF-8 description", p.json);
                Check(vip != null && vip.subscriptionPeriod == "P1M" && vip.introductoryOffer != null &&
                      vip.introductoryOffer.paymentMode == "free" && p.Find("remove_ads").introductoryOffer == null,
                      "\"999\": subscription period and introductory offer", p.json);
            }
            Check(p != null && p.invalid.Length == 1 && p.invalid[0] == odd, "\"999\": the unknown non-ASCII ID in \"invalid\", intact",
                  p == null ? "" : string.Join("|", p.invalid));

            long key = b.Buy("coins_100", click);
            Check(key == click, "Buy returns the click time as the key", key.ToString());
            var r = inbox.WaitFor<PurchaseMessage>(m => m.Key == click);
            Check(r != null && r.IsSuccess && r.productID == "coins_100" && r.price == "0.99" && r.currency == "USD" &&
                  r.origin == "game" && r.transactionID.Length > 0 && r.quantity == 1,
                  "\"7\" success for the key", r == null ? "none" : r.json);
            txn = r == null ? "?" : r.transactionID;

            long fresh = b.Buy("remove_ads", click);
            Check(fresh > click, "Buy with a key already used: a fresh key above it, returned (never handed out twice)", fresh.ToString());
            var owned = inbox.WaitFor<PurchaseMessage>(m => m.Key == fresh);
            Check(owned != null && owned.IsSuccess, "the fresh key's \"7\"", owned == null ? "none" : owned.json);
            if (owned != null) b.Confirm(fresh);
            Expect(ErrorCode.UnknownProduct, "Buy of an unknown product: IAP_E_UNKNOWN_PRODUCT", () => b.Buy("no_such_sword", click + 7));
            long many = b.BuyQuantity("coins_100", 4, 0);
            var four = inbox.WaitFor<PurchaseMessage>(m => m.Key == many);
            Check(four != null && four.IsSuccess && four.quantity == 4 && four.price == "3.96",
                  "BuyQuantity: one \"7\" with quantity 4 and the price of four", four == null ? "none" : four.json);
            if (four != null) b.Confirm(many);
            Expect(ErrorCode.InvalidArg, "BuyQuantity of 11: IAP_E_INVALID_ARG", () => b.BuyQuantity("coins_100", 11, 0));
            // Not confirmed: the game "restarts".
        }

        using (var b = Bridge.Open(config))
        {
            var inbox = new Inbox(b);
            var again = inbox.WaitFor<PurchaseMessage>(m => m.Key == click);
            Check(again != null && again.transactionID == txn && again.IsSuccess, "restart: the unconfirmed result is delivered again",
                  again == null ? "none" : again.json);
            Expect(ErrorCode.Busy, "a second Open on the same dataDir: IAP_E_BUSY", () => Bridge.Open(config).Dispose());
            b.Confirm(click);
            Expect(ErrorCode.UnknownKey, "Confirm twice: IAP_E_UNKNOWN_KEY", () => b.Confirm(click));
            Check(Finished(b, txn), "after Confirm + Flush the store transaction is finished");
        }

        using (var b = Bridge.Open(config))
        {
            var inbox = new Inbox(b);
            var ent = inbox.WaitFor<EntitlementsMessage>(m => m.reason == "open");
            inbox.Pump(200);
            Check(ent != null && inbox.Count<PurchaseMessage>(m => true) == 0, "restart after Confirm: nothing delivered again",
                  inbox.All.Count + " messages");
        }
    }

    /// The SDK's callback arrives on its own thread; the game sees the message
    /// on its main thread, from DispatchPending.
    static void CallbackScenario()
    {
        Prepare("callback");
        const long click = 1700000000500;
        using (var b = Bridge.Open(Config("callback")))
        {
            int sdkThread = -1;
            var arrived = new ManualResetEvent(false);
            int dispatchThread = -1;
            PurchaseMessage got = null;
            b.PurchaseReceived += m => { if (m.Key == click) { got = m; dispatchThread = Thread.CurrentThread.ManagedThreadId; } };
            b.SetCallback(true, json =>
            {
                if (!json.Contains("\"key\":\"" + click + "\"")) return;
                sdkThread = Thread.CurrentThread.ManagedThreadId;
                arrived.Set();
            });
            b.Buy("remove_ads", click);
            bool came = arrived.WaitOne(15000);
            Check(came && sdkThread != mainThread && sdkThread != -1, "callback runs on the SDK's thread, not the main thread",
                  "sdk " + sdkThread + ", main " + mainThread);
            var until = DateTime.UtcNow.AddSeconds(15);
            while (got == null && DateTime.UtcNow < until) { if (b.DispatchPending() == 0) Thread.Sleep(2); }
            Check(got != null && got.IsSuccess && dispatchThread == mainThread, "...and is dispatched on the main thread",
                  "dispatched on " + dispatchThread);
            b.Confirm(click);

            // Garbage collections while the SDK's thread runs managed code:
            // Mono stops every thread it knows with signals (a thread that
            // blocks them froze the process here, and again at exit).
            int calls = 0;
            b.SetCallback(true, json => { Interlocked.Increment(ref calls); GC.KeepAlive(new byte[4096]); });
            for (int i = 0; i < 50; i++)
            {
                b.RequestProducts("coins_100");
                GC.Collect();
                b.DispatchPending();
            }
            until = DateTime.UtcNow.AddSeconds(15);
            while (Volatile.Read(ref calls) < 50 && DateTime.UtcNow < until) { GC.Collect(); Thread.Sleep(2); }
            Check(calls >= 50, "50 callbacks with garbage collections all along: no freeze", calls + " callbacks");

            b.SetCallback(false);
            b.DispatchPending(1000);
            var inbox = new Inbox(b);
            b.Restore();
            var ent = inbox.WaitFor<EntitlementsMessage>(m => m.reason == "restore");
            Check(ent != null && ent.Owns("remove_ads"), "back to polling: Restore gives \"entitlements\" (restore) with remove_ads",
                  ent == null ? "none" : ent.json);
        }
    }

    /// Errors surface as BridgeException with the header's code and the library's message.
    /// A handler that throws (a destroyed panel still subscribed to
    /// MessageReceived) does not keep the "7" from PurchaseReceived, nor
    /// escape DispatchPending; the exception is logged.
    static void ThrowingHandlerScenario()
    {
        Prepare("throwing");
        var logged = new List<string>();
        var oldLog = Bridge.Log;
        Bridge.Log = s => logged.Add(s);
        try
        {
            using (var b = Bridge.Open(Config("throwing")))
            {
                PurchaseMessage got = null;
                b.MessageReceived += m => { throw new InvalidOperationException("a destroyed panel"); };
                b.PurchaseReceived += p => { throw new InvalidOperationException("a second stale handler"); };
                b.PurchaseReceived += p => { got = p; b.Confirm(p.Key); };
                long key = b.Buy("coins_100", 0);
                bool escaped = false;
                var until = DateTime.UtcNow.AddSeconds(15);
                while (got == null && DateTime.UtcNow < until)
                {
                    try { if (b.DispatchPending() == 0) Thread.Sleep(2); }
                    catch (Exception) { escaped = true; break; }
                }
                Check(!escaped && got != null && got.Key == key && got.IsSuccess,
                      "handlers that throw: the grant handler still gets the \"7\", nothing escapes DispatchPending",
                      escaped ? "an exception escaped" : (got == null ? "no 7" : got.json));
                Check(logged.Exists(l => l.Contains("a destroyed panel")) && logged.Exists(l => l.Contains("a second stale handler")),
                      "...and each handler's exception is logged", string.Join(" | ", logged));
            }
        }
        finally { Bridge.Log = oldLog; }
    }

    static void ErrorScenario()
    {
        Prepare("errors");
        string dataDir = Path.Combine(root, "errors", "data");
        Expect(ErrorCode.BadConfig, "an unknown config key: IAP_E_BAD_CONFIG", () =>
            Bridge.Open("{\"store\":\"simulator\",\"dataDir\":" + Json.Quote(dataDir) + ",\"catalog\":" + Json.Quote(catalog) + ",\"colour\":\"red\"}"));
        Expect(ErrorCode.BadConfig, "a relative dataDir: IAP_E_BAD_CONFIG", () => Bridge.Open(BridgeConfig.Simulator("relative/dir", catalog)));
        Expect(ErrorCode.BadJson, "a config that is not JSON: IAP_E_BAD_JSON", () => Bridge.Open("{not json"));
        Expect(ErrorCode.NullArg, "a null config: IAP_E_NULL_ARG", () => Bridge.Open(null));

        var b = Bridge.Open(Config("errors"));
        var busy = Expect(ErrorCode.Busy, "the same dataDir opened again while its Bridge is open: IAP_E_BUSY", () => Bridge.Open(Config("errors")));
        Check(busy != null && busy.LibraryMessage.Contains("still open") && busy.LibraryMessage.Contains("OnDestroy"),
              "...and the message says this process has a Bridge still open, and where to dispose it", busy == null ? "" : busy.LibraryMessage);
        Expect(ErrorCode.InvalidArg, "a product ID with a NUL: IAP_E_INVALID_ARG", () => b.Buy("coins\0_100", 0));
        Expect(ErrorCode.InvalidArg, "a product ID with an unpaired surrogate: IAP_E_INVALID_ARG", () => b.Buy("coins\ud800", 0));
        Expect(ErrorCode.UnknownOp, "Simulator with an unknown op: IAP_E_UNKNOWN_OP", () => b.Simulator("{\"op\":\"teleport\"}"));
        Expect(ErrorCode.BadJson, "RequestProducts with a null ID: IAP_E_BAD_JSON", () => b.RequestProducts("coins_100", null));

        // iap_errmsg is per thread: each thread reads its own failure.
        int mismatches = 0;
        var threads = new List<Thread>();
        for (int t = 0; t < 4; t++)
        {
            long mine = 900000 + t;
            var th = new Thread(() =>
            {
                for (int i = 0; i < 50; i++)
                {
                    try { b.Confirm(mine); Interlocked.Increment(ref mismatches); }
                    catch (BridgeException e)
                    {
                        if (e.Code != ErrorCode.UnknownKey || !e.LibraryMessage.Contains(mine.ToString())) Interlocked.Increment(ref mismatches);
                    }
                }
            });
            threads.Add(th);
            th.Start();
        }
        foreach (var th in threads) th.Join();
        Check(mismatches == 0, "4 threads failing at once each get their own error message", mismatches + " mismatches");

        b.Dispose();
        b.Dispose();
        Expect(ErrorCode.Closed, "a call after Dispose: IAP_E_CLOSED", () => b.Buy("coins_100", 0));
        Check(b.Poll() == null && !b.IsOpen, "Poll after Dispose returns null");
    }

    /// The binding's own JSON reader (Unity's JsonUtility does not exist here).
    static void JsonScenario()
    {
        var v = new JsonObjectView(Json.Parse(" {\"a\":[1,-9223372036854775808,2.5e1,true,null,\"\\u00e9\\ud83d\\udcb0\\n\\\"\\/\"],\"b\":{}} "));
        var a = v.ListRaw("a");
        Check(a.Count == 6 && (long)a[0] == 1 && (long)a[1] == long.MinValue && (double)a[2] == 25.0 && (bool)a[3] &&
              a[4] == null && (string)a[5] == "é💰\n\"/", "JSON reader: numbers, escapes, surrogate pairs");
        int rejected = 0;
        foreach (string bad in new[] { "{\"a\":}", "[1,]", "\"open", "{\"a\" 1}", "tru", "[1] x", "\"\\q\"", "" })
        {
            try { Json.Parse(bad); } catch (FormatException) { rejected++; }
        }
        Check(rejected == 8, "JSON reader: malformed text is a FormatException", rejected + " of 8 rejected");
        string tricky = "quote\" back\\ tab\t nul\0 bell\u0007 עברית 💰";
        Check((string)Json.Parse(Json.Quote(tricky)) == tricky, "Json.Quote round-trips control characters, RTL text and emoji");
        var junk = Message.Parse("not json");
        var future = Message.Parse("{\"type\":\"future_thing\",\"x\":1}");
        Check(junk.type == "" && future.type == "future_thing" && future.GetType() == typeof(Message),
              "Message.Parse never throws; unknown types stay plain Messages");
    }

    /// The example store's own logic (the package sample's Shop.cs): grants
    /// once per key, saves before confirming, and ignores a result delivered
    /// again after a crash between its save and its confirm.
    static void ExampleShopScenario()
    {
        Prepare("shop");
        string config = Shop.SimulatorConfig(Path.Combine(root, "shop", "data"), catalog, Path.Combine(root, "shop", "appstore"));
        string savePath = Path.Combine(root, "shop", "save.txt");

        using (var shop = new Shop(config, savePath))
        {
            Until(shop, () => shop.Products.Length == Shop.ProductIds.Length);
            Check(shop.Products.Length == 4, "example: the shop lists its 4 products", shop.Status);
            shop.Buy("coins_100");
            Until(shop, () => shop.Save.Coins == 100);
            shop.Buy("vip_monthly");
            Until(shop, () => shop.Vip);
            Check(shop.Save.Coins == 100 && shop.Vip && GameSave.Load(savePath).Coins == 100,
                  "example: coins and VIP granted, and saved", shop.Status);

            // The player cancels: the "7" (result "1") grants nothing, its key
            // is not saved, and it is confirmed all the same.
            var inbox = new Inbox(shop.Bridge);
            Sim(shop.Bridge, "cancel_next");
            int mark = inbox.Mark();
            shop.Buy("remove_ads");
            var cancelled = inbox.WaitFor<PurchaseMessage>(m => m.productID == "remove_ads", from: mark);
            Check(cancelled != null && cancelled.result == "1" && !shop.Save.RemoveAds && !shop.Save.WasGranted(cancelled.Key)
                  && !GameSave.Load(savePath).RemoveAds, "example: a cancelled purchase grants nothing and saves no key", Text(cancelled));
            shop.Bridge.Flush();
            if (cancelled != null)
                Expect(ErrorCode.UnknownKey, "example: ...and the cancelled \"7\" was confirmed", () => shop.Bridge.Confirm(cancelled.Key));

            // Bought, then refunded: the "revoked" takes Remove Ads back, once, and is confirmed.
            mark = inbox.Mark();
            shop.Buy("remove_ads");
            var sold = inbox.WaitFor<PurchaseMessage>(m => m.productID == "remove_ads", from: mark);
            Check(sold != null && sold.IsSuccess && shop.Save.RemoveAds && shop.Save.WasGranted(sold.Key),
                  "example: Remove Ads bought and granted", Text(sold));
            if (sold != null)
            {
                Sim(shop.Bridge, "refund", "\"transactionID\":\"" + sold.transactionID + "\"");
                var revoked = inbox.WaitFor<RevokedMessage>(m => m.productID == "remove_ads", from: mark);
                Check(revoked != null && !shop.Save.RemoveAds && shop.Save.WasGranted(revoked.Key) && !GameSave.Load(savePath).RemoveAds
                      && shop.Save.Coins == 100, "example: the refund took Remove Ads back, and saved", Text(revoked));
                shop.Bridge.Flush();
                if (revoked != null)
                    Expect(ErrorCode.UnknownKey, "example: ...and the \"revoked\" was confirmed", () => shop.Bridge.Confirm(revoked.Key));
            }
        }

        // A crash between the game's save and its confirm: the grant is saved,
        // the SDK still holds the result and delivers it again.
        const long click = 1700000009000;
        long key = click;  // the key Buy returns (a fresh one when this click time is already used)
        string txn = "?";
        using (var b = Bridge.Open(config))
        {
            var inbox = new Inbox(b);
            key = b.Buy("coins_100", click);
            var r = inbox.WaitFor<PurchaseMessage>(m => m.Key == key);
            if (r != null) txn = r.transactionID;
            var save = GameSave.Load(savePath);
            save.Coins += 100;
            save.MarkGranted(key);
            save.Save();
            // ...and the game dies here, before Confirm.
        }
        using (var shop = new Shop(config, savePath))
        {
            // The driver listens on the shop's bridge too; dispatching runs the shop's handlers.
            var inbox = new Inbox(shop.Bridge);
            var again = inbox.WaitFor<PurchaseMessage>(m => m.Key == key);
            var ent = inbox.WaitFor<EntitlementsMessage>(m => m.reason == "open");
            var status = inbox.WaitFor<SubscriptionMessage>(m => m.reason == "open");
            Check(again != null && shop.Save.Coins == 200 && GameSave.Load(savePath).Coins == 200,
                  "example: a result delivered again after a crash is not granted twice", shop.Save.Coins + " coins");
            Check(Finished(shop.Bridge, txn), "example: ...but it is confirmed, so the store finishes it");
            Check(ent != null && status != null && shop.Vip && shop.PaymentHint == null,
                  "example: VIP status comes back at start (\"entitlements\" and \"subscription\" at open)");
        }
    }

    /// The sample catalog with Apple's billing grace period enabled
    /// (`_billingGracePeriodEnabled`) and without vip_monthly's free trial
    /// (these scenarios follow a paid monthly renewal; the simulator applies
    /// the trial, a week at price 0), written under `dir`.
    static string GraceCatalog(string dir)
    {
        string text = File.ReadAllText(catalog);
        string edited = text.Replace("\"settings\" : {", "\"settings\" : {\n    \"_billingGracePeriodEnabled\" : true,");
        if (edited == text) throw new Exception("the sample catalog has no \"settings\" : { to edit");
        var trial = new Regex("\"introductoryOffer\" : \\{[^{}]*\"paymentMode\" : \"free\"[^{}]*\\}");
        if (trial.Matches(edited).Count != 1) throw new Exception("the sample catalog's one free trial moved");
        edited = trial.Replace(edited, "\"introductoryOffer\" : null");
        string path = Path.Combine(dir, "Grace.storekit");
        File.WriteAllText(path, edited);
        return path;
    }

    static string Sim(Bridge b, string op, string args = "")
    {
        return b.Simulator("{\"op\":\"" + op + "\"" + (args.Length > 0 ? "," + args : "") + "}");
    }

    static string Text(Message m) { return m == null ? "none" : m.json; }

    const long Day = 86400;

    /// Subscription status (none, subscribed, a billing issue in a grace
    /// period, billing retry, fixed), a StoreKit message held back and shown,
    /// the manage / refund / offer code sheets and the app transaction, through
    /// the binding's calls; each refused after Dispose.
    static void SubscriptionScenario()
    {
        Prepare("subs");
        string dir = Path.Combine(root, "subs");
        string config = BridgeConfig.Simulator(Path.Combine(dir, "data"), GraceCatalog(dir), Path.Combine(dir, "appstore"),
                                               StoreMessages.Defer, "3.2");
        Check(config.Contains(",\"simulator\":{\"stateDir\":") && config.Contains(",\"appVersion\":\"3.2\"}") &&
              config.EndsWith(",\"storeMessages\":\"defer\"}"), "BridgeConfig.Simulator: appVersion and storeMessages", config);
        Check(BridgeConfig.StoreKit("/d", StoreMessages.Defer) == "{\"store\":\"storekit\",\"dataDir\":\"/d\",\"storeMessages\":\"defer\"}" &&
              BridgeConfig.StoreKit("/d") == "{\"store\":\"storekit\",\"dataDir\":\"/d\"}", "BridgeConfig.StoreKit: storeMessages");

        var b = Bridge.Open(config);
        var inbox = new Inbox(b);
        inbox.WaitFor<EntitlementsMessage>(m => m.reason == "open");

        // Never subscribed: state none; IDs that are not auto-renewable are "invalid".
        b.SubscriptionStatus("vip_monthly", "coins_100", "no_such_plan");
        var none = inbox.WaitFor<SubscriptionMessage>(m => m.reason == "request");
        Check(none != null && none.groups.Length == 1 && none.groups[0].state == SubscriptionState.None && !none.groups[0].active &&
              none.groups[0].productID == "" && none.invalid.Length == 2 && none.invalid[0] == "coins_100" && none.invalid[1] == "no_such_plan",
              "SubscriptionStatus before any purchase: state none, not active; coins_100 and an unknown ID in invalid", Text(none));

        // Subscribe: a "change" with the renewal's date, product and price.
        int mark = inbox.Mark();
        long key = b.Buy("vip_monthly", 0);
        var bought = inbox.WaitFor<PurchaseMessage>(m => m.Key == key, from: mark);
        if (bought != null) b.Confirm(key);
        var change = inbox.WaitFor<SubscriptionMessage>(m => m.reason == "change", from: mark);
        var g = change == null || change.groups.Length == 0 ? null : change.groups[0];
        Check(bought != null && g != null && g.state == SubscriptionState.Subscribed && g.active && g.willAutoRenew && g.verified &&
              g.productID == "vip_monthly" && g.transactionID == bought.transactionID && g.renewalProductID == "vip_monthly" &&
              g.renewalPrice == "2.99" && g.currency == "USD" && g.expiresDate > 0 && g.renewalDate == g.expiresDate &&
              g.expirationReason == null && g.gracePeriodExpiresDate == 0 && g.priceIncreaseStatus == "noIncreasePending" && !g.HasBillingIssue,
              "after Buy: a \"subscription\" change, subscribed and active, renewing at 2.99 on its expiry date", Text(change));
        string group = g == null ? "?" : g.groupID;

        mark = inbox.Mark();
        b.SubscriptionStatus();
        var all = inbox.WaitFor<SubscriptionMessage>(m => m.reason == "request", from: mark);
        Check(all != null && all.groups.Length == 1 && all.Find(group) != null && all.Find(group).state == SubscriptionState.Subscribed &&
              all.invalid.Length == 0 && all.Find("no_such_group") == null,
              "SubscriptionStatus() with no IDs: every group the player subscribed in", Text(all));

        // The payment method fails: StoreKit's message is held (storeMessages "defer").
        mark = inbox.Mark();
        Sim(b, "billing_issue", "\"productID\":\"vip_monthly\"");
        var held = inbox.WaitFor<StoreMessage>(m => true, from: mark);
        Check(held != null && held.IsDeferred && held.reason == "billingIssue" && held.id.Length > 0 &&
              inbox.Count<StoreMessage>(m => m.state == "shown", mark) == 0,
              "billing_issue with storeMessages defer: a \"storeMessage\" billingIssue, deferred, nothing shown", Text(held));

        // The renewal date passes: the grace period keeps access, nothing is charged.
        mark = inbox.Mark();
        Sim(b, "advance", "\"seconds\":" + 32 * Day);
        var inGrace = inbox.WaitFor<SubscriptionMessage>(m => m.Find(group) != null && m.Find(group).state == SubscriptionState.InGracePeriod, from: mark);
        var gg = inGrace == null ? null : inGrace.Find(group);
        Check(gg != null && gg.active && gg.HasBillingIssue && gg.willAutoRenew && gg.gracePeriodExpiresDate > gg.expiresDate &&
              inbox.Count<PurchaseMessage>(m => true, mark) == 0,
              "32 days later: inGracePeriod, still active, grace ends after the period did, no renewal charged", Text(inGrace));

        // The game shows the held message at a calm moment; once.
        mark = inbox.Mark();
        b.ShowStoreMessages();
        var shown = inbox.WaitFor<StoreMessage>(m => m.state == "shown", from: mark);
        Check(shown != null && held != null && shown.id == held.id && shown.reason == "billingIssue" && !shown.IsDeferred,
              "ShowStoreMessages: the held message, state shown", Text(shown));
        mark = inbox.Mark();
        b.ShowStoreMessages();
        inbox.Pump(200);
        Check(inbox.Count<StoreMessage>(m => true, mark) == 0, "ShowStoreMessages again: nothing (a message is shown once)");

        // The grace period ends unpaid: billing retry, no access.
        mark = inbox.Mark();
        Sim(b, "advance", "\"seconds\":" + 20 * Day);
        var retry = inbox.WaitFor<SubscriptionMessage>(m => m.Find(group) != null && m.Find(group).state == SubscriptionState.InBillingRetryPeriod, from: mark);
        var rg = retry == null ? null : retry.Find(group);
        Check(rg != null && !rg.active && rg.HasBillingIssue && rg.willAutoRenew,
              "20 days later: inBillingRetryPeriod, not active, Apple still trying", Text(retry));

        // The player fixes the payment method: a renewal "7" and subscribed again.
        mark = inbox.Mark();
        Sim(b, "billing_resolve", "\"productID\":\"vip_monthly\"");
        var renewal = inbox.WaitFor<PurchaseMessage>(m => m.productID == "vip_monthly" && m.origin == "store", from: mark);
        if (renewal != null) b.Confirm(renewal.Key);
        var back = inbox.WaitFor<SubscriptionMessage>(m => m.Find(group) != null && m.Find(group).state == SubscriptionState.Subscribed, from: mark);
        Check(renewal != null && renewal.IsSuccess && renewal.Key < 0 && back != null && back.Find(group).active &&
              back.Find(group).gracePeriodExpiresDate == 0 && back.Find(group).transactionID == renewal.transactionID,
              "billing_resolve: a store-initiated renewal \"7\", subscribed and active again", Text(renewal) + " " + Text(back));

        // Manage subscriptions: the player turns auto-renew off.
        Sim(b, "sheet_next", "\"sheet\":\"manageSubscriptions\",\"outcome\":\"cancel\",\"productID\":\"vip_monthly\"");
        mark = inbox.Mark();
        b.ManageSubscriptions();
        var manage = inbox.WaitFor<SheetMessage>(m => true, from: mark);
        var off = inbox.WaitFor<SubscriptionMessage>(m => m.Find(group) != null && !m.Find(group).willAutoRenew, from: mark);
        Check(manage != null && manage.sheet == SheetKind.ManageSubscriptions && manage.outcome == SheetOutcome.Dismissed &&
              manage.transactionID == null, "ManageSubscriptions: a \"sheet\" manageSubscriptions, dismissed", Text(manage));
        Check(off != null && off.Find(group).state == SubscriptionState.Subscribed && off.Find(group).active &&
              off.Find(group).expirationReason == "autoRenewDisabled" && off.Find(group).renewalDate == 0 && off.Find(group).renewalPrice == null,
              "...auto-renew turned off in it: still subscribed, expirationReason autoRenewDisabled, no renewal", Text(off));

        // Refund: cancelled by the player, then submitted and granted ("revoked").
        long adsKey = b.Buy("remove_ads", 0);
        var ads = inbox.WaitFor<PurchaseMessage>(m => m.Key == adsKey);
        string txn = ads == null ? "0" : ads.transactionID;
        if (ads != null) b.Confirm(adsKey);
        Sim(b, "sheet_next", "\"sheet\":\"refund\",\"outcome\":\"cancel\"");
        mark = inbox.Mark();
        b.RequestRefund(txn);
        var cancelled = inbox.WaitFor<SheetMessage>(m => true, from: mark);
        inbox.Pump(100);
        Check(cancelled != null && cancelled.sheet == SheetKind.Refund && cancelled.outcome == SheetOutcome.UserCancelled &&
              cancelled.transactionID == txn && inbox.Count<RevokedMessage>(m => true, mark) == 0,
              "RequestRefund, the player cancels: \"sheet\" refund userCancelled, nothing revoked", Text(cancelled));
        mark = inbox.Mark();
        b.RequestRefund(txn);
        var submitted = inbox.WaitFor<SheetMessage>(m => true, from: mark);
        var revoked = inbox.WaitFor<RevokedMessage>(m => m.transactionID == txn, from: mark);
        Check(submitted != null && submitted.outcome == SheetOutcome.Success && submitted.transactionID == txn,
              "RequestRefund: \"sheet\" refund success for the transaction", Text(submitted));
        Check(revoked != null && revoked.productID == "remove_ads" && revoked.reason == "refunded",
              "...and Apple's refund arrives as a \"revoked\" to take back and confirm", Text(revoked));
        if (revoked != null) b.Confirm(revoked.Key);
        mark = inbox.Mark();
        b.RequestRefund("123");
        var unknown = inbox.WaitFor<SheetMessage>(m => true, from: mark);
        Check(unknown != null && unknown.outcome == SheetOutcome.Error && unknown.message.Contains("123"),
              "RequestRefund of a transaction the player does not have: outcome error, with a message", Text(unknown));
        Expect(ErrorCode.InvalidArg, "RequestRefund(\"12a\"): IAP_E_INVALID_ARG", () => b.RequestRefund("12a"));
        Expect(ErrorCode.NullArg, "RequestRefund(null): IAP_E_NULL_ARG", () => b.RequestRefund(null));
        Expect(ErrorCode.InvalidArg, "SubscriptionStatus(\"\"): IAP_E_INVALID_ARG", () => b.SubscriptionStatus(""));
        Expect(ErrorCode.BadJson, "SubscriptionStatus with a null ID: IAP_E_BAD_JSON", () => b.SubscriptionStatus("vip_monthly", null));

        // One sheet at a time: the player keeps the manage sheet up ("hold")
        // until sheet_close; meanwhile every sheet call is IAP_E_BUSY.
        Sim(b, "sheet_next", "\"sheet\":\"manageSubscriptions\",\"outcome\":\"hold\"");
        mark = inbox.Mark();
        b.ManageSubscriptions();
        Expect(ErrorCode.Busy, "RedeemOfferCode while the manage sheet is up: IAP_E_BUSY", () => b.RedeemOfferCode());
        Expect(ErrorCode.Busy, "RequestRefund while the manage sheet is up: IAP_E_BUSY", () => b.RequestRefund(txn));
        Expect(ErrorCode.Busy, "ManageSubscriptions while the manage sheet is up: IAP_E_BUSY", () => b.ManageSubscriptions());
        inbox.Pump(100);
        Check(inbox.Count<SheetMessage>(m => true, mark) == 0, "...and no \"sheet\" while it is up");
        Sim(b, "sheet_close");
        var closed = inbox.WaitFor<SheetMessage>(m => true, from: mark);
        Check(closed != null && closed.sheet == SheetKind.ManageSubscriptions && closed.outcome == SheetOutcome.Dismissed &&
              inbox.Count<SheetMessage>(m => true, mark) == 1, "sheet_close: one \"sheet\" manageSubscriptions, dismissed", Text(closed));

        // An offer code redeemed: a store-initiated "7", granted and confirmed like any.
        Sim(b, "sheet_next", "\"sheet\":\"offerCode\",\"outcome\":\"redeem\",\"productID\":\"coins_100\"");
        mark = inbox.Mark();
        b.RedeemOfferCode();
        var code = inbox.WaitFor<PurchaseMessage>(m => m.productID == "coins_100", from: mark);
        var codeSheet = inbox.WaitFor<SheetMessage>(m => true, from: mark);
        Check(code != null && code.IsSuccess && code.origin == "store" && code.Key < 0 && codeSheet != null &&
              codeSheet.sheet == SheetKind.OfferCode && codeSheet.outcome == SheetOutcome.Dismissed,
              "RedeemOfferCode, a code redeemed: a \"7\" with origin store, then \"sheet\" offerCode dismissed", Text(code) + " " + Text(codeSheet));
        if (code != null) b.Confirm(code.Key);

        // The app transaction: the version the simulated player first got, then one set by the op.
        mark = inbox.Mark();
        b.AppTransaction();
        var app = inbox.WaitFor<AppTransactionMessage>(m => true, from: mark);
        Check(app != null && app.error == null && app.verified && app.originalAppVersion == "3.2" && app.appVersion == "3.2" &&
              app.environment == "simulator" && app.originalPurchaseDate > 0,
              "AppTransaction: an \"app\" with the configured appVersion, verified", Text(app));
        Sim(b, "app_transaction", "\"originalAppVersion\":\"1.0\",\"purchaseDate\":1500000000000");
        mark = inbox.Mark();
        b.AppTransaction();
        var early = inbox.WaitFor<AppTransactionMessage>(m => true, from: mark);
        Check(early != null && early.originalAppVersion == "1.0" && early.originalPurchaseDate == 1500000000000 && early.appVersion == "3.2",
              "app_transaction op: the player first got 1.0 (in 2017); the running version stays 3.2", Text(early));

        b.Dispose();
        Expect(ErrorCode.Closed, "SubscriptionStatus after Dispose: IAP_E_CLOSED", () => b.SubscriptionStatus());
        Expect(ErrorCode.Closed, "AppTransaction after Dispose: IAP_E_CLOSED", () => b.AppTransaction());
        Expect(ErrorCode.Closed, "ManageSubscriptions after Dispose: IAP_E_CLOSED", () => b.ManageSubscriptions());
        Expect(ErrorCode.Closed, "RequestRefund after Dispose: IAP_E_CLOSED", () => b.RequestRefund(txn));
        Expect(ErrorCode.Closed, "RedeemOfferCode after Dispose: IAP_E_CLOSED", () => b.RedeemOfferCode());
        Expect(ErrorCode.Closed, "ShowStoreMessages after Dispose: IAP_E_CLOSED", () => b.ShowStoreMessages());
    }

    /// The default ("storeMessages": "show"): StoreKit's message is shown at
    /// once, never deferred; ShowStoreMessages has nothing to show.
    static void StoreMessagesShownScenario()
    {
        Prepare("shown");
        using (var b = Bridge.Open(Config("shown")))
        {
            var inbox = new Inbox(b);
            long key = b.Buy("vip_monthly", 0);
            var r = inbox.WaitFor<PurchaseMessage>(m => m.Key == key);
            if (r != null) b.Confirm(key);
            int mark = inbox.Mark();
            Sim(b, "billing_issue", "\"productID\":\"vip_monthly\"");
            var m1 = inbox.WaitFor<StoreMessage>(m => true, from: mark);
            b.ShowStoreMessages();
            inbox.Pump(200);
            Check(m1 != null && m1.state == "shown" && m1.reason == "billingIssue" && inbox.Count<StoreMessage>(m => true, mark) == 1,
                  "storeMessages show (default): the billing issue's message shown at once, once", Text(m1));
        }
    }

    /// The example's subscription features (Shop.cs): premium for early
    /// buyers, VIP kept through a grace period with a payment hint, StoreKit
    /// messages held until the menu, the manage and offer code sheets.
    static void ExampleSubscriptionScenario()
    {
        Prepare("shop-vip");
        string dir = Path.Combine(root, "shop-vip");
        string config = Shop.SimulatorConfig(Path.Combine(dir, "data"), GraceCatalog(dir), Path.Combine(dir, "appstore"));
        string savePath = Path.Combine(dir, "save.txt");
        Check(Shop.VersionBefore("1.9.3", "2.0") && Shop.VersionBefore("2", "2.0.1") && !Shop.VersionBefore("2.0", "2.0") &&
              !Shop.VersionBefore("10.0", "9.1") && Shop.VersionBefore("9.1", "10.0"), "example: VersionBefore compares number by number");

        using (var shop = new Shop(config, savePath))
        {
            var inbox = new Inbox(shop.Bridge);
            var app = inbox.WaitFor<AppTransactionMessage>(m => true);
            Check(app != null && app.originalAppVersion == Shop.SimulatedGameVersion && !shop.Save.Premium,
                  "example: a player who first got version 2.1 (free) has no premium unlock", Text(app));
            Sim(shop.Bridge, "app_transaction", "\"originalAppVersion\":\"1.4\"");
            shop.CheckPremium();
            Until(shop, () => shop.Save.Premium);
            Check(shop.Save.Premium && GameSave.Load(savePath).Premium, "example: a player who first got 1.4 (paid) gets premium, saved", shop.Status);

            shop.Buy("vip_monthly");
            Until(shop, () => shop.Vip);
            Sim(shop.Bridge, "billing_issue", "\"productID\":\"vip_monthly\"");
            Until(shop, () => shop.StoreMessagesWaiting == 1);
            Check(shop.StoreMessagesWaiting == 1 && inbox.Count<StoreMessage>(m => m.state == "shown") == 0,
                  "example: the billing issue's StoreKit message waits for the menu", shop.StoreMessagesWaiting + " waiting");
            Sim(shop.Bridge, "advance", "\"seconds\":" + 32 * Day);
            Until(shop, () => shop.PaymentHint != null);
            Check(shop.Vip && shop.PaymentHint != null && shop.PaymentHint.Contains("keep VIP"),
                  "example: VIP kept in the billing grace period, with a fix-your-payment hint", shop.PaymentHint ?? "no hint");
            int mark = inbox.Mark();
            shop.ShowStoreMessages();
            var shown = inbox.WaitFor<StoreMessage>(m => m.state == "shown", from: mark);
            Check(shown != null && shop.StoreMessagesWaiting == 0, "example: the menu shows the held message", Text(shown));
            Sim(shop.Bridge, "advance", "\"seconds\":" + 20 * Day);
            Until(shop, () => !shop.Vip);
            Check(!shop.Vip && shop.PaymentHint != null && shop.PaymentHint.Contains("paused"),
                  "example: billing retry after the grace period: VIP paused, the hint says so", shop.PaymentHint ?? "no hint");

            mark = inbox.Mark();
            shop.ManageSubscription();
            var sheet = inbox.WaitFor<SheetMessage>(m => true, from: mark);
            Check(sheet != null && sheet.sheet == SheetKind.ManageSubscriptions && shop.Status == "Back in the game.",
                  "example: Manage subscription opens the sheet; closed, back in the game", shop.Status);
            Sim(shop.Bridge, "sheet_next", "\"sheet\":\"manageSubscriptions\",\"outcome\":\"hold\"");
            shop.ManageSubscription();
            shop.RedeemOfferCode();
            Check(shop.Status == "Close the App Store sheet first.", "example: a second sheet while one is up is refused in words", shop.Status);
            mark = inbox.Mark();
            Sim(shop.Bridge, "sheet_close");
            inbox.WaitFor<SheetMessage>(m => true, from: mark);
            long coins = shop.Save.Coins;
            Sim(shop.Bridge, "sheet_next", "\"sheet\":\"offerCode\",\"outcome\":\"redeem\",\"productID\":\"coins_100\"");
            shop.RedeemOfferCode();
            Until(shop, () => shop.Save.Coins == coins + 100);
            Check(shop.Save.Coins == coins + 100 && GameSave.Load(savePath).Coins == coins + 100,
                  "example: an offer code's coins are granted from its \"7\" and saved", shop.Status);
        }

        // Next start: the status at open says VIP is still paused.
        using (var shop = new Shop(config, savePath))
        {
            var inbox = new Inbox(shop.Bridge);
            var open = inbox.WaitFor<SubscriptionMessage>(m => m.reason == "open");
            inbox.WaitFor<EntitlementsMessage>(m => m.reason == "open");
            Check(open != null && !shop.Vip && shop.PaymentHint != null && shop.Save.Premium,
                  "example: at the next start VIP is still paused (\"subscription\" at open); premium stays", Text(open));
            Until(shop, () => shop.StoreMessagesWaiting == 1);
            Check(shop.StoreMessagesWaiting == 1, "example: the unfixed billing issue's message comes again at the next start, held for the menu",
                  shop.StoreMessagesWaiting + " waiting");
            inbox.Pump(200);
            Check(inbox.Count<AppTransactionMessage>(m => true) == 0, "example: premium already saved: the app transaction is not asked again");
        }
    }

    /// Unity's script reload with a bridge open: an AppDomain opens a bridge
    /// in callback mode (the SDK's thread calls into that domain), buys,
    /// receives the "7" and does not confirm; the domain is unloaded with the
    /// bridge open and messages still flowing. The binding's DomainUnload
    /// handler must close it (iap_close joins the callback thread, so nothing
    /// calls into the dead domain); a second domain then opens the same
    /// dataDir (IAP_E_BUSY if the first bridge were still open), receives the
    /// unconfirmed result again and confirms it.
    static void DomainUnloadScenario()
    {
        Prepare("domain");
        string config = Config("domain");

        var first = AppDomain.CreateDomain("iap-session-1", null, AppDomain.CurrentDomain.SetupInformation);
        first.SetData("config", config);
        first.DoCallBack(DomainSession.BuyAndLeaveOpen);
        var error = (string)first.GetData("error");
        var key = first.GetData("key");
        var txn = (string)first.GetData("txn");
        var callbacks = first.GetData("callbacks");
        Check(error == null && key is long && (long)key > 0 && txn != null,
              "domain 1: bridge open in callback mode, \"7\" received through the SDK's thread, not confirmed",
              error ?? "key " + key);
        Check(callbacks is int && (int)callbacks > 0, "domain 1: the SDK's thread called into the domain", "" + callbacks);
        // A bridge left open keeps an SDK thread inside the domain: Mono's
        // unload then never finishes. Fail in 60 s rather than hang.
        Exception unloadError = null;
        var unloader = new Thread(() => { try { AppDomain.Unload(first); } catch (Exception e) { unloadError = e; } });
        unloader.IsBackground = true;
        unloader.Start();
        if (!unloader.Join(60000))
        {
            Fail("domain 1 unloaded with its bridge open", "AppDomain.Unload did not return within 60 s (was the bridge closed?)");
            Console.WriteLine("mono: " + passed + " passed, " + failed + " failed");
            Environment.Exit(1);
        }
        Check(unloadError == null, "domain 1 unloaded with its bridge open and messages flowing: no crash, no hang",
              unloadError == null ? "" : unloadError.ToString());
        Thread.Sleep(300); // an SDK thread still calling into the dead domain would crash the process here

        var second = AppDomain.CreateDomain("iap-session-2", null, AppDomain.CurrentDomain.SetupInformation);
        second.SetData("config", config);
        second.SetData("key", key is long ? (long)key : 0L);
        second.DoCallBack(DomainSession.ReceiveAgainAndConfirm);
        error = (string)second.GetData("error");
        Check(error == null, "domain 2: the same dataDir opens (domain 1's bridge was closed by the unload handler)", error ?? "");
        Check(error == null && (string)second.GetData("txn") == txn,
              "domain 2: the unconfirmed result is delivered again (same transaction) and confirmed", error ?? "");
        AppDomain.Unload(second);

        using (var b = Bridge.Open(config))
        {
            var inbox = new Inbox(b);
            var ent = inbox.WaitFor<EntitlementsMessage>(m => m.reason == "open");
            inbox.Pump(200);
            Check(ent != null && inbox.Count<PurchaseMessage>(m => true) == 0 && Finished(b, txn),
                  "after both domains: nothing delivered again, the store transaction is finished", inbox.All.Count + " messages");
        }
    }

    /// A script reload while a worker thread of the game opens and disposes
    /// bridges (Task.Run(() => Bridge.Open(...))): the unload aborts that
    /// thread wherever it is. A bridge opened natively but not yet
    /// registered with the binding (or unregistered, not yet closed) stayed
    /// open, and every later Open of the dataDir answered IAP_E_BUSY until
    /// the process ended (found by an attack: 4 runs of 4). Each round
    /// unloads the domain at a different moment of the loop; the dataDir
    /// must open at once after each.
    static void ReloadDuringOpenScenario()
    {
        Prepare("reload-open");
        string config = Config("reload-open");
        int rounds = 12, reopened = 0, loops = 0;
        string failure = null;
        for (int i = 0; i < rounds && failure == null; i++)
        {
            var dom = AppDomain.CreateDomain("iap-reload-" + i, null, AppDomain.CurrentDomain.SetupInformation);
            dom.SetData("config", config);
            dom.DoCallBack(DomainSession.OpenAndDisposeInALoop);
            Thread.Sleep(60 + (i * 13) % 70);
            object n = dom.GetData("opens");
            string err = (string)dom.GetData("error");
            AppDomain.Unload(dom);
            if (err != null) { failure = "round " + i + ": the loop failed: " + err; break; }
            if (n is int) loops += (int)n;
            try { Bridge.Open(config).Dispose(); reopened++; }
            catch (BridgeException e) { failure = "round " + i + ": after the unload: " + e.CodeName + ": " + e.Message; }
        }
        Check(failure == null && reopened == rounds && loops > rounds,
              "a script reload during a worker's Open/Dispose loop leaves no bridge open: the dataDir opens after each of " + rounds + " unloads",
              failure ?? (reopened + " of " + rounds + " reopened, " + loops + " opens in the loops"));
    }

    /// Runs inside the AppDomains of DomainUnloadScenario (statics there are the domain's own).
    static class DomainSession
    {
        public static void BuyAndLeaveOpen()
        {
            var d = AppDomain.CurrentDomain;
            try
            {
                var b = Bridge.Open((string)d.GetData("config"));
                int calls = 0;
                b.SetCallback(true, json => Interlocked.Increment(ref calls));
                long key = b.Buy("coins_100", 0);
                PurchaseMessage got = null;
                b.PurchaseReceived += m => { if (m.Key == key) got = m; };
                var until = DateTime.UtcNow.AddSeconds(15);
                while (got == null && DateTime.UtcNow < until) { if (b.DispatchPending() == 0) Thread.Sleep(2); }
                if (got == null || !got.IsSuccess) throw new Exception("no successful \"7\" for key " + key);
                // Keep the SDK's thread busy calling into this domain while it unloads.
                for (int i = 0; i < 20; i++) b.RequestProducts("coins_100", "remove_ads");
                d.SetData("key", key);
                d.SetData("txn", got.transactionID);
                d.SetData("callbacks", Volatile.Read(ref calls));
                // No Confirm, no Dispose: the domain is unloaded with the bridge open.
            }
            catch (Exception e) { d.SetData("error", e.ToString()); }
        }

        public static void OpenAndDisposeInALoop()
        {
            var d = AppDomain.CurrentDomain;
            string config = (string)d.GetData("config");
            var t = new Thread(() =>
            {
                int n = 0;
                try
                {
                    while (true)
                    {
                        Bridge.Open(config).Dispose();
                        d.SetData("opens", ++n);
                    }
                }
                catch (ThreadAbortException) { throw; }
                catch (BridgeException e) when (e.Code == ErrorCode.Closed) { }  // the domain is unloading
                catch (Exception e) { d.SetData("error", e.ToString()); }
            });
            t.IsBackground = true;
            t.Start();
        }

        public static void ReceiveAgainAndConfirm()
        {
            var d = AppDomain.CurrentDomain;
            try
            {
                long key = (long)d.GetData("key");
                using (var b = Bridge.Open((string)d.GetData("config")))
                {
                    PurchaseMessage got = null;
                    b.PurchaseReceived += m => { if (m.Key == key) got = m; };
                    var until = DateTime.UtcNow.AddSeconds(15);
                    while (got == null && DateTime.UtcNow < until) { if (b.DispatchPending() == 0) Thread.Sleep(2); }
                    if (got == null) throw new Exception("the unconfirmed result for key " + key + " was not delivered again");
                    b.Confirm(key);
                    b.Flush();
                    d.SetData("txn", got.transactionID);
                }
            }
            catch (Exception e) { d.SetData("error", e.ToString()); }
        }
    }

    /// Unity's play-mode entry with domain reload off: UnityLifecycle calls
    /// Bridge.ResetStatics (internal; reached by reflection here), which must
    /// close what the last session left open and set Log back to its default.
    static void PlayModeResetScenario()
    {
        Prepare("playmode");
        string config = Config("playmode");
        var reset = typeof(Bridge).GetMethod("ResetStatics", System.Reflection.BindingFlags.NonPublic | System.Reflection.BindingFlags.Static);
        if (!Check(reset != null, "Bridge.ResetStatics exists (UnityLifecycle calls it at SubsystemRegistration)")) return;
        var defaultLog = Bridge.Log;
        var leftOpen = Bridge.Open(config);
        leftOpen.SetCallback(true);
        leftOpen.RequestProducts("coins_100");
        Bridge.Log = s => { };
        reset.Invoke(null, null);
        Check(!leftOpen.IsOpen && Bridge.Log == defaultLog, "play-mode entry: the last session's bridge is closed, Log is the default again");
        try
        {
            using (var b = Bridge.Open(config)) Check(b.IsOpen, "play-mode entry: the same dataDir opens again");
        }
        catch (BridgeException e) { Fail("play-mode entry: the same dataDir opens again", e.Message); }
        Expect(ErrorCode.Closed, "the last session's bridge refuses calls: IAP_E_CLOSED", () => leftOpen.Buy("coins_100", 0));
    }

    static void Until(Shop shop, Func<bool> done)
    {
        var until = DateTime.UtcNow.AddSeconds(15);
        while (!done() && DateTime.UtcNow < until) { shop.Update(); Thread.Sleep(2); }
    }

    /// Reads the plain objects Json.Parse returns, for the checks above.
    struct JsonObjectView
    {
        readonly Dictionary<string, object> d;
        public JsonObjectView(object o) { d = (Dictionary<string, object>)o; }
        public List<object> ListRaw(string k) { return (List<object>)d[k]; }
        public List<Dictionary<string, object>> List(string k)
        {
            var l = new List<Dictionary<string, object>>();
            foreach (var o in ListRaw(k)) l.Add((Dictionary<string, object>)o);
            return l;
        }
    }
}
