// IAPBridge for Unity (and any .NET/Mono host): one open bridge to the store.
//
//   var bridge = Bridge.Open(BridgeConfig.Simulator(dataDir, catalog, stateDir));
//   bridge.PurchaseReceived += p => { grant once per p.Key; save; bridge.Confirm(p.Key); };
//   bridge.RequestProducts("coins_100", "remove_ads");
//   void Update() { bridge.DispatchPending(); }      // every frame, on the main thread
//   long key = bridge.Buy("coins_100", clickMs);     // the result arrives as a "7"
//   bridge.SubscriptionReceived += s => { var g = s.Find(vipGroupId); if (g != null) vip = g.active; };
//   bridge.Dispose();                                 // OnDestroy / OnApplicationQuit
//
// Threads: every method may be called from any thread. Events are raised by
// DispatchPending on the thread that calls it (Update: Unity's main thread),
// whether messages were polled or came through the SDK's callback.
//
// Lifetime: a domain unload (Unity's script reload, leaving Play mode with
// domain reload on), play-mode entry with domain reload off (UnityLifecycle.cs)
// and process exit dispose every bridge still open, so its dataDir is free for
// the next Open and no SDK thread calls into a domain that is gone.
// No native library for the platform: the first call says so once through
// Bridge.Log and throws BridgeException(ErrorCode.NotSupported), as does every
// call after it (NativeLibrary.cs).
using System;
using System.Collections.Generic;
using System.Runtime.InteropServices;
using System.Threading;

namespace IAPBridge
{
    public sealed class Bridge : IDisposable
    {
        private IntPtr handle;
        private readonly int id;
        private readonly object gate = new object();
        // Messages the SDK's callback handed over, waiting for the main thread.
        private readonly Queue<string> fromSdk = new Queue<string>();
        private bool callbackMode;
        private Action<string> onSdkThread;

        /// Every message, typed (an unknown type arrives as a plain Message).
        public event Action<Message> MessageReceived;
        public event Action<ProductsMessage> ProductsReceived;
        public event Action<PurchaseMessage> PurchaseReceived;
        public event Action<PendingMessage> PendingReceived;
        public event Action<EntitlementsMessage> EntitlementsReceived;
        public event Action<RevokedMessage> RevokedReceived;
        public event Action<ErrorMessage> ErrorReceived;
        public event Action<OutboxDamagedMessage> OutboxDamagedReceived;
        /// "subscription": the status of subscription groups (at open, on
        /// SubscriptionStatus, on change).
        public event Action<SubscriptionMessage> SubscriptionReceived;
        /// "app": the answer to AppTransaction.
        public event Action<AppTransactionMessage> AppTransactionReceived;
        /// "sheet": a sheet the game opened (ManageSubscriptions, RequestRefund,
        /// RedeemOfferCode) was closed.
        public event Action<SheetMessage> SheetClosed;
        /// "storeMessage": StoreKit has a message for the player (shown, or
        /// deferred until ShowStoreMessages).
        public event Action<StoreMessage> StoreMessageReceived;

        /// Where the binding reports what it cannot throw (an exception in an
        /// onSdkThread hook) and, once, a missing native library. Unity: the
        /// console (Debug.LogWarning); elsewhere: standard error. Play-mode
        /// entry sets it back to that default.
        public static Action<string> Log = DefaultLog;

        private static void DefaultLog(string s)
        {
#if UNITY_5_3_OR_NEWER
            UnityEngine.Debug.LogWarning(s);
#else
            Console.Error.WriteLine(s);
#endif
        }

        /// The library's version, e.g. "1.1.0". Throws BridgeException
        /// (NotSupported) when no native library can be loaded.
        public static string Version
        {
            get
            {
                NativeLibrary.Require();
                return Utf8.FromNative(Native.iap_version());
            }
        }

        /// The library's version as major * 10000 + minor * 100 + patch (10100).
        public static int VersionNumber
        {
            get
            {
                NativeLibrary.Require();
                return Native.iap_version_number();
            }
        }

        /// iap_launch: listens, for the life of the process, for purchases the
        /// player starts on the App Store page (iOS 16.4+, macOS 14.4+), so
        /// that one arriving before the first Open is not missed; each open
        /// StoreKit bridge then announces it (a PromotedMessage through
        /// MessageReceived). The package
        /// calls it before the first scene loads on iOS and macOS players.
        /// Returns ErrorCode.Ok, or ErrorCode.NotSupported where there is
        /// nothing to listen to (harmless). Throws BridgeException
        /// (NotSupported) when no native library can be loaded.
        public static int Launch()
        {
            NativeLibrary.Require();
            return Native.iap_launch();
        }

