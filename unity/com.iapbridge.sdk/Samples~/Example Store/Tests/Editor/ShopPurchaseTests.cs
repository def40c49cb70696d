// Edit-mode tests of the example store's purchase code (Shop.cs, GameSave.cs)
// with the IAPBridge test kit: the game is killed between paying and
// granting, restarted, and has granted exactly once; an Ask to Buy approved
// while the game is closed; a refund; a failed purchase; a lapsed VIP.
// Window > General > Test Runner > EditMode > Run All. Outside Unity the same
// file runs under Mono's NUnit (scripts/ci-55-testkit.sh), with IAP_CATALOG
// naming the catalog.
using System;
using System.IO;
using System.Threading;
using IAPBridge.Testing;
using NUnit.Framework;

namespace IAPBridge.Example.Tests
{
    [TestFixture]
    public class ShopPurchaseTests
    {
        private StoreTestKit kit;
        private string savePath;

        [SetUp]
        public void SetUp()
        {
            // An editor with no IAPBridge library (Windows: none exists yet)
            // skips these tests, saying why, instead of failing each.
            try { GC.KeepAlive(Bridge.Version); }
            catch (BridgeException e)
            {
                if (e.Code == ErrorCode.NotSupported) Assert.Ignore("no IAPBridge native library for this editor: " + e.Message);
                throw;
            }
            kit = new StoreTestKit(FindCatalog());
            savePath = Path.Combine(kit.Root, "save.txt");
        }

        [TearDown]
        public void TearDown() { if (kit != null) kit.Dispose(); }

        private static string FindCatalog()
        {
            string env = Environment.GetEnvironmentVariable("IAP_CATALOG");
            if (!string.IsNullOrEmpty(env)) return env;
#if UNITY_EDITOR
            // The sample's catalog, imported with it under Assets/Samples.
            foreach (string f in Directory.GetFiles(UnityEngine.Application.dataPath, "Game.storekit", SearchOption.AllDirectories))
                return f;
#endif
            Assert.Fail("Game.storekit not found: import the Example Store sample, or set IAP_CATALOG");
            return null;
        }

        /// The game's session: opens the shop, buys if asked, runs its frames
        /// until nothing came for 300 ms, quits.
        private void Play(string config, string buy = null, bool callback = false)
        {
            using (var shop = new Shop(config, savePath))
            {
                // A game may take its messages through the SDK's callback
                // (Bridge.SetCallback): the kit's kill points reach it too.
                if (callback) shop.Bridge.SetCallback(true);
                if (buy != null) shop.Buy(buy);
                for (int quiet = 0; quiet < 30; Thread.Sleep(10))
                {
                    shop.Bridge.Flush();
                    quiet = shop.Bridge.DispatchPending() > 0 ? 0 : quiet + 1;
                }
            }
        }

        /// The save against the store: coins are 100 per pack charged and not
        /// refunded (a double grant would show), every purchase the game
        /// started is in the save, nothing is left unconfirmed.
        private GameSave AssertExactlyOnce()
        {
            var save = GameSave.Load(savePath);
            StoreLedger ledger = kit.Ledger();
            Assert.AreEqual(100 * ledger.Net("coins_100"), save.Coins, "coins against the store's charges and refunds");
            Assert.AreEqual(ledger.Net("remove_ads") > 0, save.RemoveAds, "remove_ads against the store");
            foreach (StoreTransaction t in ledger.Charged)
                if (t.Key > 0) Assert.IsTrue(save.WasGranted(t.Key), "the purchase with key " + t.Key + " is in the save");
            Assert.AreEqual(0, ledger.Unconfirmed.Count, "results left unconfirmed");
            return save;
        }

        [TestCase(KillPoint.AfterCharge)]
        [TestCase(KillPoint.BeforeConfirm)]
        [TestCase(KillPoint.AfterConfirm)]
        public void KilledBetweenPayingAndGranting_GrantedExactlyOnce(string point)
        {
            GameRun run = kit.RunGame(c => Play(c, buy: "coins_100"), point);
            Assert.AreEqual(point, run.KilledAt);
            kit.RunGame(c => Play(c)); // the restart
            Assert.AreEqual(100, AssertExactlyOnce().Coins);
            Assert.AreEqual(1, kit.Ledger().ChargedCount("coins_100"));
        }

