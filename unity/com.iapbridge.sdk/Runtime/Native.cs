// The C functions of include/iap_bridge.h, declared for P/Invoke.
//
// Marshalling is done by hand on purpose: strings go in as NUL-terminated
// UTF-8 byte arrays and come back as IntPtr (read as UTF-8, then freed with
// iap_free where the header says the caller owns them). Nothing here relies on
// the runtime's default string marshalling, which differs between Mono, IL2CPP
// and .NET and is not UTF-8 everywhere.
using System;
using System.Runtime.InteropServices;

namespace IAPBridge
{
    internal static class Native
    {
#if UNITY_IOS && !UNITY_EDITOR
        // iOS links libIAPBridgeStatic.a into the app: the symbols live in the
        // executable itself. (No tvOS library ships: a tvOS player imports by
        // name below, and NativeLibrary says at run time that there is none,
        // where "__Internal" would stop Xcode's link at undefined symbols.)
        internal const string Lib = "__Internal";
#elif IAPBRIDGE_TEST_MISSING_LIBRARY
        // Tests/mono/run.sh only: a library that does not exist, to test what
        // a user without a native library for their platform sees.
        internal const string Lib = "IAPBridgeNotInstalled";
#else
        // Desktop, the editor and plain Mono load libIAPBridge.so / .dylib / .dll.
        internal const string Lib = "IAPBridge";
#endif

        /// typedef void (*iap_callback)(void *ctx, const char *json);
        [UnmanagedFunctionPointer(CallingConvention.Cdecl)]
        internal delegate void Callback(IntPtr ctx, IntPtr json);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr iap_version();

        /// Since 1.1: major * 10000 + minor * 100 + patch.
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int iap_version_number();

        /// Promoted purchases heard from launch (iap_launch).
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int iap_launch();

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int iap_open(byte[] configJson, out IntPtr bridge);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int iap_close(IntPtr bridge);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int iap_request_products(IntPtr bridge, byte[] productIdsJson);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int iap_buy(IntPtr bridge, byte[] productId, long clickMs, out long key);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int iap_buy_quantity(IntPtr bridge, byte[] productId, int quantity, long clickMs, out long key);

        /// A win-back offer (iOS 18+); absent from libraries built before it.
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int iap_buy_offer(IntPtr bridge, byte[] productId, byte[] offerId, long clickMs, out long key);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int iap_confirm(IntPtr bridge, long key);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int iap_restore(IntPtr bridge);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr iap_poll(IntPtr bridge);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern void iap_free(IntPtr p);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int iap_set_callback(IntPtr bridge, IntPtr callback, IntPtr ctx);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr iap_errmsg();

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr iap_error_name(int code);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int iap_simulator(IntPtr bridge, byte[] commandJson, out IntPtr outJson);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int iap_flush(IntPtr bridge);

        // Subscriptions, the app transaction, sheets, StoreKit messages (1.1).

        /// productIdsJson null: every group the player ever subscribed in.
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int iap_subscription_status(IntPtr bridge, byte[] productIdsJson);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int iap_app_transaction(IntPtr bridge);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int iap_manage_subscriptions(IntPtr bridge);

        /// The manage sheet of one group (iOS 17+); absent from libraries built before it.
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int iap_manage_subscription_group(IntPtr bridge, byte[] groupId);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int iap_request_refund(IntPtr bridge, byte[] transactionId);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int iap_redeem_offer_code(IntPtr bridge);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int iap_show_store_messages(IntPtr bridge);
    }
}

#if !UNITY_5_3_OR_NEWER
namespace AOT
{
    /// Unity's UnityEngine defines AOT.MonoPInvokeCallbackAttribute; IL2CPP
    /// needs it on every static method native code calls back. Outside Unity
    /// (plain Mono, .NET) it does not exist, so the binding brings its own.
    [AttributeUsage(AttributeTargets.Method)]
    public sealed class MonoPInvokeCallbackAttribute : Attribute
    {
        public MonoPInvokeCallbackAttribute(Type delegateType) { DelegateType = delegateType; }
        public Type DelegateType { get; private set; }
    }
}
#endif
