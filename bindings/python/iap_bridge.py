"""IAPBridge for Python (Ren'Py, pygame, any CPython 3.7+), through ctypes.

One file: copy it into your game and ship libIAPBridge next to it.

    import iap_bridge as iap

    with iap.Bridge.open(iap.simulator_config(data_dir, catalog, state_dir)) as bridge:
        bridge.request_products(["coins_100", "remove_ads"])   # a "999" message answers
        key = bridge.buy("coins_100", click_ms)                # int: the key actually used
        # every frame (save.granted: the keys your save holds):
        for m in bridge.messages():
            msg = iap.parse_message(m)                         # a dict (json.loads)
            if msg["type"] in ("7", "revoked"):
                k = iap.key_of(msg)                            # int, exact
                if k not in save.granted:                      # each key once, also when delivered again
                    if msg["type"] == "revoked":               # a refund: take the item back
                        take_back(msg); save.add(k)            # save.add(k) saves the game
                    elif msg["result"] == "0":                 # grant a success only, never "1" (cancelled) etc.
                        grant(msg); save.add(k)                # (a failure's key is not saved: it may succeed later)
                bridge.confirm(k)                              # then confirm every "7" and "revoked"

Errors raise IAPError (.code, .name, .message). Keys are Python ints (exact at
any size; range-checked to int64); messages carry them as decimal strings and
key_of() converts them with int(), never through a float.

The library is found, in order: the path given to load() / Bridge.open(lib=),
$IAP_LIB, libIAPBridge.so/.dylib next to this file, then the system loader.
"""

import ctypes
import ctypes.util
import json
import os
import sys
import threading
import traceback

__all__ = [
    "IAPError", "Library", "Bridge", "load", "simulator_config", "storekit_config",
    "parse_message", "key_of", "error_name", "CODES",
]

# ---- result codes (iap_bridge.h, plus those announced for 1.1) ------------

IAP_OK = 0
IAP_E_NULL_ARG = -1
IAP_E_INVALID_ARG = -2
IAP_E_BAD_JSON = -3
IAP_E_BAD_CONFIG = -4
IAP_E_CATALOG = -5
IAP_E_IO = -6
IAP_E_INVALID_HANDLE = -7
IAP_E_CLOSED = -8
IAP_E_BUSY = -9
IAP_E_UNKNOWN_PRODUCT = -10
IAP_E_DUPLICATE_KEY = -11
IAP_E_UNKNOWN_KEY = -12
IAP_E_NOT_SUPPORTED = -13
IAP_E_UNKNOWN_OP = -14
IAP_E_NOT_FOUND = -15
IAP_E_INTERNAL = -16
IAP_E_NOT_DELIVERED = -17  # iap_confirm of a result not yet handed to the game
IAP_E_RESOURCE = -18       # a thread, descriptor or memory could not be had
IAP_E_STORE = -19          # the store reported a failure

CODES = {name: value for name, value in globals().items() if name.startswith("IAP_") and isinstance(value, int)}
_NAMES = {value: name for name, value in CODES.items()}

INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1


def error_name(code):
    """The name of a result code, e.g. "IAP_E_DUPLICATE_KEY"."""
    return _NAMES.get(code, "IAP_E_UNKNOWN_CODE")


class IAPError(Exception):
    """A call failed: .code (negative int), .name ("IAP_E_..."), .message (the library's sentence)."""

    def __init__(self, code, message=""):
        self.code = code
        self.name = error_name(code)
        self.message = message
        super().__init__("%s (%d): %s" % (self.name, code, message))


# ---- the library ------------------------------------------------------------

_c_int32 = ctypes.c_int32
_c_int64 = ctypes.c_int64
_c_char_p = ctypes.c_char_p
_c_void_p = ctypes.c_void_p

CALLBACK = ctypes.CFUNCTYPE(None, _c_void_p, _c_char_p)

