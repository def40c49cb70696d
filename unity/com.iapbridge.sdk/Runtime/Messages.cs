// Typed forms of the SDK's messages (docs/PROTOCOL.md has the schemas).
//
// The classes have JsonUtility's shape ([Serializable], public fields named as
// in the JSON), so Unity's serializer handles them (JsonUtility, the
// inspector, your own save data). The binding fills them with its own reader
// (Message.Parse), so they parse the same in the editor, on a device and under
// plain Mono. (JsonUtility.FromJson would also read a message, but it turns a
// null object such as introductoryOffer into an empty one.)
// Keys are int64 sent as decimal strings: `key` keeps the text, `Key` the number.
using System;
using System.Collections.Generic;
using System.Globalization;

namespace IAPBridge
{
    /// The "type" of every message.
    public static class MessageType
    {
        public const string Products = "999";
        public const string Purchase = "7";
        public const string Pending = "pending";
        public const string Entitlements = "entitlements";
        public const string Revoked = "revoked";
        public const string Error = "error";
        public const string OutboxDamaged = "outbox_damaged";
        public const string Promoted = "promoted";
        public const string Store = "store";
        public const string Unvouched = "unvouched";
        public const string Subscription = "subscription";
        public const string AppTransaction = "app";
        public const string Sheet = "sheet";
        public const string StoreMessage = "storeMessage";
    }

    /// The "state" of a subscription group (StoreKit's RenewalState).
    public static class SubscriptionState
    {
        public const string Subscribed = "subscribed";
        /// The renewal could not be charged; the player keeps access until
        /// gracePeriodExpiresDate (where the app enabled a grace period).
        public const string InGracePeriod = "inGracePeriod";
        /// The renewal could not be charged; Apple keeps trying, no access.
        public const string InBillingRetryPeriod = "inBillingRetryPeriod";
        public const string Expired = "expired";
        public const string Revoked = "revoked";
        /// The player never subscribed in this group.
        public const string None = "none";
    }

    /// The "sheet" of a "sheet" message.
    public static class SheetKind
    {
        public const string ManageSubscriptions = "manageSubscriptions";
        public const string Refund = "refund";
        public const string OfferCode = "offerCode";
    }

    /// The "outcome" of a "sheet" message.
    public static class SheetOutcome
    {
        public const string Dismissed = "dismissed";
        /// Refund: the request was submitted (a granted refund arrives later as "revoked").
        public const string Success = "success";
        public const string UserCancelled = "userCancelled";
        public const string Error = "error";
    }

    /// The "result" of a "7" message.
    public static class PurchaseResult
    {
        public const string Success = "0";
        public const string Cancelled = "1";
        public const string Declined = "2";
        public const string NetworkError = "3";
        public const string NotAllowed = "4";
        public const string ProductUnavailable = "5";
        public const string Unverified = "6";
        public const string Interrupted = "7";
        public const string Unknown = "8";
    }

    /// Any message. A type this binding does not know arrives as a plain Message.
    [Serializable]
    public class Message
    {
        public string type;
        /// The JSON text exactly as the SDK sent it.
        [NonSerialized] public string json;

        /// Parses one message. Never throws: text that is not a JSON object
        /// gives a Message with type "" and the text in `json`.
        public static Message Parse(string text)
        {
            JsonObject o;
            try { o = new JsonObject(Json.Parse(text)); }
            catch (FormatException) { o = new JsonObject(null); }
            Message m;
            switch (o.Str("type"))
            {
                case MessageType.Products: m = ProductsMessage.From(o); break;
                case MessageType.Purchase: m = PurchaseMessage.From(o); break;
                case MessageType.Pending: m = PendingMessage.From(o); break;
                case MessageType.Entitlements: m = EntitlementsMessage.From(o); break;
                case MessageType.Revoked: m = RevokedMessage.From(o); break;
                case MessageType.Error: m = ErrorMessage.From(o); break;
                case MessageType.OutboxDamaged: m = OutboxDamagedMessage.From(o); break;
                case MessageType.Promoted: m = PromotedMessage.From(o); break;
                case MessageType.Store: m = StoreStatusMessage.From(o); break;
                case MessageType.Unvouched: m = UnvouchedMessage.From(o); break;
                case MessageType.Subscription: m = SubscriptionMessage.From(o); break;
                case MessageType.AppTransaction: m = AppTransactionMessage.From(o); break;
                case MessageType.Sheet: m = SheetMessage.From(o); break;
                case MessageType.StoreMessage: m = StoreMessage.From(o); break;
                default: m = new Message(); break;
            }
            m.type = o.Str("type") ?? "";
            m.json = text;
            return m;
        }

