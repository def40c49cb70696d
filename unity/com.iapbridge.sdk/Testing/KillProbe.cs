// The armed kill point of one StoreTestKit.RunGame: throws SimulatedCrash
// where the test asked for the game to die, and runs the run's one-session
// store commands (fail_next...) on the game's first bridge.
using System.Collections.Generic;

namespace IAPBridge.Testing
{
    internal sealed class KillProbe : ITestProbe
    {
        private readonly string point;
        private readonly int nth;
        private int seen;
        private readonly Queue<string> storeOps;
        internal string KilledAt;

        internal KillProbe(string killAt, IEnumerable<string> storeOps)
        {
            nth = 1;
            if (killAt != null)
            {
                int colon = killAt.LastIndexOf(':');
                if (colon > 0) { nth = int.Parse(killAt.Substring(colon + 1)); killAt = killAt.Substring(0, colon); }
            }
            point = killAt;
            this.storeOps = new Queue<string>(storeOps ?? new string[0]);
        }

        internal void Checkpoint(string name)
        {
            if (name != point || ++seen != nth) return;
            KilledAt = name;
            throw new SimulatedCrash(name);
        }

        public void Opened(Bridge bridge)
        {
            while (storeOps.Count > 0) bridge.Simulator(storeOps.Dequeue());
        }

        public void Polled(string json)
        {
            if (point != KillPoint.AfterCharge) return;
            var m = Message.Parse(json) as PurchaseMessage;
            if (m != null && m.IsSuccess) Checkpoint(KillPoint.AfterCharge);
        }

        public void Confirming(long key) { Checkpoint(KillPoint.BeforeConfirm); }
        public void Confirmed(long key) { Checkpoint(KillPoint.AfterConfirm); }
        public bool IsKill(System.Exception e) { return e is SimulatedCrash; }
    }
}
