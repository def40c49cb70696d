// Whether the native library can be used, checked once, and what to tell a
// Unity user when it cannot: which platform has no library and how to get one.
// A missing library is reported ONCE through Bridge.Log; every later call
// fails at once with a BridgeException carrying ErrorCode.NotSupported and
// the same sentence, instead of a DllNotFoundException every frame.
using System;
using System.IO;

namespace IAPBridge
{
    internal static class NativeLibrary
    {
        /// IAP_VERSION_NUMBER of the header this binding follows (1.1.0). A
        /// library with another major version, or an older one, is refused.
        internal const int ExpectedVersion = 10100;

        /// Where the package keeps its native libraries.
        internal const string PluginsFolder = "Packages/com.iapbridge.sdk/Runtime/Plugins";

        private static readonly object Gate = new object();
        private static bool usable;
        private static string failure;

        /// Returns when the library is loaded and of a version this binding
        /// speaks; otherwise throws BridgeException(NotSupported). Cheap after
        /// the first call.
        internal static void Require()
        {
            lock (Gate)
            {
                if (usable) return;
                if (failure == null)
                {
                    failure = Probe();
                    if (failure == null) { usable = true; return; }
                    try { Bridge.Log(failure); } catch { }
                }
            }
            throw new BridgeException(ErrorCode.NotSupported, failure);
        }

        /// Forgets the result (play-mode entry: the library may have been added since).
        internal static void Reset()
        {
            lock (Gate) { usable = false; failure = null; }
        }

        private static string Probe()
        {
            try
            {
                int v = Native.iap_version_number();
                if (v / 10000 != ExpectedVersion / 10000 || v < ExpectedVersion)
                    return "IAPBridge: the native library is version " + v / 10000 + "." + v / 100 % 100 + "." + v % 100 +
                           "; this binding needs 1.1.0 or a later 1.x. Replace the library in " + PluginsFolder +
                           " with the one built from the same release as the package (see Documentation~/index.md).";
                return null;
            }
            catch (DllNotFoundException) { return Missing(null); }
            catch (BadImageFormatException e) { return Missing("the file found is for another CPU or system: " + e.Message); }
            catch (EntryPointNotFoundException)
            {
                return "IAPBridge: the native library found is older than 1.1 (it has no iap_version_number); " +
                       "this binding needs 1.1.0 or a later 1.x. Replace it with the one built from the same release " +
                       "as the package (see Documentation~/index.md).";
            }
        }

        private static string Missing(string detail)
        {
            return "IAPBridge: no native library for " + Platform() + " (the runtime could not load \"" + Native.Lib + "\"" +
                   (detail == null ? "" : ": " + detail) + "). " + HowToGetOne() + " See the package documentation (Documentation~/index.md) " +
                   "or docs/INTEGRATION.md. Until then every IAPBridge call fails with IAP_E_NOT_SUPPORTED.";
        }

        private static string Bits { get { return IntPtr.Size == 8 ? " 64-bit" : " 32-bit"; } }

        internal static string Platform()
        {
// The editor's own system first: in an editor the build target's defines
// (UNITY_STANDALONE_WIN for a Windows target on a Linux editor) are set too,
// and the library that failed to load is the editor's.
#if UNITY_EDITOR_WIN
            return "Windows" + Bits;
#elif UNITY_EDITOR_OSX
            return "macOS" + Bits;
#elif UNITY_EDITOR_LINUX
            return "Linux" + Bits;
#elif UNITY_STANDALONE_WIN
            return "Windows" + Bits;
#elif UNITY_STANDALONE_OSX
            return "macOS" + Bits;
#elif UNITY_STANDALONE_LINUX
            return "Linux" + Bits;
#elif UNITY_IOS
            return "iOS";
#elif UNITY_TVOS
            return "tvOS (no library ships for it)";
#elif UNITY_ANDROID
            return "Android";
#elif UNITY_5_3_OR_NEWER
            return "this platform";
#else
            if (Environment.OSVersion.Platform == PlatformID.Win32NT) return "Windows" + Bits;
            if (Directory.Exists("/System/Library/CoreServices")) return "macOS" + Bits;
            return "Linux" + Bits;
#endif
        }

        private static string HowToGetOne()
        {
            string p = Platform();
            if (p.StartsWith("Windows", StringComparison.Ordinal))
                return "No Windows library exists yet: the SDK's storage and threads are written against POSIX " +
                       "(open, fsync, flock, pthreads) and have no Windows port, so the Swift toolchain for Windows " +
                       "cannot build it as it is. Develop with the simulated store in an editor on macOS or Linux, " +
                       "where the package's own libraries in " + PluginsFolder + " load with no step of yours.";
            if (p.StartsWith("macOS", StringComparison.Ordinal))
                return "The package ships it as " + PluginsFolder + "/macOS/libIAPBridge.dylib (arm64 + x86_64, macOS 12+): " +
                       "check that the file is there and enabled for the Editor in its Inspector, or rebuild it in a clone " +
                       "of the IAPBridge repository with bash scripts/build-plugins.sh.";
            if (p.StartsWith("Linux", StringComparison.Ordinal))
                return "The package ships it as " + PluginsFolder + "/Linux/x86_64/libIAPBridge.so (x86_64, glibc): " +
                       "it needs glibc 2.35 or later (Ubuntu 22.04, Debian 12 or newer; `ldd --version` tells), and an older " +
                       "system fails to load it without saying why. Check that, and that the file is there and enabled for " +
                       "the Editor in its Inspector, or rebuild it on your system in a clone of the IAPBridge repository " +
                       "with bash scripts/build-plugins.sh.";
            if (p.StartsWith("iOS", StringComparison.Ordinal))
                return "The app must link the package's " + PluginsFolder + "/iOS/libIAPBridgeStatic.a (arm64 devices; " +
                       "enabled for iOS in its Inspector); a Simulator build needs the XCFramework built on a Mac " +
                       "(scripts/build-xcframework.sh).";
            return "IAPBridge sells through Apple's App Store (StoreKit) and its simulator; there is no library for this platform.";
        }
    }
}
