// Where the test kit (the IAPBridge.Testing assembly, Testing/) plays a
// process kill in an edit-mode test: it sees each bridge open, each message
// polled and each confirm, and may throw there so that none of the game's
// code after that point runs. Unset (null) in games: one null check per call.
using System.Runtime.CompilerServices;

[assembly: InternalsVisibleTo("IAPBridge.Testing")]

namespace IAPBridge
{
    internal interface ITestProbe
    {
        void Opened(Bridge bridge);
        void Polled(string json);
        void Confirming(long key);
        void Confirmed(long key);
        /// Whether `e` is the kit's simulated kill: DispatchPending lets it
        /// through where it catches a handler's exception.
        bool IsKill(System.Exception e);
    }

    internal static class TestHooks
    {
        internal static volatile ITestProbe Probe = null;

        internal static bool IsKill(System.Exception e)
        {
            var probe = Probe;
            return probe != null && probe.IsKill(e);
        }
    }
}
