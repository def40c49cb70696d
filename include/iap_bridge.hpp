/*
 * iap_bridge.hpp: a header-only C++17 wrapper over iap_bridge.h, for engines
 * written in C++ (Unreal, Cocos2d-x, your own). Copy this file next to
 * iap_bridge.h, link libIAPBridge, and:
 *
 *   #include "iap_bridge.hpp"
 *
 *   iap::Bridge bridge = iap::Bridge::open(iap::simulator_config(dataDir, catalog, stateDir));
 *   bridge.request_products({"coins_100", "remove_ads"});      // a "999" message answers
 *   int64_t key = bridge.buy("coins_100", click_ms);            // the key actually used
 *   while (auto m = bridge.poll(std::nothrow).value_or(std::nullopt)) {  // every frame
 *       auto type = iap::field(*m, "type");
 *       if (type != "7" && type != "revoked") continue;
 *       int64_t k = *iap::parse_key(*iap::field(*m, "key"));    // exact, no double
 *       if (!save.has(k)) {                                     // each key once (your save holds them)
 *           if (type == "revoked") { take_back(*m); save.add(k); }              // a refund: take back
 *           else if (iap::field(*m, "result") == "0") { grant(*m); save.add(k); } // a success only
 *       }                                                       // (a failure's key is not saved)
 *       bridge.confirm(k);                                      // then confirm every "7" and "revoked"
 *   }
 *
 * ERRORS, two styles (pick one per call site):
 *   - throwing:  bridge.buy("coins_100", t)  throws iap::Error (code(), name(), what())
 *   - nothrow:   bridge.buy("coins_100", t, std::nothrow)  returns iap::Result<int64_t>
 *                (ok(), code(), name(), message(), value(), value_or()).
 * With exceptions disabled (Unreal's default; -fno-exceptions) only the nothrow
 * overloads exist, and Result::value() on an error aborts. A frame loop polls
 * with poll(std::nothrow).value_or(std::nullopt): poll fails only on a closed
 * or moved-from Bridge, which then reads as "no message" instead of throwing
 * or aborting (the loop above).
 *
 * THREADS: the C functions are thread-safe; an iap::Bridge object is not (like
 * a std::vector): use one Bridge from one thread at a time, or guard it. Its
 * set_callback handler runs on the SDK's thread: a handler that closes or
 * destroys its Bridge must not race the game's thread using the same object.
 *
 * OWNERSHIP: iap::Bridge is move-only and closes its bridge in its destructor.
 * Strings from iap_poll/iap_simulator are copied into std::string and freed
 * with iap_free here; you never see a raw pointer. A Bridge used after close()
 * answers IAP_E_CLOSED without touching the library (the C pointer is never
 * reused after close); a moved-from Bridge answers IAP_E_INVALID_HANDLE.
 *
 * KEYS are int64_t everywhere. Messages carry them as decimal strings: read
 * them with iap::field() and convert with iap::parse_key() (exact, no double).
 * Always use the key buy() returns or the message carries: the SDK may choose
 * another key than the click time you passed.
 */
#ifndef IAP_BRIDGE_HPP
#define IAP_BRIDGE_HPP

#include "iap_bridge.h"

#include <atomic>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#if defined(__cpp_exceptions) || defined(__EXCEPTIONS) || defined(_CPPUNWIND)
#define IAP_HPP_EXCEPTIONS 1
#include <stdexcept>
#else
#define IAP_HPP_EXCEPTIONS 0
#endif

#if defined(__GNUC__) || defined(__clang__)
/* Optional: libraries newer than 1.0 export it. Weak, so an older library
 * still links and loads; iap::version_number() then answers std::nullopt. */
extern "C" int32_t iap_version_number(void) __attribute__((weak));
extern "C" int32_t iap_launch(void) __attribute__((weak));
#define IAP_HPP_HAVE_WEAK 1
#else
#define IAP_HPP_HAVE_WEAK 0
#endif

