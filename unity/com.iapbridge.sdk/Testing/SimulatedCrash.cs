// The game "died" at a kill point: thrown by the test kit from inside the
// bridge call where the process would have been killed, so none of the
// game's code after that point runs. StoreTestKit.RunGame catches it.
using System;

namespace IAPBridge.Testing
{
    public sealed class SimulatedCrash : Exception
    {
        public readonly string Point;

        public SimulatedCrash(string point)
            : base("IAPBridge test kit: the game was killed at " + point + " (caught by StoreTestKit.RunGame; do not catch it in game code)")
        {
            Point = point;
        }
    }
}
