// The example store as a MonoBehaviour (the "Example Store" sample of the
// com.iapbridge.sdk package): add it to any GameObject of an empty scene and
// press Play. All the logic is in Shop.cs; this file holds the only
// Unity API calls (config paths, the frame loop, an IMGUI screen).
using System;
using System.IO;
using IAPBridge;
using IAPBridge.Example;
using UnityEngine;

public class IAPStoreExample : MonoBehaviour
{
    private Shop shop;
    private string failure;
    private bool menuOpen;

    private void Start()
    {
        // The editor and a desktop player of the same project share
        // persistentDataPath (Linux, Windows): each keeps its own files, so
        // both can run at once (one dataDir, one open bridge) and the
        // editor's simulated purchases never meet a player's store.
#if UNITY_EDITOR
        string root = Path.Combine(Application.persistentDataPath, "editor");
        Directory.CreateDirectory(root);
#else
        string root = Application.persistentDataPath;
#endif
        try
        {
            shop = new Shop(Config(root), Path.Combine(root, "example-save.txt"));
        }
        catch (Exception e)
        {
            failure = e.Message;
            // NotSupported: no native library for this platform; the binding
            // has already said so once in the console, with what to do.
            var be = e as BridgeException;
            if (be == null || be.Code != ErrorCode.NotSupported) Debug.LogException(e);
        }
    }

    private static string Config(string root)
    {
#if UNITY_EDITOR || !(UNITY_IOS || UNITY_STANDALONE_OSX)
        // Editor and desktop: the simulated App Store, reading the sample catalog.
        return Shop.SimulatorConfig(Path.Combine(root, "iap"), FindCatalog(), Path.Combine(root, "iap-appstore"));
#else
        return Shop.StoreKitConfig(Path.Combine(root, "iap"));
#endif
    }

    // The sample catalog: Assets/StreamingAssets/Game.storekit when you put one
    // there (a desktop player build reads it from there); in the editor, the
    // Game.storekit imported with this sample (Assets/Samples/IAPBridge/<version>/
    // Example Store/), wherever the sample was imported to. No Resources folder:
    // the simulator reads the file itself, by its path.
    private static string FindCatalog()
    {
        string streaming = Path.Combine(Application.streamingAssetsPath, "Game.storekit");
        if (File.Exists(streaming)) return streaming;
#if UNITY_EDITOR
        string[] found = Directory.GetFiles(Application.dataPath, "Game.storekit", SearchOption.AllDirectories);
        if (found.Length > 0) return Path.GetFullPath(found[0]);
#endif
        return streaming; // missing: Bridge.Open answers IAP_E_CATALOG, shown on screen
    }

    private void Update()
    {
        if (shop != null) shop.Update();
    }

    private void OnApplicationPause(bool paused)
    {
        if (paused && shop != null) shop.Bridge.Flush();
    }

    private void OnDestroy()
    {
        if (shop != null) shop.Dispose();
        shop = null;
    }

    private void OnGUI()
    {
        GUILayout.BeginArea(new Rect(20, 20, Screen.width - 40, Screen.height - 40));
        if (shop == null)
        {
            GUILayout.Label("IAPBridge could not start: " + failure);
        }
        else
        {
            GUILayout.Label("Coins: " + shop.Save.Coins + "    Ads removed: " + (shop.Save.RemoveAds ? "yes" : "no") +
                            "    VIP: " + (shop.Vip ? "active" : "no") + "    Premium: " + (shop.Save.Premium ? "yes" : "no"));
            if (shop.PaymentHint != null) GUILayout.Label(shop.PaymentHint); // with "Manage subscription" in the menu
            if (menuOpen) Menu();
            else Play();
            GUILayout.Label(shop.Status);
        }
        GUILayout.EndArea();
    }

    // "Playing": the shop. StoreKit messages wait (StoreMessages.Defer).
    private void Play()
    {
        foreach (ProductInfo p in shop.Products)
        {
            if (GUILayout.Button(p.title + "    " + p.displayPrice)) shop.Buy(p.id);
        }
        string waiting = shop.StoreMessagesWaiting > 0 ? " (" + shop.StoreMessagesWaiting + " App Store message)" : "";
        if (GUILayout.Button("Menu" + waiting))
        {
            menuOpen = true;
            shop.ShowStoreMessages(); // a calm moment: the App Store's held messages appear now
        }
    }

    private void Menu()
    {
        if (GUILayout.Button("Restore purchases")) shop.Restore();
        if (GUILayout.Button("Manage subscription")) shop.ManageSubscription();
        if (GUILayout.Button("Redeem an offer code")) shop.RedeemOfferCode();
        if (GUILayout.Button("Back to the game")) menuOpen = false;
    }
}