namespace iap {

/* ---- result codes (the header's, plus those announced for 1.1) ---------- */
enum Code : int32_t {
    OK = 0,
    E_NULL_ARG = -1,
    E_INVALID_ARG = -2,
    E_BAD_JSON = -3,
    E_BAD_CONFIG = -4,
    E_CATALOG = -5,
    E_IO = -6,
    E_INVALID_HANDLE = -7,
    E_CLOSED = -8,
    E_BUSY = -9,
    E_UNKNOWN_PRODUCT = -10,
    E_DUPLICATE_KEY = -11,
    E_UNKNOWN_KEY = -12,
    E_NOT_SUPPORTED = -13,
    E_UNKNOWN_OP = -14,
    E_NOT_FOUND = -15,
    E_INTERNAL = -16,
    E_NOT_DELIVERED = -17, /* iap_confirm of a result not yet handed to the game */
    E_RESOURCE = -18,      /* a thread, descriptor or memory could not be had */
    E_STORE = -19,         /* the store reported a failure */
};

/* The name of a code, e.g. "IAP_E_DUPLICATE_KEY". Known codes are named here
 * (so a newer code reads well with an older library); others ask the library. */
inline const char *error_name(int32_t code) noexcept {
    switch (code) {
    case OK: return "IAP_OK";
    case E_NULL_ARG: return "IAP_E_NULL_ARG";
    case E_INVALID_ARG: return "IAP_E_INVALID_ARG";
    case E_BAD_JSON: return "IAP_E_BAD_JSON";
    case E_BAD_CONFIG: return "IAP_E_BAD_CONFIG";
    case E_CATALOG: return "IAP_E_CATALOG";
    case E_IO: return "IAP_E_IO";
    case E_INVALID_HANDLE: return "IAP_E_INVALID_HANDLE";
    case E_CLOSED: return "IAP_E_CLOSED";
    case E_BUSY: return "IAP_E_BUSY";
    case E_UNKNOWN_PRODUCT: return "IAP_E_UNKNOWN_PRODUCT";
    case E_DUPLICATE_KEY: return "IAP_E_DUPLICATE_KEY";
    case E_UNKNOWN_KEY: return "IAP_E_UNKNOWN_KEY";
    case E_NOT_SUPPORTED: return "IAP_E_NOT_SUPPORTED";
    case E_UNKNOWN_OP: return "IAP_E_UNKNOWN_OP";
    case E_NOT_FOUND: return "IAP_E_NOT_FOUND";
    case E_INTERNAL: return "IAP_E_INTERNAL";
    case E_NOT_DELIVERED: return "IAP_E_NOT_DELIVERED";
    case E_RESOURCE: return "IAP_E_RESOURCE";
    case E_STORE: return "IAP_E_STORE";
    default: return ::iap_error_name(code);
    }
}

/* The library's version string, e.g. "1.0.0". */
inline std::string version() { return ::iap_version(); }

/* major*10000 + minor*100 + patch, if the loaded library exports it. */
inline std::optional<int32_t> version_number() noexcept {
#if IAP_HPP_HAVE_WEAK
    if (&::iap_version_number != nullptr) return ::iap_version_number();
#endif
    return std::nullopt;
}

/* iap_launch: listen for purchases promoted on the App Store from launch
 * (iOS 16.4+, macOS 14.4+); call it once at app launch. IAP_OK, or
 * IAP_E_NOT_SUPPORTED where there is nothing to listen to (harmless; also
 * with an older library that lacks it). */
inline int32_t launch() noexcept {
#if IAP_HPP_HAVE_WEAK
    if (&::iap_launch != nullptr) return ::iap_launch();
#endif
    return IAP_E_NOT_SUPPORTED;
}

#if IAP_HPP_EXCEPTIONS
/* Thrown by the throwing overloads. what() is the library's sentence. */
class Error : public std::runtime_error {
public:
    Error(int32_t code, const std::string &message)
        : std::runtime_error(message), code_(code) {}
    int32_t code() const noexcept { return code_; }
    const char *name() const noexcept { return error_name(code_); }
private:
    int32_t code_;
};
#endif

namespace detail {
[[noreturn]] inline void fail(int32_t code, const std::string &message) {
#if IAP_HPP_EXCEPTIONS
    throw Error(code, message);
#else
    (void)code;
    (void)message;
    std::abort();
#endif
}
} // namespace detail

namespace detail {
/* What every Result holds: the code and, on error, the library's sentence. */
class Status {
public:
    bool ok() const noexcept { return code_ == OK; }
    explicit operator bool() const noexcept { return ok(); }
    int32_t code() const noexcept { return code_; }
    const char *name() const noexcept { return error_name(code_); }
    const std::string &message() const noexcept { return message_; }
protected:
    void set_failure(int32_t code, std::string message) { code_ = code; message_ = std::move(message); }
    /* On error throws iap::Error (or aborts without exceptions). */
    void check() const { if (!ok()) fail(code_, message_); }
private:
    int32_t code_ = OK;
    std::string message_;
};
} // namespace detail

/* The outcome of a nothrow call: a code, the library's sentence on error, and
 * a value on success. */
template <class T>
class Result : public detail::Status {
public:
    static Result success(T v) { Result r; r.value_.emplace(std::move(v)); return r; }
    static Result failure(int32_t code, std::string message) {
        Result r; r.set_failure(code, std::move(message)); return r;
    }
    /* The value; on error throws iap::Error (or aborts without exceptions). */
    T &value() & { check(); return *value_; }
    const T &value() const & { check(); return *value_; }
    T &&value() && { check(); return std::move(*value_); }
    T &operator*() & { return value(); }
    T *operator->() { return &value(); }
    /* The value, or `fallback` on error (never throws or aborts). */
    template <class U> T value_or(U &&fallback) const & {
        return ok() ? *value_ : static_cast<T>(std::forward<U>(fallback));
    }
    template <class U> T value_or(U &&fallback) && {
        return ok() ? std::move(*value_) : static_cast<T>(std::forward<U>(fallback));
    }
private:
    std::optional<T> value_;
};

template <>
class Result<void> : public detail::Status {
public:
    static Result success() { return Result(); }
    static Result failure(int32_t code, std::string message) {
        Result r; r.set_failure(code, std::move(message)); return r;
    }
    void value() const { check(); }
};

/* ---- JSON helpers (messages are compact JSON; no JSON library needed) ------ */

/* A JSON string literal for s (quotes included), for building configs. */
inline std::string json_quote(std::string_view s) {
    static const char hex[] = "0123456789abcdef";
    std::string out = "\"";
    for (unsigned char c : s) {
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default:
            if (c < 0x20 || c == 0x7f) {
                out += "\\u00"; out += hex[c >> 4]; out += hex[c & 15];
            } else {
                out += static_cast<char>(c);
            }
        }
    }
    return out + "\"";
}

