// Errors: the numeric codes of include/iap_bridge.h and the exception that carries them.
using System;

namespace IAPBridge
{
    /// The IAP_E_* result codes of include/iap_bridge.h. The numbers never change meaning.
    public static class ErrorCode
    {
        public const int Ok = 0;
        /// A required argument was null.
        public const int NullArg = -1;
        /// An argument is malformed: invalid UTF-8, too long, empty, out of range.
        public const int InvalidArg = -2;
        /// A JSON argument does not parse or has the wrong shape.
        public const int BadJson = -3;
        /// The Open config has an unknown key, misses one, or has a relative path.
        public const int BadConfig = -4;
        /// The simulator's .storekit catalog is missing or malformed.
        public const int Catalog = -5;
        /// dataDir/stateDir cannot be created or written, or a disk write failed.
        public const int IO = -6;
        /// Not a bridge returned by Open.
        public const int InvalidHandle = -7;
        /// The bridge was closed (Dispose).
        public const int Closed = -8;
        /// dataDir or stateDir is used by another open bridge (this process or
        /// another); ManageSubscriptions, RequestRefund, RedeemOfferCode: another
        /// sheet is still up (wait for its SheetClosed).
        public const int Busy = -9;
        /// Buy: the store does not sell this product ID.
        public const int UnknownProduct = -10;
        /// No longer returned (1.0 refused a used click key; 1.1 replaces it, see Buy).
        public const int DuplicateKey = -11;
        /// Confirm: no unconfirmed result has this key (harmless after a double confirm).
        public const int UnknownKey = -12;
        /// Not available on this store (Simulator on StoreKit, StoreKit on Linux),
        /// or the store or OS lacks the feature (e.g. RedeemOfferCode below iOS 16).
        public const int NotSupported = -13;
        /// Simulator: unknown "op".
        public const int UnknownOp = -14;
        /// Simulator: no such transaction or pending purchase.
        public const int NotFound = -15;
        /// A bug in IAPBridge; please report it with the message.
        public const int Internal = -16;
        /// Confirm: the result with this key has not been handed to the game yet (handle it, then confirm).
        public const int NotDelivered = -17;
        /// Open: the system refused a thread the bridge needs.
        public const int Resource = -18;
        /// In an "error" message: the store reported a failure.
        public const int Store = -19;

        private static readonly string[] Names =
        {
            "IAP_OK", "IAP_E_NULL_ARG", "IAP_E_INVALID_ARG", "IAP_E_BAD_JSON", "IAP_E_BAD_CONFIG",
            "IAP_E_CATALOG", "IAP_E_IO", "IAP_E_INVALID_HANDLE", "IAP_E_CLOSED", "IAP_E_BUSY",
            "IAP_E_UNKNOWN_PRODUCT", "IAP_E_DUPLICATE_KEY", "IAP_E_UNKNOWN_KEY", "IAP_E_NOT_SUPPORTED",
            "IAP_E_UNKNOWN_OP", "IAP_E_NOT_FOUND", "IAP_E_INTERNAL", "IAP_E_NOT_DELIVERED",
            "IAP_E_RESOURCE", "IAP_E_STORE",
        };

        /// The header's name of a code, e.g. "IAP_E_UNKNOWN_KEY" (the list is
        /// checked against include/iap_bridge.h by the Swift test suite).
        public static string Name(int code)
        {
            return code <= 0 && -code < Names.Length ? Names[-code] : "IAP_E_UNKNOWN_CODE";
        }
    }

    /// A call into the library failed. `Code` is one of ErrorCode; `LibraryMessage`
    /// is the library's sentence about it (iap_errmsg).
    public sealed class BridgeException : Exception
    {
        public int Code { get; private set; }
        public string CodeName { get { return ErrorCode.Name(Code); } }
        public string LibraryMessage { get; private set; }

        public BridgeException(int code, string libraryMessage)
            : base(ErrorCode.Name(code) + " (" + code + "): " + libraryMessage)
        {
            Code = code;
            LibraryMessage = libraryMessage ?? "";
        }
    }
}
