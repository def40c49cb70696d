// UTF-8 in both directions, without the runtime's string marshalling.
using System;
using System.Runtime.InteropServices;
using System.Text;

namespace IAPBridge
{
    internal static class Utf8
    {
        // Throws on unpaired surrogates instead of silently writing U+FFFD:
        // a product ID must reach the store exactly as the game wrote it.
        private static readonly UTF8Encoding Strict = new UTF8Encoding(false, true);

        /// The NUL-terminated UTF-8 bytes of `s`, or null for a null string
        /// (the library then answers IAP_E_NULL_ARG). A string containing NUL
        /// or an unpaired surrogate is refused with IAP_E_INVALID_ARG: C would
        /// silently cut it short or receive invalid UTF-8.
        internal static byte[] ToNative(string s, string what)
        {
            if (s == null) return null;
            if (s.IndexOf('\0') >= 0)
                throw new BridgeException(ErrorCode.InvalidArg, what + " contains a NUL character");
            byte[] bytes;
            try
            {
                int n = Strict.GetByteCount(s);
                bytes = new byte[n + 1];
                Strict.GetBytes(s, 0, s.Length, bytes, 0);
            }
            catch (ArgumentException)
            {
                throw new BridgeException(ErrorCode.InvalidArg, what + " is not valid Unicode (unpaired surrogate)");
            }
            return bytes;
        }

        /// Reads a NUL-terminated UTF-8 string the library returned; does not
        /// free it. IntPtr.Zero gives null.
        internal static string FromNative(IntPtr p)
        {
            if (p == IntPtr.Zero) return null;
            int len = 0;
            while (Marshal.ReadByte(p, len) != 0) len++;
            if (len == 0) return string.Empty;
            var bytes = new byte[len];
            Marshal.Copy(p, bytes, 0, len);
            return Encoding.UTF8.GetString(bytes);
        }

        /// Reads a string the caller owns (iap_poll, iap_simulator), then frees it.
        internal static string TakeNative(IntPtr p)
        {
            if (p == IntPtr.Zero) return null;
            try { return FromNative(p); }
            finally { Native.iap_free(p); }
        }
    }
}