        internal static long ParseKey(string key)
        {
            long k;
            return long.TryParse(key, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out k) ? k : 0;
        }
    }

    /// "999": product information, the answer to RequestProducts.
    [Serializable]
    public class ProductsMessage : Message
    {
        public ProductInfo[] items;
        /// IDs the store did not know.
        public string[] invalid;
        /// Set when the request failed as a whole (network); items is then empty.
        public string error;

        /// The product with this ID, or null.
        public ProductInfo Find(string id)
        {
            foreach (var p in items) if (p.id == id) return p;
            return null;
        }

        internal static ProductsMessage From(JsonObject o)
        {
            var list = new List<ProductInfo>();
            foreach (object e in o.Arr("items")) list.Add(ProductInfo.From(new JsonObject(e)));
            return new ProductsMessage { items = list.ToArray(), invalid = o.Strings("invalid"), error = o.Str("error") };
        }
    }

    [Serializable]
    public class ProductInfo
    {
        public string id;
        /// Localized name and description, as the store shows them.
        public string title;
        public string description;
        /// Decimal string, e.g. "0.99"; `displayPrice` is the localized text, e.g. "$0.99".
        public string price;
        public string displayPrice;
        public string currency;
        /// "consumable", "nonConsumable", "nonRenewingSubscription", "autoRenewableSubscription".
        public string kind;
        /// ISO 8601 period ("P1M") of an auto-renewable subscription, else null.
        public string subscriptionPeriod;
        public string subscriptionGroupID;
        /// Null when there is none.
        public IntroductoryOffer introductoryOffer;
        /// Whether this player may still take the introductory offer (never
        /// subscribed in the group); false when there is no offer.
        public bool introOfferEligible;
        /// Family Sharing: buying it also entitles the player's family.
        public bool familyShareable;
        /// Auto-renewable subscriptions: the win-back offers this player may
        /// take now (a lapsed subscriber; iOS 18+), empty when there is none.
        /// Buy one with Bridge.BuyOffer(id, offer.id, clickMs).
        public WinBackOffer[] winBackOffers;

        internal static ProductInfo From(JsonObject o)
        {
            var offer = o.Obj("introductoryOffer");
            var winBack = new List<WinBackOffer>();
            foreach (object e in o.Arr("winBackOffers")) winBack.Add(WinBackOffer.From(new JsonObject(e)));
            return new ProductInfo
            {
                id = o.Str("id"), title = o.Str("title"), description = o.Str("description"),
                price = o.Str("price"), displayPrice = o.Str("displayPrice"), currency = o.Str("currency"),
                kind = o.Str("kind"), subscriptionPeriod = o.Str("subscriptionPeriod"),
                subscriptionGroupID = o.Str("subscriptionGroupID"),
                introductoryOffer = offer.IsObject ? IntroductoryOffer.From(offer) : null,
                introOfferEligible = o.Bool("introOfferEligible"),
                familyShareable = o.Bool("familyShareable"),
                winBackOffers = winBack.ToArray(),
            };
        }
    }

    /// One of a product's winBackOffers: pass `id` to Bridge.BuyOffer.
    [Serializable]
    public class WinBackOffer
    {
        public string id;
        /// "winBack".
        public string type;
        /// "free", "payAsYouGo" or "payUpFront".
        public string paymentMode;
        /// One offer period, ISO 8601 ("P1M").
        public string period;
        public long periods;
        /// What one offer period costs, decimal string.
        public string price;

        internal static WinBackOffer From(JsonObject o)
        {
            return new WinBackOffer
            {
                id = o.Str("id"), type = o.Str("type"), paymentMode = o.Str("paymentMode"),
                period = o.Str("period"), periods = o.Long("periods"), price = o.Str("price"),
            };
        }
    }

    /// The offer a transaction used (the "offer" of a "7" or an entitlement);
    /// null at the regular price.
    [Serializable]
    public class Offer
    {
        /// "introductory" (free trial or introductory price), "promotional",
        /// "code" (an offer code) or "winBack".
        public string type;
        /// The offer's ID; null for an introductory offer.
        public string id;
        /// "freeTrial", "payAsYouGo", "payUpFront", "oneTime"; null when the store did not say.
        public string paymentMode;
        /// One offer period, ISO 8601 ("P1W"); null when the store did not say.
        public string period;

