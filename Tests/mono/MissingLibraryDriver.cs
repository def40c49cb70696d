// What a Unity user sees without a native library for their platform (the
// Windows editor, a Linux editor whose plugin was removed or disabled): the
// runtime assembly is compiled with IAPBRIDGE_TEST_MISSING_LIBRARY, which
// makes it load a library that does not exist (Runtime/Native.cs).
//
//   mono missing.exe <catalog.storekit> [windows]   (Tests/mono/run.sh; "windows": the
//                                                   runtime was compiled as for Windows)
//
// The first call must log ONE sentence saying which platform has no library
// and how to get one; that call and every later one must throw a
// BridgeException with ErrorCode.NotSupported, fast, and never a
// DllNotFoundException.
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using IAPBridge;

static class MissingLibraryDriver
{
    static int passed, failed;

    static void Check(bool ok, string what, string detail = "")
    {
        if (ok) { passed++; Console.WriteLine("ok   " + what); }
        else { failed++; Console.WriteLine("FAIL " + what + (detail.Length > 0 ? ": " + detail : "")); }
    }

    static BridgeException Call(Action a)
    {
        try { a(); }
        catch (BridgeException e) { return e; }
        catch (Exception e) { Check(false, "only BridgeException escapes", e.GetType().Name + ": " + e.Message); }
        return null;
    }

    static int Main(string[] args)
    {
        string catalog = Path.GetFullPath(args.Length > 0 ? args[0] : "Game.storekit");
        bool windows = args.Length > 1 && args[1] == "windows";
        string dir = Path.Combine(Path.GetTempPath(), "iap-missing-" + Guid.NewGuid().ToString("N"));
        string config = BridgeConfig.Simulator(Path.Combine(dir, "data"), catalog);
        var logged = new List<string>();
        Bridge.Log = s => logged.Add(s);

        var first = Call(() => Bridge.Open(config));
        Check(first != null && first.Code == ErrorCode.NotSupported && first.CodeName == "IAP_E_NOT_SUPPORTED",
              "no library: Open throws BridgeException(NotSupported)", first == null ? "no exception" : first.Message);
        Check(logged.Count == 1, "no library: said once through Bridge.Log", logged.Count + " messages");
        string said = logged.Count > 0 ? logged[0] : "";
        Console.WriteLine("     the message: " + said);
        if (windows)
        {
            // The runtime compiled as for the Windows editor (UNITY_STANDALONE_WIN): no
            // Windows library exists; the message says so and what to do instead.
            Check(said.StartsWith("IAPBridge: no native library for Windows 64-bit", StringComparison.Ordinal),
                  "Windows: the message names the platform", said);
            Check(said.Contains("No Windows library exists yet") && said.Contains("POSIX") &&
                  said.Contains("macOS or Linux") && said.Contains("Documentation~/index.md") &&
                  said.Contains("IAP_E_NOT_SUPPORTED"),
                  "Windows: the message says there is none, why, what to use instead, and what calls do meanwhile", said);
        }
        else
        {
            Check(said.StartsWith("IAPBridge: no native library for Linux 64-bit", StringComparison.Ordinal) ||
                  said.StartsWith("IAPBridge: no native library for macOS", StringComparison.Ordinal),
                  "the message names the platform", said);
            Check(said.Contains("scripts/build-plugins.sh") && said.Contains("Runtime/Plugins") &&
                  said.Contains("Documentation~/index.md") && said.Contains("IAP_E_NOT_SUPPORTED"),
                  "the message says where the package keeps it, how to rebuild it, where the documentation is, and what calls do meanwhile", said);
        }
        Check(first != null && first.LibraryMessage == said, "the exception carries the same sentence");

        var sw = Stopwatch.StartNew();
        int notSupported = 0;
        for (int i = 0; i < 1000; i++)
        {
            var e = Call(() => Bridge.Open(config));
            if (e != null && e.Code == ErrorCode.NotSupported) notSupported++;
            e = Call(() => { var v = Bridge.Version; GC.KeepAlive(v); });
            if (e != null && e.Code == ErrorCode.NotSupported) notSupported++;
        }
        sw.Stop();
        Check(notSupported == 2000, "1000 frames of Open and Version: each NotSupported", notSupported + " of 2000");
        Check(logged.Count == 1, "...and still only one message", logged.Count + " messages");
        Check(sw.ElapsedMilliseconds < 2000, "...failing fast", sw.ElapsedMilliseconds + " ms for 2000 calls");
        Check(!Directory.Exists(dir), "nothing was created on disk");

        // Play-mode entry (UnityLifecycle -> Bridge.ResetStatics) checks again: the
        // user may have added the library since. Still missing: said once more.
        var reset = typeof(Bridge).GetMethod("ResetStatics", System.Reflection.BindingFlags.NonPublic | System.Reflection.BindingFlags.Static);
        reset.Invoke(null, null);
        Bridge.Log = s => logged.Add(s);
        Call(() => Bridge.Open(config));
        Call(() => Bridge.Open(config));
        Check(logged.Count == 2, "after a play-mode entry the library is looked for again, and its absence said once more",
              logged.Count + " messages");

        Console.WriteLine("mono (missing library): " + passed + " passed, " + failed + " failed");
        return failed == 0 && passed > 0 ? 0 : 1;
    }
}