# name: (restype, argtypes). Strings the caller must free (iap_poll's result,
# iap_simulator's out) are c_void_p: c_char_p would copy and leak them.
_SIGNATURES = {
    "iap_version": (_c_char_p, []),
    "iap_open": (_c_int32, [_c_char_p, ctypes.POINTER(_c_void_p)]),
    "iap_close": (_c_int32, [_c_void_p]),
    "iap_request_products": (_c_int32, [_c_void_p, _c_char_p]),
    "iap_buy": (_c_int32, [_c_void_p, _c_char_p, _c_int64, ctypes.POINTER(_c_int64)]),
    "iap_buy_quantity": (_c_int32, [_c_void_p, _c_char_p, _c_int32, _c_int64, ctypes.POINTER(_c_int64)]),
    "iap_buy_offer": (_c_int32, [_c_void_p, _c_char_p, _c_char_p, _c_int64, ctypes.POINTER(_c_int64)]),
    "iap_confirm": (_c_int32, [_c_void_p, _c_int64]),
    "iap_restore": (_c_int32, [_c_void_p]),
    "iap_poll": (_c_void_p, [_c_void_p]),
    "iap_free": (None, [_c_void_p]),
    "iap_set_callback": (_c_int32, [_c_void_p, CALLBACK, _c_void_p]),
    "iap_errmsg": (_c_char_p, []),
    "iap_error_name": (_c_char_p, [_c_int32]),
    "iap_simulator": (_c_int32, [_c_void_p, _c_char_p, ctypes.POINTER(_c_void_p)]),
    "iap_flush": (_c_int32, [_c_void_p]),
    "iap_subscription_status": (_c_int32, [_c_void_p, _c_char_p]),
    "iap_app_transaction": (_c_int32, [_c_void_p]),
    "iap_manage_subscriptions": (_c_int32, [_c_void_p]),
    "iap_manage_subscription_group": (_c_int32, [_c_void_p, _c_char_p]),
    "iap_request_refund": (_c_int32, [_c_void_p, _c_char_p]),
    "iap_redeem_offer_code": (_c_int32, [_c_void_p]),
    "iap_show_store_messages": (_c_int32, [_c_void_p]),
}
_OPTIONAL = {
    "iap_version_number": (_c_int32, []),  # newer libraries only
    "iap_launch": (_c_int32, []),  # newer libraries only
}


class Library:
    """The loaded library. .C is the ctypes CDLL with every signature set."""

    def __init__(self, path):
        self.path = path
        try:
            self.C = ctypes.CDLL(path)
        except OSError as e:
            here = os.path.dirname(os.path.abspath(__file__))
            raise OSError(
                "iap_bridge: cannot load the IAPBridge library %r (%s). load() looks at the path it is given, "
                "then $IAP_LIB, then this module's folder %s, then the system loader. Build the library with "
                "`bash scripts/build-lib.sh` (out/lib/libIAPBridge.so, .dylib on macOS) and copy it next to "
                "iap_bridge.py, or set IAP_LIB to its path." % (path, e, here)) from e
        for name, (restype, argtypes) in _SIGNATURES.items():
            fn = getattr(self.C, name)
            fn.restype = restype
            fn.argtypes = argtypes
        self._optional = {}
        for name, (restype, argtypes) in _OPTIONAL.items():
            try:
                fn = getattr(self.C, name)
            except AttributeError:
                continue
            fn.restype = restype
            fn.argtypes = argtypes
            self._optional[name] = fn
        self._version_number = self._optional.get("iap_version_number")

    def version(self):
        """The library's version string, e.g. "1.0.0"."""
        return self.C.iap_version().decode("utf-8")

    def version_number(self):
        """major*10000 + minor*100 + patch, or None when the library does not export it."""
        return self._version_number() if self._version_number else None

    def launch(self):
        """iap_launch: listen for purchases promoted on the App Store from launch
        (iOS 16.4+, macOS 14.4+). Returns 0 (IAP_OK) or the code, such as
        IAP_E_NOT_SUPPORTED (-13) where there is nothing to listen to: harmless."""
        fn = self._optional.get("iap_launch")
        return fn() if fn else -13

    def errmsg(self):
        """This thread's last error sentence."""
        return self.C.iap_errmsg().decode("utf-8", "replace")

    def error(self, rc):
        return IAPError(rc, self.errmsg())

    def open(self, config):
        """Opens a bridge; config is a JSON string or a dict. Raises IAPError."""
        return Bridge.open(config, lib=self)