/* The config of a simulated-store bridge (paths absolute; parents must exist). */
inline std::string simulator_config(std::string_view data_dir, std::string_view catalog,
                                    std::string_view state_dir = {}) {
    std::string c = "{\"store\":\"simulator\",\"dataDir\":" + json_quote(data_dir) +
                    ",\"catalog\":" + json_quote(catalog);
    if (!state_dir.empty()) c += ",\"simulator\":{\"stateDir\":" + json_quote(state_dir) + "}";
    return c + "}";
}

/* The config of a StoreKit 2 bridge (Apple platforms). */
inline std::string storekit_config(std::string_view data_dir) {
    return "{\"store\":\"storekit\",\"dataDir\":" + json_quote(data_dir) + "}";
}

/* A JSON array of strings, e.g. for request_products. */
inline std::string json_string_array(const std::vector<std::string> &items) {
    std::string out = "[";
    for (size_t i = 0; i < items.size(); i++) {
        if (i) out += ",";
        out += json_quote(items[i]);
    }
    return out + "]";
}

namespace detail {
inline void put_utf8(std::string &out, uint32_t cp) {
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

inline bool hex4(std::string_view s, size_t i, uint32_t &v) {
    if (i + 4 > s.size()) return false;
    v = 0;
    for (size_t k = i; k < i + 4; k++) {
        char c = s[k];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= static_cast<uint32_t>(c - '0');
        else if (c >= 'a' && c <= 'f') v |= static_cast<uint32_t>(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= static_cast<uint32_t>(c - 'A' + 10);
        else return false;
    }
    return true;
}

/* Reads the string literal starting at s[i] == '"'; i ends after its quote. */
inline bool read_string(std::string_view s, size_t &i, std::string *out) {
    i++;
    while (i < s.size()) {
        char c = s[i++];
        if (c == '"') return true;
        if (c != '\\') { if (out) *out += c; continue; }
        if (i >= s.size()) return false;
        char e = s[i++];
        switch (e) {
        case '"': case '\\': case '/': if (out) *out += e; break;
        case 'b': if (out) *out += '\b'; break;
        case 'f': if (out) *out += '\f'; break;
        case 'n': if (out) *out += '\n'; break;
        case 'r': if (out) *out += '\r'; break;
        case 't': if (out) *out += '\t'; break;
        case 'u': {
            uint32_t cp;
            if (!hex4(s, i, cp)) return false;
            i += 4;
            if (cp >= 0xD800 && cp < 0xDC00 && i + 6 <= s.size() && s[i] == '\\' && s[i + 1] == 'u') {
                uint32_t lo;
                if (hex4(s, i + 2, lo) && lo >= 0xDC00 && lo < 0xE000) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    i += 6;
                }
            }
            if (out) put_utf8(*out, cp);
            break;
        }
        default: return false;
        }
    }
    return false;
}

/* Skips one value (any type) starting at s[i]; i ends after it. */
inline bool skip_value(std::string_view s, size_t &i) {
    int depth = 0;
    while (i < s.size()) {
        char c = s[i];
        if (c == '"') {
            if (!read_string(s, i, nullptr)) return false;
        } else if (c == '{' || c == '[') {
            depth++; i++;
        } else if (c == '}' || c == ']') {
            if (depth == 0) return true; /* the end of the enclosing object */
            depth--; i++;
        } else if (c == ',' && depth == 0) {
            return true;
        } else {
            i++;
        }
        if (depth == 0 && i < s.size() && (s[i] == ',' || s[i] == '}')) return true;
    }
    return depth == 0;
}

inline void skip_ws(std::string_view s, size_t &i) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) i++;
}
} // namespace detail