        public bool IsFreeTrial { get { return paymentMode == "freeTrial"; } }

        internal static Offer From(JsonObject o)
        {
            if (!o.IsObject) return null;
            return new Offer { type = o.Str("type"), id = o.Str("id"), paymentMode = o.Str("paymentMode"), period = o.Str("period") };
        }
    }

    [Serializable]
    public class IntroductoryOffer
    {
        /// "free", "payAsYouGo" or "payUpFront".
        public string paymentMode;
        public string period;
        public long periods;
        public string price;

        internal static IntroductoryOffer From(JsonObject o)
        {
            return new IntroductoryOffer { paymentMode = o.Str("paymentMode"), period = o.Str("period"), periods = o.Long("periods"), price = o.Str("price") };
        }
    }

    /// "7": a purchase result. Grant it (once per key), save, then Confirm(Key),
    /// whatever the result.
    [Serializable]
    public class PurchaseMessage : Message
    {
        public string key;
        public string productID;
        /// PurchaseResult: "0" success, others documented there.
        public string result;
        public string resultName;
        public string transactionID;
        public string originalTransactionID;
        public string price;
        public string currency;
        public long quantity;
        public string kind;
        /// Milliseconds since 1970; expiresDate is 0 when there is none.
        public long purchaseDate;
        public long expiresDate;
        /// "game" (your Buy) or "store" (renewal, Ask to Buy, promoted or other-device purchase).
        public string origin;
        /// Buying something already owned: no new charge, same transaction.
        public bool alreadyOwned;
        /// "purchased", or "familyShared" (a family member's purchase shared
        /// with this player); null on failures.
        public string ownershipType;
        /// The App Store country of the purchase (ISO 3166 alpha-3, e.g. "USA"); null when unknown.
        public string storefront;
        /// The offer the purchase used (a free trial, an introductory price,
        /// an offer code, a win-back offer); null at the regular price and on failures.
        public Offer offer;
        public string environment;
        public string message;
        public string jws;
        /// Auto-renewable subscriptions: true when a higher plan of the same
        /// group replaced this one (false for other kinds and on failures).
        public bool isUpgraded;
        /// Set only when this charge answers a click whose key another live
        /// result holds (an edited save folder; or a charge after a failure
        /// that an earlier version stored under a key of its own): the
        /// click's key; null otherwise. Grant it like any success. A charge
        /// after a failure now comes under the click's own key, once that
        /// failure is confirmed.
        public string clickKey;

        public long Key { get { return ParseKey(key); } }
        public bool IsSuccess { get { return result == PurchaseResult.Success; } }
        /// clickKey as a number; 0 when there is none.
        public long ClickKey { get { return clickKey == null ? 0 : ParseKey(clickKey); } }

        internal static PurchaseMessage From(JsonObject o)
        {
            return new PurchaseMessage
            {
                key = o.Str("key"), productID = o.Str("productID"), result = o.Str("result"),
                resultName = o.Str("resultName"), transactionID = o.Str("transactionID"),
                originalTransactionID = o.Str("originalTransactionID"), price = o.Str("price"),
                currency = o.Str("currency"), quantity = o.Long("quantity"), kind = o.Str("kind"),
                purchaseDate = o.Long("purchaseDate"), expiresDate = o.Long("expiresDate"),
                origin = o.Str("origin"), alreadyOwned = o.Bool("alreadyOwned"), ownershipType = o.Str("ownershipType"), storefront = o.Str("storefront"),
                offer = Offer.From(o.Obj("offer")),
                environment = o.Str("environment"), message = o.Str("message"), jws = o.Str("jws"),
                isUpgraded = o.Bool("isUpgraded"), clickKey = o.Str("clickKey"),
            };
        }
    }

    /// "pending": the purchase waits for a parent (Ask to Buy) or an
    /// interrupted payment. Informational: no confirm; a "7" follows later.
    [Serializable]
    public class PendingMessage : Message
    {
        public string key;
        public string productID;
        /// "askToBuy", "interrupted", or "actionRequired" (StoreKit: Ask to
        /// Buy or a payment needing the player's action; it does not say which).
        public string reason;