_libraries = {}
_load_lock = threading.Lock()


def _default_path():
    env = os.environ.get("IAP_LIB")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    for name in ("libIAPBridge.so", "libIAPBridge.dylib", "IAPBridge.dll"):
        candidate = os.path.join(here, name)
        if os.path.exists(candidate):
            return candidate
    found = ctypes.util.find_library("IAPBridge")
    if found:
        return found
    return "libIAPBridge.dylib" if sys.platform == "darwin" else "libIAPBridge.so"


def load(path=None):
    """Loads the library (once per path) and returns it. Raises OSError if it cannot."""
    path = path or _default_path()
    with _load_lock:
        lib = _libraries.get(path)
        if lib is None:
            lib = _libraries[path] = Library(path)
        return lib


# ---- helpers -----------------------------------------------------------------

def _json_arg(value, what):
    if isinstance(value, tuple):
        value = list(value)
    if isinstance(value, (dict, list)):
        value = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return _utf8(value, what)


def _utf8(value, what):
    if not isinstance(value, str):
        raise TypeError("%s must be a str, not %s" % (what, type(value).__name__))
    if "\0" in value:
        raise IAPError(IAP_E_INVALID_ARG, "%s contains a NUL character" % what)
    try:
        return value.encode("utf-8")
    except UnicodeEncodeError as e:  # lone surrogates
        raise IAPError(IAP_E_INVALID_ARG, "%s is not valid Unicode: %s" % (what, e))


def _key_arg(key, what="key"):
    """A key or click time as an int64, exactly. Accepts int and decimal str; refuses floats."""
    if isinstance(key, bool) or not isinstance(key, (int, str)):
        raise TypeError("%s must be an int or a decimal str (never a float: it loses digits above 2**53), not %s"
                        % (what, type(key).__name__))
    if isinstance(key, str):
        s = key.strip()
        body = s[1:] if s.startswith("-") else s
        if not body.isdigit() or not body.isascii():
            raise ValueError("%s is not a decimal integer: %r" % (what, key))
        key = int(s)
    if not INT64_MIN <= key <= INT64_MAX:
        raise ValueError("%s %d is outside int64" % (what, key))
    return key


def simulator_config(data_dir, catalog, state_dir=None, app_version=None, **extra):
    """The config of a simulated-store bridge (absolute paths; parents must exist).
    app_version: the game version the simulated player runs (the "app" message's).
    extra: other top-level keys, e.g. storeMessages="defer"."""
    config = {"store": "simulator", "dataDir": data_dir, "catalog": catalog}
    simulator = {}
    if state_dir is not None:
        simulator["stateDir"] = state_dir
    if app_version is not None:
        simulator["appVersion"] = app_version
    if simulator:
        config["simulator"] = simulator
    config.update(extra)
    return json.dumps(config, ensure_ascii=False)


def storekit_config(data_dir, **extra):
    """The config of a StoreKit 2 bridge (Apple platforms)."""
    config = {"store": "storekit", "dataDir": data_dir}
    config.update(extra)
    return json.dumps(config, ensure_ascii=False)


def parse_message(message):
    """A message (JSON str) as a dict. Keys stay decimal strings: use key_of()."""
    return json.loads(message)


def key_of(message):
    """The "key" of a message (a JSON str or a parsed dict) as an exact int."""
    if isinstance(message, str):
        message = json.loads(message)
    return _key_arg(message["key"])


# ---- the bridge --------------------------------------------------------------