/* One top-level field of a message: a string's contents (escapes decoded), or
 * the raw text of any other value (a number, true/false/null, an object or
 * array). std::nullopt when the field is absent or the text is not an object.
 * Only top-level names match: a "key" inside a nested object or inside a
 * string is never mistaken for the message's key. */
inline std::optional<std::string> field(std::string_view json, std::string_view name) {
    size_t i = 0;
    detail::skip_ws(json, i);
    if (i >= json.size() || json[i] != '{') return std::nullopt;
    i++;
    for (;;) {
        detail::skip_ws(json, i);
        if (i >= json.size() || json[i] != '"') return std::nullopt;
        std::string key;
        if (!detail::read_string(json, i, &key)) return std::nullopt;
        detail::skip_ws(json, i);
        if (i >= json.size() || json[i] != ':') return std::nullopt;
        i++;
        detail::skip_ws(json, i);
        if (i >= json.size()) return std::nullopt;
        if (key == name) {
            if (json[i] == '"') {
                std::string v;
                if (!detail::read_string(json, i, &v)) return std::nullopt;
                return v;
            }
            size_t start = i;
            if (!detail::skip_value(json, i)) return std::nullopt;
            size_t end = i;
            while (end > start && (json[end - 1] == ' ' || json[end - 1] == '\n' ||
                                   json[end - 1] == '\r' || json[end - 1] == '\t')) end--;
            return std::string(json.substr(start, end - start));
        }
        if (json[i] == '"') {
            if (!detail::read_string(json, i, nullptr)) return std::nullopt;
        } else if (!detail::skip_value(json, i)) {
            return std::nullopt;
        }
        detail::skip_ws(json, i);
        if (i >= json.size() || json[i] != ',') return std::nullopt; /* '}' or garbage: not found */
        i++;
    }
}

/* A key written as a decimal string ("-42", "9007199254740993") as int64_t,
 * exactly (no double on the way). std::nullopt if it is not one. */
inline std::optional<int64_t> parse_key(std::string_view s) {
    if (s.empty() || s.front() == '+') return std::nullopt;
    int64_t v = 0;
    auto r = std::from_chars(s.data(), s.data() + s.size(), v, 10);
    if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return std::nullopt;
    return v;
}

/* ---- the callback's guards ----------------------------------------------- */

/* Receives what() of an exception a set_callback handler threw (or a sentence
 * for one not derived from std::exception), on the SDK's delivery thread.
 * Must not throw. */
using CallbackErrorHandler = void (*)(const char *what);

namespace detail {
inline std::atomic<CallbackErrorHandler> callback_error_handler{nullptr};

inline void report_callback_error(const char *what) noexcept {
    if (CallbackErrorHandler fn = callback_error_handler.load()) {
        fn(what);
        return;
    }
    std::fprintf(stderr, "iap::Bridge: a set_callback handler threw: %s (a \"7\" or \"revoked\" it did not "
                         "confirm comes again at the next open)\n", what);
}

using Callback = std::function<void(std::string_view json)>;

/* Points into the running trampoline while a handler runs on this thread: a
 * close() (or destruction) of a Bridge from inside its handler leaves its
 * callbacks there, freed once the handler has returned, not under it. */
inline thread_local std::vector<std::unique_ptr<Callback>> *retired_callbacks = nullptr;
} // namespace detail