        private Bridge(IntPtr h, int id)
        {
            handle = h;
            this.id = id;
        }

        /// Opens a bridge (see BridgeConfig for the JSON). Unconfirmed results
        /// of earlier runs are queued again at once. Throws BridgeException.
        public static Bridge Open(string configJson)
        {
            NativeLibrary.Require();
            byte[] cfg = Utf8.ToNative(configJson, "configJson");
            IntPtr h = IntPtr.Zero;
            int rc = ErrorCode.Ok;
            Bridge b = null;
            // In a finally: Mono delivers no thread abort inside one. A script
            // reload aborts every thread of the domain after its unload
            // handler closed the bridges it knows; a native bridge opened but
            // not yet registered would stay open, holding the dataDir, until
            // the editor quits (IAP_E_BUSY at every later Open).
            try { }
            finally
            {
                rc = Native.iap_open(cfg, out h);
                if (rc == ErrorCode.Ok)
                {
                    lock (Registry)
                    {
                        if (!closingAll)
                        {
                            b = new Bridge(h, ++nextId);
                            Registry[b.id] = b;
                        }
                    }
                    // The domain is being unloaded: nothing may stay open behind it.
                    if (b == null) Native.iap_close(h);
                }
            }
            if (rc == ErrorCode.Busy)
            {
                string text = Utf8.FromNative(Native.iap_errmsg());
                int open;
                lock (Registry) open = Registry.Count;
                // The common cause in Unity: a Bridge of this game still open
                // (opened in Awake, never disposed; a scene loaded again).
                if (open > 0)
                    text += " (this process has " + open + " Bridge" + (open == 1 ? "" : "s") + " still open: dispose a Bridge when its owner is destroyed (OnDestroy), or keep one Bridge for the whole game)";
                throw new BridgeException(rc, text);
            }
            Check(rc);
            if (b == null) throw new BridgeException(ErrorCode.Closed, "the scripting domain is unloading");
            var probe = TestHooks.Probe;
            if (probe != null) probe.Opened(b);
            return b;
        }

        public bool IsOpen { get { return Handle != IntPtr.Zero; } }

        /// Asks for product information; the answer arrives as ProductsReceived ("999").
        public void RequestProducts(params string[] ids)
        {
            Check(Native.iap_request_products(Live(), Utf8.ToNative(JsonArray(ids), "product IDs")));
        }

        /// ["a","b"] for {"a", "b"}; null for null. A null ID becomes JSON null,
        /// which the library refuses (IAP_E_BAD_JSON).
        private static string JsonArray(string[] ids)
        {
            if (ids == null) return null;
            var parts = new string[ids.Length];
            for (int i = 0; i < ids.Length; i++) parts[i] = Json.Quote(ids[i]);
            return "[" + string.Join(",", parts) + "]";
        }

        /// Starts a purchase. `clickMs` is the wall-clock time of the
        /// player's click in Unix milliseconds
        /// (DateTimeOffset.UtcNow.ToUnixTimeMilliseconds()) and becomes the
        /// purchase's key when it is above every key handed out before; an
        /// engine clock (Time.time) or <= 0 gets a fresh key from the SDK.
        /// Returns the key used: save that one. The result arrives as PurchaseReceived ("7")
        /// with that key, also after a crash and restart if the store charged
        /// it (a crash before anyone paid leaves the key with no result).
        public long Buy(string productId, long clickMs)
        {
            byte[] pid = Utf8.ToNative(productId, "productId");
            long key;
            Check(Native.iap_buy(Live(), pid, clickMs, out key));
            return key;
        }

        /// Buy for `quantity` units (1 to 10) of a consumable in one purchase:
        /// the PurchaseReceived carries the quantity and the price of all of
        /// them; grant that many.
        public long BuyQuantity(string productId, int quantity, long clickMs)
        {
            byte[] pid = Utf8.ToNative(productId, "productId");
            long key;
            Check(Native.iap_buy_quantity(Live(), pid, quantity, clickMs, out key));
            return key;
        }

        /// Buy with a win-back offer (iOS 18+): `offerId` is the id of one of
        /// the product's winBackOffers (ProductInfo). The PurchaseReceived
        /// carries offer.type "winBack" and the offer's price; an offer the
        /// player can no longer take is a result "5" (ProductUnavailable),
        /// below iOS 18 a result "4". InvalidArg for an empty offer ID.
        public long BuyOffer(string productId, string offerId, long clickMs)
        {
            byte[] pid = Utf8.ToNative(productId, "productId");
            byte[] oid = Utf8.ToNative(offerId, "offerId");
            long key;
            Check(Native.iap_buy_offer(Live(), pid, oid, clickMs, out key));
            return key;
        }

