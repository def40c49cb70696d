// Subscription offers through the Unity binding (issue 22): the offer on a
// "7" and an entitlement, win-back offers in the "999" and BuyOffer, and the
// manage sheet of one group (ManageSubscriptionGroup). Part of driver.exe.
using System;
using System.IO;
using IAPBridge;

static partial class Driver
{
    const string VipGroup = "6A0000A0";

    /// The sample catalog with a win-back offer on vip_monthly (Xcode 16's key).
    static string WinBackCatalog(string dir)
    {
        string text = File.ReadAllText(catalog);
        const string anchor = "\"productID\" : \"vip_monthly\",";
        string edited = text.Replace(anchor,
            "\"winbackOffers\" : [ { \"offerID\" : \"wb_half\", \"referenceName\" : \"Half price\", \"displayPrice\" : \"1.49\", " +
            "\"numberOfPeriods\" : 2, \"paymentMode\" : \"payAsYouGo\", \"subscriptionPeriod\" : \"P1M\" } ],\n          " + anchor);
        if (edited == text) throw new Exception("the sample catalog has no " + anchor + " to edit");
        string path = Path.Combine(dir, "WinBack.storekit");
        File.WriteAllText(path, edited);
        return path;
    }

    static string OfferText(Offer o)
    {
        return o == null ? "null" : o.type + "/" + (o.id ?? "null") + "/" + (o.paymentMode ?? "null") + "/" + (o.period ?? "null");
    }