/* Where exceptions thrown by set_callback handlers are reported (see
 * Bridge::set_callback); nullptr restores the default, a line on stderr.
 * Set it before set_callback. */
inline void set_callback_error_handler(CallbackErrorHandler fn) noexcept {
    detail::callback_error_handler.store(fn);
}

/* ---- the bridge ---------------------------------------------------------- */

class Bridge {
public:
    using Callback = detail::Callback;

    /* A Bridge that holds nothing (every call answers IAP_E_INVALID_HANDLE). */
    Bridge() noexcept = default;
    Bridge(const Bridge &) = delete;
    Bridge &operator=(const Bridge &) = delete;
    Bridge(Bridge &&o) noexcept { take(std::move(o)); }
    Bridge &operator=(Bridge &&o) noexcept {
        if (this != &o) { shutdown(); take(std::move(o)); }
        return *this;
    }
    /* Closes the bridge if it is open (results not confirmed stay on disk). */
    ~Bridge() { shutdown(); }

    /* Opens a bridge; config_json as documented at iap_open. */
    static Result<Bridge> open(const std::string &config_json, std::nothrow_t) {
        if (config_json.find('\0') != std::string::npos)
            return Result<Bridge>::failure(E_INVALID_ARG, "iap::Bridge::open: the config contains a NUL character");
        iap_bridge *b = nullptr;
        int32_t rc = ::iap_open(config_json.c_str(), &b);
        if (rc != IAP_OK) return Result<Bridge>::failure(rc, ::iap_errmsg());
        Bridge out;
        out.b_ = b;
        out.state_ = State::open;
        return Result<Bridge>::success(std::move(out));
    }

    bool is_open() const noexcept { return state_ == State::open; }
    /* The C handle, for calls this wrapper does not cover. Owned by *this. */
    iap_bridge *native_handle() const noexcept { return state_ == State::open ? b_ : nullptr; }

    /* Closes now (waits for purchases under way and durable confirms). A second
     * close answers IAP_E_CLOSED. */
    Result<void> close(std::nothrow_t) {
        if (auto r = usable(); !r.ok()) return r;
        int32_t rc = ::iap_close(b_);
        state_ = State::closed;
        b_ = nullptr;
        release_callbacks();
        return wrap(rc);
    }

    /* Asks for product information; a "999" message answers. */
    Result<void> request_products(const std::vector<std::string> &ids, std::nothrow_t) {
        return request_products_json(json_string_array(ids), std::nothrow);
    }
    Result<void> request_products_json(const std::string &ids_json, std::nothrow_t) {
        if (auto r = usable(); !r.ok()) return r;
        if (ids_json.find('\0') != std::string::npos)
            return Result<void>::failure(E_INVALID_ARG, "iap::Bridge::request_products_json: the list contains a NUL character");
        return wrap(::iap_request_products(b_, ids_json.c_str()));
    }

    /* Starts a purchase; click_ms <= 0 lets the SDK pick a fresh key. The value
     * is the key the "7" will carry (not necessarily click_ms). */
    Result<int64_t> buy(const std::string &product_id, int64_t click_ms, std::nothrow_t) {
        if (auto r = usable(); !r.ok()) return Result<int64_t>::failure(r.code(), r.message());
        if (product_id.find('\0') != std::string::npos)
            return Result<int64_t>::failure(E_INVALID_ARG, "iap::Bridge::buy: the product ID contains a NUL character");
        int64_t key = 0;
        int32_t rc = ::iap_buy(b_, product_id.c_str(), click_ms, &key);
        if (rc != IAP_OK) return Result<int64_t>::failure(rc, ::iap_errmsg());
        return Result<int64_t>::success(key);
    }

    /* buy() for `quantity` units (1 to 10) of a consumable in one purchase;
     * the "7" carries "quantity" and the price of all of them. */
    Result<int64_t> buy_quantity(const std::string &product_id, int32_t quantity, int64_t click_ms, std::nothrow_t) {
        if (auto r = usable(); !r.ok()) return Result<int64_t>::failure(r.code(), r.message());
        if (product_id.find('\0') != std::string::npos)
            return Result<int64_t>::failure(E_INVALID_ARG, "iap::Bridge::buy_quantity: the product ID contains a NUL character");
        int64_t key = 0;
        int32_t rc = ::iap_buy_quantity(b_, product_id.c_str(), quantity, click_ms, &key);
        if (rc != IAP_OK) return Result<int64_t>::failure(rc, ::iap_errmsg());
        return Result<int64_t>::success(key);
    }