        /// The game granted (or handled) the "7" or "revoked" message with this
        /// key and saved its state: the SDK drops the record and finishes the
        /// store transaction.
        public void Confirm(long key)
        {
            var probe = TestHooks.Probe;
            if (probe != null) probe.Confirming(key);
            Check(Native.iap_confirm(Live(), key));
            if (probe != null) probe.Confirmed(key);
        }

        /// Restores purchases (only on the player's request: the store may ask
        /// them to sign in). An EntitlementsReceived with reason "restore" follows.
        public void Restore()
        {
            Check(Native.iap_restore(Live()));
        }

        // ---- Subscriptions, the app transaction, sheets, StoreKit messages ----
        // Each returns at once; the answer is a message. None needs a Confirm.
        // On a store or OS without the feature they throw NotSupported.

        /// Asks for the status of the subscription groups of these products;
        /// no IDs (or null): every group the player ever subscribed in. One
        /// SubscriptionReceived (reason "request") answers: per group its
        /// state (subscribed, inGracePeriod, inBillingRetryPeriod, expired,
        /// revoked, none) and `active` (grant the content). IDs that are not
        /// auto-renewable subscriptions are listed in `invalid`.
        public void SubscriptionStatus(params string[] productIds)
        {
            string json = productIds == null || productIds.Length == 0 ? null : JsonArray(productIds);
            Check(Native.iap_subscription_status(Live(), Utf8.ToNative(json, "product IDs")));
        }

        /// Asks for the app transaction: the version and date the player first
        /// got the game (a game that went from paid to free grants early buyers
        /// what they paid for). AppTransactionReceived answers.
        public void AppTransaction()
        {
            Check(Native.iap_app_transaction(Live()));
        }

        /// Opens the App Store's subscription management sheet (cancel, change
        /// plan). SheetClosed follows when the player closes it; changes arrive
        /// as SubscriptionReceived and EntitlementsReceived. One sheet at a
        /// time: Busy while another is up.
        public void ManageSubscriptions()
        {
            Check(Native.iap_manage_subscriptions(Live()));
        }

        /// ManageSubscriptions for one subscription group (the
        /// subscriptionGroupID of a ProductInfo; iOS 17+, NotSupported below):
        /// the SheetClosed names it in subscriptionGroupID. InvalidArg for an
        /// empty ID (the simulator also refuses a group its catalog lacks).
        public void ManageSubscriptionGroup(string groupId)
        {
            Check(Native.iap_manage_subscription_group(Live(), Utf8.ToNative(groupId, "groupId")));
        }

        /// Opens the refund request sheet for a purchase (the transactionID of
        /// its PurchaseMessage). SheetClosed follows with outcome "success"
        /// (submitted: a granted refund arrives later as RevokedReceived),
        /// "userCancelled" or "error". Busy while another sheet is up;
        /// InvalidArg for an ID that is not decimal digits.
        public void RequestRefund(string transactionId)
        {
            Check(Native.iap_request_refund(Live(), Utf8.ToNative(transactionId, "transactionId")));
        }

        /// Opens the offer code redemption sheet (iOS 16+). SheetClosed follows;
        /// a redeemed code's purchase arrives as a PurchaseReceived with origin
        /// "store" (grant and confirm it like any). Busy while another sheet is up.
        public void RedeemOfferCode()
        {
            Check(Native.iap_redeem_offer_code(Live()));
        }

        /// Shows the StoreKit messages held back by "storeMessages": "defer"
        /// (BridgeConfig's StoreMessages.Defer): call it at a moment that does
        /// not interrupt play (a menu, between levels). Each shown message
        /// raises StoreMessageReceived with state "shown"; nothing held,
        /// nothing happens.
        public void ShowStoreMessages()
        {
            Check(Native.iap_show_store_messages(Live()));
        }

        /// Waits until every confirm so far is on disk and its transaction
        /// finished. Worth calling when the app goes to the background.
        public void Flush()
        {
            Check(Native.iap_flush(Live()));
        }

        /// Drives the simulated store with a JSON command {"op": ...} and returns
        /// its JSON answer (docs/SIMULATOR.md). For tests and the editor.
        public string Simulator(string commandJson)
        {
            byte[] cmd = Utf8.ToNative(commandJson, "commandJson");
            IntPtr answer;
            int rc = Native.iap_simulator(Live(), cmd, out answer);
            string text = Utf8.TakeNative(answer);
            Check(rc);
            return text;
        }