        public long Key { get { return ParseKey(key); } }

        internal static PendingMessage From(JsonObject o)
        {
            return new PendingMessage { key = o.Str("key"), productID = o.Str("productID"), reason = o.Str("reason") };
        }
    }

    /// "entitlements": what the player owns now (non-consumables, active
    /// subscriptions). At every open, after Restore, and when it changes.
    [Serializable]
    public class EntitlementsMessage : Message
    {
        /// "open" (every Open), "restore" (after Restore), "change" (a purchase, renewal, expiry or refund).
        /// The list is complete: an item missing from it is no longer owned.
        public string reason;
        public long now;
        public Entitlement[] items;

        public bool Owns(string productID)
        {
            foreach (var e in items) if (e.productID == productID) return true;
            return false;
        }

        internal static EntitlementsMessage From(JsonObject o)
        {
            var list = new List<Entitlement>();
            foreach (object e in o.Arr("items")) list.Add(Entitlement.From(new JsonObject(e)));
            return new EntitlementsMessage { reason = o.Str("reason"), now = o.Long("now"), items = list.ToArray() };
        }
    }

    [Serializable]
    public class Entitlement
    {
        public string productID;
        public string transactionID;
        public string originalTransactionID;
        public string kind;
        public long purchaseDate;
        /// 0 when it does not expire.
        public long expiresDate;
        /// The App Store country of the purchase (ISO 3166 alpha-3); null when unknown.
        public string storefront;
        /// The offer the transaction used (a trial still running shows here); null at the regular price.
        public Offer offer;

        internal static Entitlement From(JsonObject o)
        {
            return new Entitlement
            {
                productID = o.Str("productID"), transactionID = o.Str("transactionID"),
                originalTransactionID = o.Str("originalTransactionID"), kind = o.Str("kind"),
                purchaseDate = o.Long("purchaseDate"), expiresDate = o.Long("expiresDate"),
                storefront = o.Str("storefront"),
                offer = Offer.From(o.Obj("offer")),
            };
        }
    }

    /// "revoked": a refund or revocation. Take the item back (once per key),
    /// save, then Confirm(Key).
    [Serializable]
    public class RevokedMessage : Message
    {
        public string key;
        public string productID;
        public string transactionID;
        public string originalTransactionID;
        public string kind;
        public long revocationDate;
        public string reason;
        public long quantity;
        public string origin;

        public long Key { get { return ParseKey(key); } }

        internal static RevokedMessage From(JsonObject o)
        {
            return new RevokedMessage
            {
                key = o.Str("key"), productID = o.Str("productID"), transactionID = o.Str("transactionID"),
                originalTransactionID = o.Str("originalTransactionID"), kind = o.Str("kind"),
                revocationDate = o.Long("revocationDate"), reason = o.Str("reason"),
                quantity = o.Long("quantity"), origin = o.Str("origin"),
            };
        }
    }

    /// "error": an asynchronous operation failed ("products", "restore", "confirm", "outbox", ...).
    [Serializable]
    public class ErrorMessage : Message
    {
        public string op;
        /// An ErrorCode value.
        public int code;
        public string codeName;
        public string message;

        internal static ErrorMessage From(JsonObject o)
        {
            return new ErrorMessage { op = o.Str("op"), code = o.Int("code"), codeName = o.Str("codeName"), message = o.Str("message") };
        }
    }

    /// "promoted": the player tapped this product, promoted on the App Store
    /// page. Nothing is bought yet: call Buy(productID) when the game is at a
    /// good moment (the intent's offer is applied), or ignore it.
    [Serializable]
    public class PromotedMessage : Message
    {
        public string productID;
        /// The win-back offer shown with it (iOS 18+), or null.
        public string offerID;
        public string offerType;
        public string offerPrice;

        internal static PromotedMessage From(JsonObject o)
        {
            var offer = o.Obj("offer");
            return new PromotedMessage
            {
                productID = o.Str("productID"),
                offerID = offer.IsObject ? offer.Str("id") : null,
                offerType = offer.IsObject ? offer.Str("type") : null,
                offerPrice = offer.IsObject ? offer.Str("price") : null,
            };
        }
    }

    /// "store": whether the player may pay (false under parental controls:
    /// grey out Buy) and the App Store country (ISO 3166 alpha-3; request the
    /// products again when it changes). At every open and on change.
    [Serializable]
    public class StoreStatusMessage : Message
    {
        /// "open" or "change".
        public string reason;
        public bool canMakePayments;
        public string storefront;