    /* buy() with a win-back offer (iOS 18+): offer_id is the "id" of one of
     * the product's "winBackOffers" in the "999". The "7" carries "offer"
     * (type "winBack"); an offer the player can no longer take is a "7"
     * result "5", below iOS 18 a result "4". E_INVALID_ARG for an empty ID. */
    Result<int64_t> buy_offer(const std::string &product_id, const std::string &offer_id, int64_t click_ms, std::nothrow_t) {
        if (auto r = usable(); !r.ok()) return Result<int64_t>::failure(r.code(), r.message());
        if (product_id.find('\0') != std::string::npos)
            return Result<int64_t>::failure(E_INVALID_ARG, "iap::Bridge::buy_offer: the product ID contains a NUL character");
        if (offer_id.find('\0') != std::string::npos)
            return Result<int64_t>::failure(E_INVALID_ARG, "iap::Bridge::buy_offer: the offer ID contains a NUL character");
        int64_t key = 0;
        int32_t rc = ::iap_buy_offer(b_, product_id.c_str(), offer_id.c_str(), click_ms, &key);
        if (rc != IAP_OK) return Result<int64_t>::failure(rc, ::iap_errmsg());
        return Result<int64_t>::success(key);
    }

    /* Confirms a "7" or "revoked" result after the game granted and saved it. */
    Result<void> confirm(int64_t key, std::nothrow_t) {
        if (auto r = usable(); !r.ok()) return r;
        return wrap(::iap_confirm(b_, key));
    }

    Result<void> restore(std::nothrow_t) {
        if (auto r = usable(); !r.ok()) return r;
        return wrap(::iap_restore(b_));
    }

    Result<void> flush(std::nothrow_t) {
        if (auto r = usable(); !r.ok()) return r;
        return wrap(::iap_flush(b_));
    }

    /* ---- Subscriptions, the app transaction, sheets, StoreKit messages ----
     * Each hands the request to the SDK thread and returns; a message answers
     * (none is stored or needs a confirm). E_NOT_SUPPORTED where the store or
     * the OS lacks the feature. */

    /* The status of the subscription groups of these products: one
     * "subscription" message (reason "request"). An empty list asks for every
     * group the player ever subscribed in (iap_subscription_status with NULL). */
    Result<void> subscription_status(const std::vector<std::string> &product_ids, std::nothrow_t) {
        if (product_ids.empty()) return subscription_status_json(nullptr, std::nothrow);
        return subscription_status_json(json_string_array(product_ids).c_str(), std::nothrow);
    }
    Result<void> subscription_status(std::nothrow_t) { return subscription_status_json(nullptr, std::nothrow); }
    /* ids_json: a JSON array of product IDs, or nullptr for every group. */
    Result<void> subscription_status_json(const char *ids_json, std::nothrow_t) {
        if (auto r = usable(); !r.ok()) return r;
        return wrap(::iap_subscription_status(b_, ids_json));
    }

    /* The app transaction (the version and date the player first got the
     * game): an "app" message. */
    Result<void> app_transaction(std::nothrow_t) {
        if (auto r = usable(); !r.ok()) return r;
        return wrap(::iap_app_transaction(b_));
    }

    /* The App Store's subscription management sheet; a "sheet" message follows
     * when the player closes it. E_BUSY while another sheet is up. */
    Result<void> manage_subscriptions(std::nothrow_t) {
        if (auto r = usable(); !r.ok()) return r;
        return wrap(::iap_manage_subscriptions(b_));
    }

    /* manage_subscriptions() for one subscription group (a "subscriptionGroupID"
     * of the "999"; iOS 17+): the "sheet" message names it in
     * "subscriptionGroupID". E_INVALID_ARG for an empty or unknown group. */
    Result<void> manage_subscription_group(const std::string &group_id, std::nothrow_t) {
        if (auto r = usable(); !r.ok()) return r;
        if (group_id.find('\0') != std::string::npos)
            return Result<void>::failure(E_INVALID_ARG, "iap::Bridge::manage_subscription_group: the group ID contains a NUL character");
        return wrap(::iap_manage_subscription_group(b_, group_id.c_str()));
    }

