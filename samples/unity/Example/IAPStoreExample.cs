// The example store as a MonoBehaviour: add it to any GameObject of an empty
// scene and press Play. All the logic is in Shop.cs; this file holds the only
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

    private void Start()
    {
        Bridge.Log = Debug.LogWarning;
        string root = Application.persistentDataPath;
        try
        {
            shop = new Shop(Config(root), Path.Combine(root, "example-save.txt"));
        }
        catch (Exception e) // BridgeException, or DllNotFoundException when the native plugin is missing
        {
            failure = e.Message;
            Debug.LogException(e);
        }
    }

    private static string Config(string root)
    {
#if UNITY_EDITOR || !(UNITY_IOS || UNITY_TVOS || UNITY_STANDALONE_OSX)
        // Editor and desktop: the simulated App Store, reading the sample
        // catalog from Assets/StreamingAssets/Game.storekit.
        return BridgeConfig.Simulator(Path.Combine(root, "iap"),
            Path.Combine(Application.streamingAssetsPath, "Game.storekit"),
            Path.Combine(root, "iap-appstore"));
#else
        return BridgeConfig.StoreKit(Path.Combine(root, "iap"));
#endif
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
                            "    VIP: " + (shop.Vip ? "active" : "no"));
            foreach (ProductInfo p in shop.Products)
            {
                if (GUILayout.Button(p.title + "    " + p.displayPrice)) shop.Buy(p.id);
            }
            if (GUILayout.Button("Restore purchases")) shop.Restore();
            GUILayout.Label(shop.Status);
        }
        GUILayout.EndArea();
    }
}