        internal static StoreStatusMessage From(JsonObject o)
        {
            return new StoreStatusMessage
            {
                reason = o.Str("reason"),
                canMakePayments = o.Bool("canMakePayments"),
                storefront = o.Str("storefront"),
            };
        }
    }

    /// "unvouched": a purchase record of the outbox the store does not vouch
    /// for (an edited, restored or copied save) was dropped. Grant nothing;
    /// log it.
    [Serializable]
    public class UnvouchedMessage : Message
    {
        public string key;
        public string productID;
        public string transactionID;
        public string reason;

        internal static UnvouchedMessage From(JsonObject o)
        {
            return new UnvouchedMessage
            {
                key = o.Str("key"), productID = o.Str("productID"),
                transactionID = o.Str("transactionID"), reason = o.Str("reason"),
            };
        }
    }

    /// "subscription": the status of subscription groups. At open (the groups
    /// the player ever subscribed in), in answer to SubscriptionStatus, and
    /// when a group's status changes (only the groups that changed).
    /// Informational: no confirm.
    [Serializable]
    public class SubscriptionMessage : Message
    {
        /// "open", "request" or "change".
        public string reason;
        public SubscriptionGroupStatus[] groups;
        /// Requested product IDs that are unknown or not auto-renewable subscriptions.
        public string[] invalid;

        /// The status of this group, or null when the message does not carry it
        /// (a "change" lists only the groups that changed: keep what you knew).
        public SubscriptionGroupStatus Find(string groupID)
        {
            foreach (var g in groups) if (g.groupID == groupID) return g;
            return null;
        }

        internal static SubscriptionMessage From(JsonObject o)
        {
            var list = new List<SubscriptionGroupStatus>();
            foreach (object e in o.Arr("groups")) list.Add(SubscriptionGroupStatus.From(new JsonObject(e)));
            return new SubscriptionMessage { reason = o.Str("reason"), groups = list.ToArray(), invalid = o.Strings("invalid") };
        }
    }

    /// One group of a "subscription" message.
    [Serializable]
    public class SubscriptionGroupStatus
    {
        public string groupID;
        /// A SubscriptionState: subscribed, inGracePeriod, inBillingRetryPeriod,
        /// expired, revoked, none.
        public string state;
        /// Grant the subscription's content: verified and subscribed, or in a
        /// billing grace period.
        public bool active;
        /// The product of the group's latest transaction ("" for none).
        public string productID;
        public string transactionID;
        public string originalTransactionID;
        /// Milliseconds since 1970; 0 when there is none. expiresDate: end of
        /// the current period; gracePeriodExpiresDate: end of the grace period
        /// while in one; renewalDate: when the next renewal is due, while it
        /// will renew.
        public long expiresDate;
        public long gracePeriodExpiresDate;
        public long renewalDate;
        public bool willAutoRenew;
        /// Why it expired or will not renew: "autoRenewDisabled", "billingError",
        /// "didNotConsentToPriceIncrease", "productUnavailable", "unknown";
        /// null while it will renew.
        public string expirationReason;
        /// What the next renewal buys (a downgrade takes effect then) and costs
        /// (decimal string); null when it will not renew.
        public string renewalProductID;
        public string renewalPrice;
        public string currency;
        /// "noIncreasePending", "pending" (the player has not agreed yet) or "agreed".
        public string priceIncreaseStatus;
        /// False when the store's signature did not verify: do not trust the state.
        public bool verified;

        /// The renewal failed to charge (grace period or billing retry): ask the
        /// player to fix their payment method (ManageSubscriptions).
        public bool HasBillingIssue
        {
            get { return state == SubscriptionState.InGracePeriod || state == SubscriptionState.InBillingRetryPeriod; }
        }

        internal static SubscriptionGroupStatus From(JsonObject o)
        {
            return new SubscriptionGroupStatus
            {
                groupID = o.Str("groupID"), state = o.Str("state"), active = o.Bool("active"),
                productID = o.Str("productID"), transactionID = o.Str("transactionID"),
                originalTransactionID = o.Str("originalTransactionID"), expiresDate = o.Long("expiresDate"),
                gracePeriodExpiresDate = o.Long("gracePeriodExpiresDate"), renewalDate = o.Long("renewalDate"),
                willAutoRenew = o.Bool("willAutoRenew"), expirationReason = o.Str("expirationReason"),
                renewalProductID = o.Str("renewalProductID"), renewalPrice = o.Str("renewalPrice"),
                currency = o.Str("currency"), priceIncreaseStatus = o.Str("priceIncreaseStatus"),
                verified = o.Bool("verified"),
            };
        }
    }