    /* The refund request sheet for a transaction (the "transactionID" of a
     * "7"); a "sheet" message follows, and a granted refund later a "revoked".
     * E_BUSY while another sheet is up. */
    Result<void> request_refund(const std::string &transaction_id, std::nothrow_t) {
        if (auto r = usable(); !r.ok()) return r;
        if (transaction_id.find('\0') != std::string::npos)
            return Result<void>::failure(E_INVALID_ARG, "iap::Bridge::request_refund: the transaction ID contains a NUL character");
        return wrap(::iap_request_refund(b_, transaction_id.c_str()));
    }

    /* The offer code redemption sheet; a "sheet" message follows, a redeemed
     * code's purchase a "7" with origin "store". E_BUSY while another sheet is up. */
    Result<void> redeem_offer_code(std::nothrow_t) {
        if (auto r = usable(); !r.ok()) return r;
        return wrap(::iap_redeem_offer_code(b_));
    }

    /* Shows the StoreKit messages held by "storeMessages": "defer"; each gets
     * a "storeMessage" with state "shown". */
    Result<void> show_store_messages(std::nothrow_t) {
        if (auto r = usable(); !r.ok()) return r;
        return wrap(::iap_show_store_messages(b_));
    }

    /* The next message (std::nullopt when none is waiting), or an error. */
    Result<std::optional<std::string>> poll(std::nothrow_t) {
        using R = Result<std::optional<std::string>>;
        if (auto r = usable(); !r.ok()) return R::failure(r.code(), r.message());
        char *m = ::iap_poll(b_);
        if (!m) return R::success(std::nullopt);
        std::unique_ptr<char, void (*)(void *)> owned(m, ::iap_free);
        return R::success(std::string(m));
    }

    /* Drives the simulated store; the answer is its JSON. */
    Result<std::string> simulator(const std::string &command_json, std::nothrow_t) {
        if (auto r = usable(); !r.ok()) return Result<std::string>::failure(r.code(), r.message());
        if (command_json.find('\0') != std::string::npos)
            return Result<std::string>::failure(E_INVALID_ARG, "iap::Bridge::simulator: the command contains a NUL character");
        char *out = nullptr;
        int32_t rc = ::iap_simulator(b_, command_json.c_str(), &out);
        std::unique_ptr<char, void (*)(void *)> owned(out, ::iap_free);
        if (rc != IAP_OK) return Result<std::string>::failure(rc, ::iap_errmsg());
        return Result<std::string>::success(out ? std::string(out) : std::string());
    }