    /// A first subscription takes the free trial ("offer" on the "7" and the
    /// entitlement); once lapsed, the win-back offer is listed and BuyOffer
    /// buys it; bad offers and groups are refused as the header says.
    static void OffersScenario()
    {
        Prepare("offers");
        string dir = Path.Combine(root, "offers");
        var b = Bridge.Open(BridgeConfig.Simulator(Path.Combine(dir, "data"), WinBackCatalog(dir), Path.Combine(dir, "appstore")));
        var inbox = new Inbox(b);
        inbox.WaitFor<EntitlementsMessage>(m => m.reason == "open");

        int mark = inbox.Mark();
        b.RequestProducts("vip_monthly", "coins_100");
        var p = inbox.WaitFor<ProductsMessage>(m => true, from: mark);
        var vip = p == null ? null : p.Find("vip_monthly");
        var coins = p == null ? null : p.Find("coins_100");
        Check(vip != null && vip.winBackOffers != null && vip.winBackOffers.Length == 0 && coins != null && coins.winBackOffers.Length == 0,
              "\"999\" of a player who never subscribed: winBackOffers empty", Text(p));

        // The sample catalog's one-week free trial.
        mark = inbox.Mark();
        long key = b.Buy("vip_monthly", 0);
        var trial = inbox.WaitFor<PurchaseMessage>(m => m.Key == key, from: mark);
        var ent = inbox.WaitFor<EntitlementsMessage>(m => m.reason == "change" && m.Owns("vip_monthly"), from: mark);
        Check(trial != null && trial.IsSuccess && trial.price == "0" && trial.offer != null && trial.offer.type == "introductory" &&
              trial.offer.id == null && trial.offer.paymentMode == "freeTrial" && trial.offer.IsFreeTrial && trial.offer.period == "P1W",
              "Buy vip_monthly: the \"7\" has price 0 and offer introductory/freeTrial/P1W", Text(trial));
        Entitlement item = null;
        if (ent != null) foreach (var e in ent.items) if (e.productID == "vip_monthly") item = e;
        Check(item != null && item.offer != null && item.offer.type == "introductory" && item.offer.paymentMode == "freeTrial",
              "...and the entitlement carries the same offer", Text(ent));
        if (trial != null) b.Confirm(key);
        mark = inbox.Mark();
        long coinsKey = b.Buy("coins_100", 0);
        var regular = inbox.WaitFor<PurchaseMessage>(m => m.Key == coinsKey, from: mark);
        Check(regular != null && regular.IsSuccess && regular.offer == null, "a purchase at the regular price: offer null", Text(regular));
        if (regular != null) b.Confirm(coinsKey);

        // An offer the player cannot take: a "7" result 5, nothing charged.
        mark = inbox.Mark();
        long unknownKey = b.BuyOffer("vip_monthly", "no_such_offer", 0);
        var unknown = inbox.WaitFor<PurchaseMessage>(m => m.Key == unknownKey, from: mark);
        Check(unknown != null && unknown.result == PurchaseResult.ProductUnavailable && unknown.offer == null,
              "BuyOffer with an unknown offer ID: a \"7\" result 5 for its key", Text(unknown));
        if (unknown != null) b.Confirm(unknownKey);
        Expect(ErrorCode.InvalidArg, "BuyOffer with an empty offer ID: IAP_E_INVALID_ARG", () => b.BuyOffer("vip_monthly", "", 0));
        Expect(ErrorCode.NullArg, "BuyOffer with a null offer ID: IAP_E_NULL_ARG", () => b.BuyOffer("vip_monthly", null, 0));
        Expect(ErrorCode.InvalidArg, "BuyOffer with a NUL in the offer ID: IAP_E_INVALID_ARG", () => b.BuyOffer("vip_monthly", "wb\0x", 0));

        // The manage sheet of one group names it; the plain one does not.
        mark = inbox.Mark();
        b.ManageSubscriptionGroup(VipGroup);
        var sheet = inbox.WaitFor<SheetMessage>(m => true, from: mark);
        Check(sheet != null && sheet.sheet == SheetKind.ManageSubscriptions && sheet.outcome == SheetOutcome.Dismissed &&
              sheet.subscriptionGroupID == VipGroup, "ManageSubscriptionGroup: a \"sheet\" manageSubscriptions with subscriptionGroupID", Text(sheet));
        mark = inbox.Mark();
        b.ManageSubscriptions();
        var plain = inbox.WaitFor<SheetMessage>(m => true, from: mark);
        Check(plain != null && plain.sheet == SheetKind.ManageSubscriptions && plain.subscriptionGroupID == null,
              "ManageSubscriptions: no subscriptionGroupID", Text(plain));
        Expect(ErrorCode.InvalidArg, "ManageSubscriptionGroup of an unknown group: IAP_E_INVALID_ARG", () => b.ManageSubscriptionGroup("no_such_group"));
        Expect(ErrorCode.InvalidArg, "ManageSubscriptionGroup(\"\"): IAP_E_INVALID_ARG", () => b.ManageSubscriptionGroup(""));
        Expect(ErrorCode.NullArg, "ManageSubscriptionGroup(null): IAP_E_NULL_ARG", () => b.ManageSubscriptionGroup(null));

        // Lapsed: the win-back offer is listed, and BuyOffer buys it.
        Sim(b, "auto_renew", "\"productID\":\"vip_monthly\",\"enabled\":false");
        Sim(b, "advance", "\"seconds\":" + 10 * Day);
        mark = inbox.Mark();
        b.RequestProducts("vip_monthly");
        p = inbox.WaitFor<ProductsMessage>(m => true, from: mark);
        vip = p == null ? null : p.Find("vip_monthly");
        var wb = vip != null && vip.winBackOffers.Length == 1 ? vip.winBackOffers[0] : null;
        Check(wb != null && wb.id == "wb_half" && wb.type == "winBack" && wb.paymentMode == "payAsYouGo" && wb.period == "P1M" &&
              wb.periods == 2 && wb.price == "1.49", "lapsed: the \"999\" lists the win-back offer (WinBackOffer)", Text(p));
        mark = inbox.Mark();
        long wbKey = b.BuyOffer("vip_monthly", "wb_half", 0);
        var won = inbox.WaitFor<PurchaseMessage>(m => m.Key == wbKey, from: mark);
        Check(won != null && won.IsSuccess && won.price == "1.49" && OfferText(won.offer) == "winBack/wb_half/payAsYouGo/P1M",
              "BuyOffer wb_half: a \"7\" at the offer's price, offer winBack", Text(won));
        if (won != null) b.Confirm(wbKey);

        b.Dispose();
        Expect(ErrorCode.Closed, "BuyOffer after Dispose: IAP_E_CLOSED", () => b.BuyOffer("vip_monthly", "wb_half", 0));
        Expect(ErrorCode.Closed, "ManageSubscriptionGroup after Dispose: IAP_E_CLOSED", () => b.ManageSubscriptionGroup(VipGroup));
    }
}