        [Test]
        public void KilledAfterCharge_CallbackMode_GrantedExactlyOnce()
        {
            GameRun run = kit.RunGame(c => Play(c, buy: "coins_100", callback: true), KillPoint.AfterCharge);
            Assert.AreEqual(KillPoint.AfterCharge, run.KilledAt);
            kit.RunGame(c => Play(c, callback: true)); // the restart
            Assert.AreEqual(100, AssertExactlyOnce().Coins);
        }

        [Test]
        public void KilledTwiceOnTheSamePurchase_GrantedOnce()
        {
            kit.RunGame(c => Play(c, buy: "remove_ads"), KillPoint.BeforeConfirm);
            kit.RunGame(c => Play(c), KillPoint.BeforeConfirm); // delivered again, already granted
            kit.RunGame(c => Play(c));
            Assert.IsTrue(AssertExactlyOnce().RemoveAds);
        }

        [Test]
        public void AskToBuy_ApprovedWhileTheGameIsClosed()
        {
            kit.AskToBuy(true);
            kit.RunGame(c => Play(c, buy: "coins_100"));
            Assert.AreEqual(0, GameSave.Load(savePath).Coins);
            Assert.AreEqual(1, kit.Pending("coins_100").Count);
            kit.Approve("coins_100");
            kit.RunGame(c => Play(c), KillPoint.AfterCharge); // the approval arrives; killed before granting
            kit.RunGame(c => Play(c));
            Assert.AreEqual(100, AssertExactlyOnce().Coins);
        }

        [Test]
        public void AskToBuy_Declined()
        {
            kit.AskToBuy(true);
            kit.RunGame(c => Play(c, buy: "remove_ads"));
            kit.Decline("remove_ads");
            kit.RunGame(c => Play(c));
            Assert.IsFalse(AssertExactlyOnce().RemoveAds);
            Assert.AreEqual(0, kit.Ledger().Charged.Count);
        }

        [Test]
        public void Refund_TakenBackOnce()
        {
            kit.RunGame(c => Play(c, buy: "coins_100"));
            kit.RunGame(c => Play(c, buy: "coins_100"));
            Assert.AreEqual(200, GameSave.Load(savePath).Coins);
            kit.Refund("coins_100");
            kit.RunGame(c => Play(c), KillPoint.BeforeConfirm); // taken back and saved, killed before the confirm
            kit.RunGame(c => Play(c));
            Assert.AreEqual(100, AssertExactlyOnce().Coins);
            Assert.AreEqual(1, kit.Ledger().RefundedCount("coins_100"));
        }

        [Test]
        public void FailedPurchase_GrantsNothing()
        {
            kit.RunGame(c => Play(c, buy: "coins_100"), null, "{\"op\":\"fail_next\",\"error\":\"networkError\"}");
            Assert.AreEqual(0, AssertExactlyOnce().Coins);
            Assert.AreEqual(0, kit.Ledger().Charged.Count);
        }

        [Test]
        public void LapsedSubscription_EndsVip()
        {
            bool vipAfterBuying = false, vipAfterLapse = true;
            kit.RunGame(c => { Play(c, buy: "vip_monthly"); vipAfterBuying = VipAtStart(c); });
            kit.LapseSubscription("vip_monthly");
            kit.RunGame(c => vipAfterLapse = VipAtStart(c));
            Assert.IsTrue(vipAfterBuying);
            Assert.IsFalse(vipAfterLapse);
            AssertExactlyOnce();
        }

        private bool VipAtStart(string config)
        {
            using (var shop = new Shop(config, savePath))
            {
                shop.Bridge.Flush();
                shop.Bridge.DispatchPending();
                return shop.Vip;
            }
        }
    }
}