    /* Messages go to cb from now on, on the SDK's delivery thread (not the game's
     * main thread: hand them over). An empty cb switches back to poll(). cb is
     * kept alive until close(). Returns once a call of the previous cb under
     * way has returned (as iap_set_callback): never call it while holding a
     * mutex the callback locks, or the calling thread waits for ever.
     * An exception cb throws does not reach the SDK: it is caught and its
     * what() reported through set_callback_error_handler (default: a line on
     * stderr), and the next message comes to cb as usual. The message it was
     * handling counts as delivered: a "7" or "revoked" cb did not confirm
     * comes again at the next open (with exceptions disabled nothing is
     * caught: cb must not throw).
     * cb may close() this Bridge, move another into it or destroy it: the
     * callbacks it held are freed after cb returns, so cb's own captures stay
     * valid until then (not the Bridge object, if cb destroyed it). */
    Result<void> set_callback(Callback cb, std::nothrow_t) {
        if (auto r = usable(); !r.ok()) return r;
        if (!cb) return wrap(::iap_set_callback(b_, nullptr, nullptr));
        /* Kept before the SDK may call it (and its handler close this Bridge);
         * an older one may still be running: it stays too. */
        callbacks_.push_back(std::make_unique<Callback>(std::move(cb)));
        int32_t rc = ::iap_set_callback(b_, &Bridge::trampoline, callbacks_.back().get());
        if (rc != IAP_OK) callbacks_.pop_back();
        return wrap(rc);
    }

#if IAP_HPP_EXCEPTIONS
    /* Throwing overloads: the same calls, throwing iap::Error on failure. */
    static Bridge open(const std::string &config_json) { return open(config_json, std::nothrow).value(); }
    void close() { close(std::nothrow).value(); }
    void request_products(const std::vector<std::string> &ids) { request_products(ids, std::nothrow).value(); }
    void request_products_json(const std::string &ids_json) { request_products_json(ids_json, std::nothrow).value(); }
    int64_t buy(const std::string &product_id, int64_t click_ms = 0) {
        return buy(product_id, click_ms, std::nothrow).value();
    }
    int64_t buy_quantity(const std::string &product_id, int32_t quantity, int64_t click_ms = 0) {
        return buy_quantity(product_id, quantity, click_ms, std::nothrow).value();
    }
    int64_t buy_offer(const std::string &product_id, const std::string &offer_id, int64_t click_ms = 0) {
        return buy_offer(product_id, offer_id, click_ms, std::nothrow).value();
    }
    void confirm(int64_t key) { confirm(key, std::nothrow).value(); }
    void restore() { restore(std::nothrow).value(); }
    void flush() { flush(std::nothrow).value(); }
    std::optional<std::string> poll() { return poll(std::nothrow).value(); }
    std::string simulator(const std::string &command_json) { return simulator(command_json, std::nothrow).value(); }
    void set_callback(Callback cb) { set_callback(std::move(cb), std::nothrow).value(); }
    void subscription_status(const std::vector<std::string> &product_ids = {}) {
        subscription_status(product_ids, std::nothrow).value();
    }
    void app_transaction() { app_transaction(std::nothrow).value(); }
    void manage_subscriptions() { manage_subscriptions(std::nothrow).value(); }
    void manage_subscription_group(const std::string &group_id) { manage_subscription_group(group_id, std::nothrow).value(); }
    void request_refund(const std::string &transaction_id) { request_refund(transaction_id, std::nothrow).value(); }
    void redeem_offer_code() { redeem_offer_code(std::nothrow).value(); }
    void show_store_messages() { show_store_messages(std::nothrow).value(); }
#endif

private:
    enum class State { empty, open, closed };

    static void trampoline(void *ctx, const char *json) noexcept {
        std::vector<std::unique_ptr<Callback>> retired; /* freed after the handler returned */
        auto *outer = std::exchange(detail::retired_callbacks, &retired);
        auto &cb = *static_cast<Callback *>(ctx);
        std::string_view message(json ? json : "");
#if IAP_HPP_EXCEPTIONS
        /* An exception unwinding into the SDK's thread would terminate the game. */
        try {
            cb(message);
        } catch (const std::exception &e) {
            detail::report_callback_error(e.what());
        } catch (...) {
            detail::report_callback_error("an exception not derived from std::exception");
        }
#else
        cb(message);
#endif
        detail::retired_callbacks = outer;
    }

    /* After iap_close: nothing calls the callbacks any more, except the one
     * running if this is its handler closing (see retired_callbacks). */
    void release_callbacks() noexcept {
        auto *retired = detail::retired_callbacks;
        if (!retired) {
            callbacks_.clear();
        } else if (retired->empty()) {
            retired->swap(callbacks_);
        } else {
            for (auto &cb : callbacks_) retired->push_back(std::move(cb));
            callbacks_.clear();
        }
    }

    static Result<void> wrap(int32_t rc) {
        if (rc == IAP_OK) return Result<void>::success();
        return Result<void>::failure(rc, ::iap_errmsg());
    }

    Result<void> usable() const {
        switch (state_) {
        case State::open: return Result<void>::success();
        case State::closed:
            return Result<void>::failure(E_CLOSED, "iap::Bridge: the bridge was closed; open a new one");
        default:
            return Result<void>::failure(E_INVALID_HANDLE, "iap::Bridge: this Bridge holds no bridge (moved from, or never opened)");
        }
    }

    void take(Bridge &&o) noexcept {
        b_ = std::exchange(o.b_, nullptr);
        state_ = std::exchange(o.state_, State::empty);
        callbacks_ = std::move(o.callbacks_);
        o.callbacks_.clear();
    }

    void shutdown() noexcept {
        if (state_ == State::open) (void)::iap_close(b_);
        b_ = nullptr;
        state_ = State::empty;
        release_callbacks();
    }

    iap_bridge *b_ = nullptr;
    State state_ = State::empty;
    std::vector<std::unique_ptr<Callback>> callbacks_;
};

} // namespace iap

#endif /* IAP_BRIDGE_HPP */