class Bridge:
    """An open bridge. Use it as a context manager, or call close().

    Every method raises IAPError on failure; after close() they raise
    IAPError(IAP_E_CLOSED) without touching the library.
    """

    def __init__(self, lib, handle):
        self._lib = lib
        self._C = lib.C
        self._handle = handle
        self._closed = False
        self._callbacks = []  # CFUNCTYPE objects kept alive until close
        self._lock = threading.Lock()

    @classmethod
    def open(cls, config, lib=None):
        """Opens a bridge. config: a JSON str (see simulator_config) or a dict."""
        lib = lib if isinstance(lib, Library) else load(lib)
        out = _c_void_p()
        rc = lib.C.iap_open(_json_arg(config, "the config"), ctypes.byref(out))
        if rc != IAP_OK:
            raise lib.error(rc)
        return cls(lib, out)

    @property
    def lib(self):
        return self._lib

    @property
    def closed(self):
        return self._closed

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if not self._closed:
            self.close()
        return False

    def __del__(self):
        # A bridge dropped without close(): close it (results stay on disk anyway).
        try:
            if not self._closed:
                self.close()
        except Exception:
            pass

    def _h(self):
        if self._closed:
            raise IAPError(IAP_E_CLOSED, "the bridge was closed; open a new one")
        return self._handle

    def _check(self, rc):
        if rc != IAP_OK:
            raise self._lib.error(rc)

    def close(self):
        """Closes the bridge (waits for purchases under way and durable confirms)."""
        with self._lock:
            h = self._h()
            self._closed = True
            self._handle = None  # never handed to the library again
        rc = self._C.iap_close(h)
        self._callbacks = []  # iap_close stopped the callback
        self._check(rc)

    def request_products(self, product_ids):
        """Asks for product info (a list of IDs, or a JSON array str); a "999" answers."""
        self._check(self._C.iap_request_products(self._h(), _json_arg(product_ids, "the product list")))

    def buy(self, product_id, click_ms=0):
        """Starts a purchase. click_ms <= 0 lets the SDK pick a fresh key.
        Returns the key the "7" will carry (not necessarily click_ms)."""
        pid = _utf8(product_id, "the product ID")
        click = _key_arg(click_ms, "click_ms")
        out = _c_int64(0)
        self._check(self._C.iap_buy(self._h(), pid, click, ctypes.byref(out)))
        return out.value

    def buy_quantity(self, product_id, quantity, click_ms=0):
        """buy() for `quantity` units (1 to 10) of a consumable in one purchase;
        the "7" carries "quantity" and the price of all of them. The library
        answers IAP_E_INVALID_ARG for a quantity outside 1...10."""
        if isinstance(quantity, bool) or not isinstance(quantity, int):
            raise TypeError("quantity must be an int, not %s" % type(quantity).__name__)
        if not -2**31 <= quantity < 2**31:
            raise ValueError("quantity %d is outside int32 (the App Store allows 1 to 10)" % quantity)
        pid = _utf8(product_id, "the product ID")
        click = _key_arg(click_ms, "click_ms")
        out = _c_int64(0)
        self._check(self._C.iap_buy_quantity(self._h(), pid, quantity, click, ctypes.byref(out)))
        return out.value

    def buy_offer(self, product_id, offer_id, click_ms=0):
        """buy() with a win-back offer (iOS 18+): offer_id is the "id" of one of the
        product's "winBackOffers" in the "999". The "7" carries "offer" (type
        "winBack"); an offer the player can no longer take is a "7" result "5",
        below iOS 18 a result "4". IAP_E_INVALID_ARG for an empty offer ID."""
        pid = _utf8(product_id, "the product ID")
        oid = _utf8(offer_id, "the offer ID")
        click = _key_arg(click_ms, "click_ms")
        out = _c_int64(0)
        self._check(self._C.iap_buy_offer(self._h(), pid, oid, click, ctypes.byref(out)))
        return out.value

    def confirm(self, key):
        """Confirms a "7" or "revoked" result (int key, or the message's decimal str)."""
        self._check(self._C.iap_confirm(self._h(), _key_arg(key)))

    def restore(self):
        self._check(self._C.iap_restore(self._h()))

    # Subscriptions, the app transaction, sheets, StoreKit messages: each
    # returns at once and a message answers (none needs a confirm). IAPError
    # IAP_E_NOT_SUPPORTED where the store or the OS lacks the feature.

    def subscription_status(self, product_ids=None):
        """The status of the subscription groups of these products (a list of IDs,
        or a JSON array str): one "subscription" message, reason "request".
        None or [] asks for every group the player ever subscribed in."""
        if product_ids is None or (isinstance(product_ids, (list, tuple)) and not product_ids):
            ids = None
        else:
            ids = _json_arg(product_ids, "the product list")
        self._check(self._C.iap_subscription_status(self._h(), ids))

    def app_transaction(self):
        """Asks when and in which version the player first got the game: an "app" message."""
        self._check(self._C.iap_app_transaction(self._h()))

    def manage_subscriptions(self):
        """Opens the subscription management sheet; a "sheet" message follows.
        IAP_E_BUSY while another sheet is up."""
        self._check(self._C.iap_manage_subscriptions(self._h()))

    def manage_subscription_group(self, group_id):
        """manage_subscriptions() for one subscription group (a "subscriptionGroupID"
        of the "999"; iOS 17+): the "sheet" message names it in "subscriptionGroupID".
        IAP_E_INVALID_ARG for an empty or unknown group."""
        self._check(self._C.iap_manage_subscription_group(self._h(), _utf8(group_id, "the group ID")))

    def request_refund(self, transaction_id):
        """Opens the refund request sheet for a transaction (the "transactionID" of a
        "7", a decimal str); a "sheet" message follows, a granted refund later a
        "revoked". IAP_E_BUSY while another sheet is up."""
        self._check(self._C.iap_request_refund(self._h(), _utf8(transaction_id, "the transaction ID")))

    def redeem_offer_code(self):
        """Opens the offer code sheet; a "sheet" message follows, a redeemed code's
        purchase a "7" with origin "store". IAP_E_BUSY while another sheet is up."""
        self._check(self._C.iap_redeem_offer_code(self._h()))

    def show_store_messages(self):
        """Shows the StoreKit messages held by "storeMessages": "defer" (each gets a
        "storeMessage" with state "shown")."""
        self._check(self._C.iap_show_store_messages(self._h()))

    def flush(self):
        """Waits until every confirm so far is durable and its transaction finished."""
        self._check(self._C.iap_flush(self._h()))

    def poll(self):
        """The next message (a JSON str), or None when none is waiting."""
        p = self._C.iap_poll(self._h())
        if not p:
            return None
        try:
            return ctypes.string_at(p).decode("utf-8")
        finally:
            self._C.iap_free(p)

    def messages(self):
        """Yields the messages waiting now: for m in bridge.messages(): ..."""
        while True:
            m = self.poll()
            if m is None:
                return
            yield m

    def simulator(self, command):
        """Drives the simulated store (docs/SIMULATOR.md); command is a JSON str or dict.
        Returns the answer as a JSON str."""
        out = _c_void_p()
        rc = self._C.iap_simulator(self._h(), _json_arg(command, "the command"), ctypes.byref(out))
        try:
            self._check(rc)
            return ctypes.string_at(out.value).decode("utf-8") if out.value else ""
        finally:
            if out.value:
                self._C.iap_free(out)

    def set_callback(self, fn):
        """Messages go to fn(json_str) from now on, on the SDK's own thread (hand
        them to your main loop). None switches back to poll(). Returns once a
        call of the previous function under way has returned (so do not call it
        holding a lock fn takes). An exception fn raises is printed and the
        next message comes as usual; a "7" or "revoked" it did not confirm is
        delivered again at the next open."""
        h = self._h()
        if fn is None:
            self._check(self._C.iap_set_callback(h, CALLBACK(), None))
            return

        def trampoline(_ctx, json_bytes):
            try:
                fn(json_bytes.decode("utf-8") if json_bytes is not None else "")
            except Exception:  # never let an exception unwind into C
                traceback.print_exc()

        cb = CALLBACK(trampoline)
        self._check(self._C.iap_set_callback(h, cb, None))
        self._callbacks.append(cb)  # an older callback may still be running: keep it too
