// Unity's lifecycle hooks for the binding (compiled only by Unity).
//
// Play-mode entry, with or without domain reload ("Enter Play Mode Options"):
// static fields survive when domain reload is off, so a bridge the last
// session left open would still hold dataDir (IAP_E_BUSY) and a Log delegate
// could point at destroyed objects; SubsystemRegistration runs before any
// scene loads and resets them. In the editor: bridges are disposed before an
// assembly reload (recompiling, entering or leaving Play mode with domain
// reload on; AppDomain.DomainUnload does it too), after Play mode ends (once
// the scene's OnDestroy/OnApplicationQuit ran, so a Flush there still works)
// and when the editor quits.
#if UNITY_5_3_OR_NEWER
using UnityEngine;

namespace IAPBridge
{
    internal static class UnityLifecycle
    {
        [RuntimeInitializeOnLoadMethod(RuntimeInitializeLoadType.SubsystemRegistration)]
        private static void OnPlayModeEntry()
        {
            Bridge.ResetStatics();
        }

#if (UNITY_IOS || UNITY_STANDALONE_OSX) && !UNITY_EDITOR
        // A player who taps a purchase promoted on the App Store cold-starts
        // the game: StoreKit hands the intent over at launch, before any
        // scene could open a bridge (iap_launch in iap_bridge.h).
        [RuntimeInitializeOnLoadMethod(RuntimeInitializeLoadType.BeforeSceneLoad)]
        private static void ListenForPromotedPurchases()
        {
            try { Bridge.Launch(); } catch (BridgeException) { }
        }
#endif

#if UNITY_EDITOR
        [UnityEditor.InitializeOnLoadMethod]
        private static void OnEditorLoad()
        {
            UnityEditor.AssemblyReloadEvents.beforeAssemblyReload += Bridge.DisposeAll;
            UnityEditor.EditorApplication.quitting += Bridge.DisposeAll;
            UnityEditor.EditorApplication.playModeStateChanged += state =>
            {
                if (state == UnityEditor.PlayModeStateChange.EnteredEditMode) Bridge.DisposeAll();
            };
        }
#endif
    }
}
#endif