    /// "app": the app transaction, the answer to AppTransaction: the version
    /// and date the player first got the game. Informational: no confirm.
    [Serializable]
    public class AppTransactionMessage : Message
    {
        /// The version the player first got (on iOS the build number, CFBundleVersion).
        public string originalAppVersion;
        /// Milliseconds since 1970.
        public long originalPurchaseDate;
        /// The version running now.
        public string appVersion;
        public string environment;
        /// False when the store's signature did not verify: grant nothing on it.
        public bool verified;
        /// The App Store account's stable identifier for this app: the same on
        /// every device and after a reinstall (a key for a cloud save).
        public string appTransactionID;
        /// Where the player first got the game: "iOS", "macOS", "tvOS", "visionOS".
        public string originalPlatform;
        /// When the player pre-ordered the game (ms since 1970), 0 when they did not.
        public long preorderDate;
        /// Set (and the fields above empty) when the store could not tell.
        public string error;

        internal static AppTransactionMessage From(JsonObject o)
        {
            return new AppTransactionMessage
            {
                originalAppVersion = o.Str("originalAppVersion"), originalPurchaseDate = o.Long("originalPurchaseDate"),
                appVersion = o.Str("appVersion"), environment = o.Str("environment"), verified = o.Bool("verified"),
                appTransactionID = o.Str("appTransactionID"), originalPlatform = o.Str("originalPlatform"),
                preorderDate = o.Long("preorderDate"), error = o.Str("error"),
            };
        }
    }

    /// "sheet": a system sheet the game opened was closed. Informational: no confirm.
    [Serializable]
    public class SheetMessage : Message
    {
        /// SheetKind.ManageSubscriptions, SheetKind.Refund or SheetKind.OfferCode.
        public string sheet;
        /// SheetOutcome.Dismissed (manage, offer code), SheetOutcome.Success or
        /// SheetOutcome.UserCancelled (refund), SheetOutcome.Error (with `message`).
        public string outcome;
        /// Refund only: the transaction the request was for.
        public string transactionID;
        /// ManageSubscriptionGroup only: the group the manage sheet showed.
        public string subscriptionGroupID;
        public string message;

        internal static SheetMessage From(JsonObject o)
        {
            return new SheetMessage
            {
                sheet = o.Str("sheet"), outcome = o.Str("outcome"),
                transactionID = o.Str("transactionID"), message = o.Str("message"),
                subscriptionGroupID = o.Str("subscriptionGroupID"),
            };
        }
    }

    /// "storeMessage": StoreKit has a message for the player (a billing issue,
    /// consent to a subscription price increase). With "storeMessages":
    /// "defer" it arrives first with state "deferred" and waits for
    /// ShowStoreMessages, then again with state "shown". Informational: no confirm.
    [Serializable]
    public class StoreMessage : Message
    {
        public string id;
        /// "billingIssue", "priceIncreaseConsent", "winBackOffer" or "generic".
        public string reason;
        /// "deferred" or "shown".
        public string state;

        public bool IsDeferred { get { return state == "deferred"; } }

        internal static StoreMessage From(JsonObject o)
        {
            return new StoreMessage { id = o.Str("id"), reason = o.Str("reason"), state = o.Str("state") };
        }
    }

    /// "outbox_damaged": the outbox file was damaged on disk; what could be
    /// read was recovered (and re-delivered), the damaged file kept aside.
    [Serializable]
    public class OutboxDamagedMessage : Message
    {
        public long recovered;
        public long skippedBytes;
        public long damagedSpans;
        public long undecodableRecords;
        public string copy;
        public string message;

        internal static OutboxDamagedMessage From(JsonObject o)
        {
            return new OutboxDamagedMessage
            {
                recovered = o.Long("recovered"), skippedBytes = o.Long("skippedBytes"),
                damagedSpans = o.Long("damagedSpans"), undecodableRecords = o.Long("undecodableRecords"),
                copy = o.Str("copy"), message = o.Str("message"),
            };
        }
    }
}