        /// The next message as JSON, or null when there is none (or the bridge
        /// is closed). Cheap when there is nothing: fine to call every frame.
        /// DispatchPending calls it for you and raises the events.
        public string Poll()
        {
            string json = null;
            bool fromQueue = false;
            lock (gate)
            {
                if (fromSdk.Count > 0) { json = fromSdk.Dequeue(); fromQueue = true; }
                // In callback mode everything comes through the queue above;
                // polling the library too could reorder messages.
                else if (callbackMode) return null;
            }
            if (!fromQueue)
            {
                IntPtr h = Handle;
                json = h == IntPtr.Zero ? null : Utf8.TakeNative(Native.iap_poll(h));
            }
            // The test kit sees every message the game takes, polled or
            // brought by the callback (its kill points, StoreTestKit).
            var probe = TestHooks.Probe;
            if (json != null && probe != null) probe.Polled(json);
            return json;
        }

        /// Raises the events for up to `max` waiting messages on the calling
        /// thread (call it from Update). Returns how many were dispatched.
        /// Each handler runs on its own: one that throws (a destroyed panel
        /// still subscribed) is logged through Log and the others still get
        /// the message, so a stale subscriber never keeps a purchase from the
        /// code that grants it. A "7" no handler confirmed stays with the SDK
        /// and is delivered again at the next Open.
        public int DispatchPending(int max = 100)
        {
            int n = 0;
            string json;
            while (n < max && (json = Poll()) != null)
            {
                n++;
                Raise(Message.Parse(json));
            }
            return n;
        }

        private void Raise(Message m)
        {
            Deliver(MessageReceived, m);
            if (m is PurchaseMessage) Deliver(PurchaseReceived, (PurchaseMessage)m);
            else if (m is ProductsMessage) Deliver(ProductsReceived, (ProductsMessage)m);
            else if (m is EntitlementsMessage) Deliver(EntitlementsReceived, (EntitlementsMessage)m);
            else if (m is PendingMessage) Deliver(PendingReceived, (PendingMessage)m);
            else if (m is RevokedMessage) Deliver(RevokedReceived, (RevokedMessage)m);
            else if (m is ErrorMessage) Deliver(ErrorReceived, (ErrorMessage)m);
            else if (m is OutboxDamagedMessage) Deliver(OutboxDamagedReceived, (OutboxDamagedMessage)m);
            else if (m is SubscriptionMessage) Deliver(SubscriptionReceived, (SubscriptionMessage)m);
            else if (m is AppTransactionMessage) Deliver(AppTransactionReceived, (AppTransactionMessage)m);
            else if (m is SheetMessage) Deliver(SheetClosed, (SheetMessage)m);
            else if (m is StoreMessage) Deliver(StoreMessageReceived, (StoreMessage)m);
        }

        /// Calls each of `handlers` with `m`, every one whatever the others
        /// throw (see DispatchPending).
        private static void Deliver<T>(Action<T> handlers, T m) where T : Message
        {
            if (handlers == null) return;
            foreach (Action<T> h in handlers.GetInvocationList())
            {
                try { h(m); }
                catch (Exception e)
                {
                    if (TestHooks.IsKill(e)) throw;  // the test kit's simulated process kill
                    try { Log("IAPBridge: a " + typeof(T).Name + " handler threw; the other handlers still got the message (type \"" + m.type + "\"): " + e); } catch { }
                }
            }
        }

        /// Switches delivery to the SDK's callback (enabled) or back to polling.
        /// Either way the game receives messages from Poll/DispatchPending on
        /// its own thread; the callback only moves them into this bridge's queue
        /// as soon as they exist, on the SDK's delivery thread. `onSdkThread`,
        /// if given, then runs on that thread for each message (keep it tiny,
        /// e.g. wake a waiting thread; exceptions are caught and logged).
        /// Choose the mode at start: switching while messages flow may reorder them.
        /// Returns once a call of the SDK's callback under way has returned (so do
        /// not call it holding a lock your onSdkThread hook takes).
        public void SetCallback(bool enabled, Action<string> onSdkThread = null)
        {
            lock (gate)
            {
                callbackMode = enabled;
                this.onSdkThread = enabled ? onSdkThread : null;
            }
            if (enabled) Check(Native.iap_set_callback(Live(), CallbackPointer, new IntPtr(id)));
            else Check(Native.iap_set_callback(Live(), IntPtr.Zero, IntPtr.Zero));
        }

