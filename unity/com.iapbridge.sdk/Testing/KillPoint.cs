// The kill points every test kit knows (docs/TESTKIT.md). Any other name is
// one the game's code reaches with StoreTestKit.Checkpoint(name).
namespace IAPBridge.Testing
{
    public static class KillPoint
    {
        /// The SDK hands the game a successful "7": the store charged, nothing is granted or saved.
        public const string AfterCharge = "after_charge";
        /// The game calls Confirm: it granted and saved, the SDK still holds the result.
        public const string BeforeConfirm = "before_confirm";
        /// Confirm returned (in a real kill it may not be durable yet).
        public const string AfterConfirm = "after_confirm";
    }
}