        /// Closes the bridge: confirms made so far are made durable, results
        /// not confirmed stay on disk for the next Open. Safe to call twice.
        public void Dispose()
        {
            IntPtr h = IntPtr.Zero;
            int rc = ErrorCode.Ok;
            // In a finally, as in Open: a thread aborted by a script reload
            // between taking the handle and closing it would leave the native
            // bridge open and unknown to the unload handler.
            try { }
            finally
            {
                lock (gate)
                {
                    h = handle;
                    handle = IntPtr.Zero;
                }
                if (h != IntPtr.Zero)
                {
                    // Waits for a callback in progress (unless called from inside one).
                    rc = Native.iap_close(h);
                    lock (Registry) Registry.Remove(id);
                }
            }
            if (h == IntPtr.Zero) return;
            // Dispose does not throw; a confirm the close could not make
            // durable is said (its result comes again at the next Open).
            if (rc != ErrorCode.Ok && rc != ErrorCode.Closed)
            {
                try { Log("IAPBridge: Dispose: " + Utf8.FromNative(Native.iap_errmsg()) + " (a result not confirmed durably is delivered again at the next Open)"); } catch { }
            }
        }

        private IntPtr Handle { get { lock (gate) return handle; } }

        private IntPtr Live()
        {
            IntPtr h = Handle;
            if (h == IntPtr.Zero) throw new BridgeException(ErrorCode.Closed, "the bridge was disposed");
            return h;
        }

        /// Throws a BridgeException for a failed call. iap_errmsg is per
        /// thread: read it at once, on the thread that made the call.
        private static void Check(int rc)
        {
            if (rc == ErrorCode.Ok) return;
            throw new BridgeException(rc, Utf8.FromNative(Native.iap_errmsg()));
        }

        // ---- The SDK's callback -------------------------------------------------
        // Native code holds a plain integer as ctx, never a managed pointer: the
        // registry maps it back to the bridge. The delegate lives in a static
        // field so the GC never frees the thunk native code calls, and the
        // target is a static method marked MonoPInvokeCallback, as IL2CPP requires.

        private static readonly Dictionary<int, Bridge> Registry = new Dictionary<int, Bridge>();
        private static int nextId;
        private static readonly Native.Callback CallbackDelegate = OnSdkMessage;
        private static readonly IntPtr CallbackPointer = Marshal.GetFunctionPointerForDelegate(CallbackDelegate);

        [ThreadStatic] private static bool attachedAsBackground;

        [AOT.MonoPInvokeCallback(typeof(Native.Callback))]
        private static void OnSdkMessage(IntPtr ctx, IntPtr json)
        {
            // Nothing may escape into native code: an exception crossing the
            // boundary would take the game down.
            try
            {
                // The runtime attached this native thread on its first call;
                // as a foreground thread it would keep the process (Mono,
                // a desktop player) from exiting.
                if (!attachedAsBackground)
                {
                    Thread.CurrentThread.IsBackground = true;
                    attachedAsBackground = true;
                }
                Bridge b;
                lock (Registry) Registry.TryGetValue(ctx.ToInt32(), out b);
                if (b == null) return;
                string text = Utf8.FromNative(json); // owned by the SDK: copy, never free
                if (text == null) return;
                Action<string> hook;
                lock (b.gate)
                {
                    b.fromSdk.Enqueue(text);
                    hook = b.onSdkThread;
                }
                if (hook != null) hook(text);
            }
            catch (Exception e)
            {
                try { Log("IAPBridge: exception in the SDK callback: " + e); } catch { }
            }
        }

        static Bridge()
        {
            // Unity's editor reloads scripts (leaving Play mode, recompiling)
            // without unloading the native library: a bridge left open would
            // keep dataDir locked (IAP_E_BUSY at the next Open) and its SDK
            // threads would call back into an unloaded domain. Close every
            // bridge first: iap_close joins the bridge's callback thread, so
            // once it returns nothing calls OnSdkMessage for that bridge.
            AppDomain.CurrentDomain.DomainUnload += (s, e) => { closingAll = true; DisposeAll(); };
            AppDomain.CurrentDomain.ProcessExit += (s, e) => { closingAll = true; DisposeAll(); };
        }

        private static volatile bool closingAll;

        /// Disposes every bridge still open (results not confirmed stay on disk
        /// for the next Open). The binding calls it itself when the domain
        /// unloads, at play-mode entry, after leaving Play mode and at exit.
        public static void DisposeAll()
        {
            List<Bridge> open;
            lock (Registry) open = new List<Bridge>(Registry.Values);
            foreach (var b in open)
            {
                try { b.Dispose(); } catch { }
            }
        }

        /// Play-mode entry (Unity with domain reload off keeps static fields
        /// from the last session): closes what the last session left open and
        /// sets Log and the native library check back to their defaults.
        internal static void ResetStatics()
        {
            DisposeAll();
            Log = DefaultLog;
            NativeLibrary.Reset();
        }
    }
}
