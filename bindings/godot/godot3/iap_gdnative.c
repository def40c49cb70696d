/*
 * iap_gdnative.c: IAPBridge for Godot 3 (GDNative). A GDNative library whose
 * procedures GDScript calls with
 *   native.call_native("standard_varcall", "iap_gd_buy", [handle, "coins_100", 0, 1])
 * Use it through bindings/godot/godot3/iap_bridge.gd, which does those calls.
 * Built by bindings/godot/build.sh against the GDNative headers of Godot 3.2
 * (bindings/godot/interfaces.sh); linked to libIAPBridge.so, found beside this
 * library ($ORIGIN).
 *
 * Every procedure takes a godot_array of arguments and returns a Variant:
 * an int (a handle, IAP_OK or a negative IAP_E_* code) or a String. Keys are
 * Strings both ways. A wrong argument type is IAP_E_INVALID_ARG with a
 * sentence in iap_gd_errmsg(), never a crash.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>

#include <gdnative_api_struct.gen.h>

#include "../common/iap_gd_common.h"

#define EXPORT __attribute__((visibility("default")))

static const godot_gdnative_core_api_struct *api;

/* The library pins itself (RTLD_NODELETE): when the last IAPBridge object is
 * freed the wrapper terminates the GDNative object, Godot dlcloses us, and we
 * and libIAPBridge.so stay loaded for the next IAPBridge.new() (Godot 3.2
 * crashes at exit when a GDNative object is left initialized). */
EXPORT void godot_gdnative_init(godot_gdnative_init_options *options) {
    Dl_info self;
    api = options->api_struct;
    if (dladdr(&api, &self) && self.dli_fname) dlopen(self.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
}

/* The engine unloads the library: close what the game left open. */
EXPORT void godot_gdnative_terminate(godot_gdnative_terminate_options *options) {
    (void)options;
    gdc_close_all();
}

/* ---- Variants in and out ------------------------------------------------ */

static godot_variant ret_int(int64_t v) {
    godot_variant r;
    api->godot_variant_new_int(&r, v);
    return r;
}

static godot_variant ret_str(const char *s) {
    godot_variant r;
    godot_string gs = api->godot_string_chars_to_utf8(s ? s : "");
    api->godot_variant_new_string(&r, &gs);
    api->godot_string_destroy(&gs);
    return r;
}

static int arg_type(godot_array *args, int i) {
    if (i >= api->godot_array_size(args)) return -1;
    godot_variant v = api->godot_array_get(args, i);
    int t = (int)api->godot_variant_get_type(&v);
    api->godot_variant_destroy(&v);
    return t;
}

static int bad_arg(const char *fn, int i, const char *want) {
    char msg[200];
    snprintf(msg, sizeof msg, "%s: argument %d must be %s", fn, i + 1, want);
    gdc_set_error(msg);
    return 0;
}

/* Argument i as an int (a GDScript int is 64 bits). */
static int arg_int(const char *fn, godot_array *args, int i, int64_t *out) {
    if (arg_type(args, i) != GODOT_VARIANT_TYPE_INT) return bad_arg(fn, i, "an int");
    godot_variant v = api->godot_array_get(args, i);
    *out = api->godot_variant_as_int(&v);
    api->godot_variant_destroy(&v);
    return 1;
}

/* Argument i as a String: a malloc'ed UTF-8 copy the caller frees. */
static int arg_str(const char *fn, godot_array *args, int i, char **out) {
    if (arg_type(args, i) != GODOT_VARIANT_TYPE_STRING) return bad_arg(fn, i, "a String");
    godot_variant v = api->godot_array_get(args, i);
    godot_string s = api->godot_variant_as_string(&v);
    godot_char_string cs = api->godot_string_utf8(&s);
    const char *data = api->godot_char_string_get_data(&cs);
    size_t n = (size_t)api->godot_char_string_length(&cs);
    *out = malloc(n + 1);
    if (*out) {
        memcpy(*out, data, n);
        (*out)[n] = 0;
    }
    api->godot_char_string_destroy(&cs);
    api->godot_string_destroy(&s);
    api->godot_variant_destroy(&v);
    return *out != NULL || bad_arg(fn, i, "a String (out of memory)");
}

/* The bridge of argument 0; on failure *code is set and NULL returned. */
static iap_bridge *arg_bridge(const char *fn, godot_array *args, int32_t *code) {
    int64_t h;
    *code = IAP_E_INVALID_HANDLE;
    if (!arg_int(fn, args, 0, &h)) return NULL;
    return gdc_bridge(h, code);
}

/* ---- Procedures (standard_varcall) ---------------------------------------- */

#define PROC(name) EXPORT godot_variant iap_gd_##name(godot_array *args)

PROC(version) { (void)args; return ret_str(iap_version()); }
PROC(version_number) { (void)args; return ret_int(iap_version_number()); }
PROC(errmsg) { (void)args; return ret_str(gdc_errmsg()); }

PROC(error_name) {
    int64_t code;
    /* iap_error_name's answer for a number that is not a code; a GDScript int
     * beyond int32 is none (a cast would wrap it onto one). */
    if (!arg_int("error_name", args, 0, &code) || code < INT32_MIN || code > INT32_MAX) return ret_str("IAP_E_UNKNOWN_CODE");
    return ret_str(iap_error_name((int32_t)code));
}

/* [config_json] -> handle (>= 1) or a negative code */
PROC(open) {
    char *config;
    if (!arg_str("open", args, 0, &config)) return ret_int(IAP_E_INVALID_ARG);
    int64_t h = gdc_open(config);
    free(config);
    return ret_int(h);
}

PROC(close) {
    int64_t h;
    if (!arg_int("close", args, 0, &h)) return ret_int(IAP_E_INVALID_HANDLE);
    return ret_int(gdc_close(h));
}

/* [h, product_id, click_ms, quantity] -> the key (String) or a negative code (int) */
PROC(buy) {
    int32_t code;
    iap_bridge *b = arg_bridge("buy", args, &code);
    if (!b) return ret_int(code);
    char *product;
    int64_t click, quantity, key = 0;
    if (!arg_int("buy", args, 2, &click) || !arg_int("buy", args, 3, &quantity)) return ret_int(IAP_E_INVALID_ARG);
    if (quantity < 1 || quantity > 10) {
        bad_arg("buy", 3, "a quantity from 1 to 10");
        return ret_int(IAP_E_INVALID_ARG);
    }
    if (!arg_str("buy", args, 1, &product)) return ret_int(IAP_E_INVALID_ARG);
    code = quantity == 1 ? iap_buy(b, product, click, &key)
                         : iap_buy_quantity(b, product, (int32_t)quantity, click, &key);
    free(product);
    if (code != IAP_OK) return ret_int(gdc_fail(code));
    char buf[32];
    gdc_key_string(key, buf, sizeof buf);
    return ret_str(buf);
}

/* [h, key String] -> code */
PROC(confirm) {
    int64_t h;
    char *key;
    if (!arg_int("confirm", args, 0, &h)) return ret_int(IAP_E_INVALID_HANDLE);
    if (!arg_str("confirm", args, 1, &key)) return ret_int(IAP_E_INVALID_ARG);
    int32_t code = gdc_confirm(h, key);
    free(key);
    return ret_int(code);
}

/* [h] -> the next message (JSON String), "" when none, or a negative code */
PROC(poll) {
    int32_t code;
    iap_bridge *b = arg_bridge("poll", args, &code);
    if (!b) return ret_int(code);
    char *m = iap_poll(b);
    godot_variant r = ret_str(m);
    iap_free(m);
    return r;
}

/* [h, command_json] -> the answer (JSON String) or a negative code */
PROC(simulator) {
    int32_t code;
    iap_bridge *b = arg_bridge("simulator", args, &code);
    if (!b) return ret_int(code);
    char *cmd, *answer = NULL;
    if (!arg_str("simulator", args, 1, &cmd)) return ret_int(IAP_E_INVALID_ARG);
    code = iap_simulator(b, cmd, &answer);
    free(cmd);
    if (code != IAP_OK) return ret_int(gdc_fail(code));
    godot_variant r = ret_str(answer);
    iap_free(answer);
    return r;
}

/* The calls that take the bridge and nothing else: [h] -> code */
#define NO_ARG(name)                                                 \
    PROC(name) {                                                     \
        int32_t code;                                                \
        iap_bridge *b = arg_bridge(#name, args, &code);              \
        return ret_int(b ? gdc_fail(iap_##name(b)) : code);       \
    }
NO_ARG(restore)
NO_ARG(flush)
NO_ARG(app_transaction)
NO_ARG(manage_subscriptions)
NO_ARG(redeem_offer_code)
NO_ARG(show_store_messages)

/* The calls that take the bridge and a String: [h, s] -> code. subscription_status
 * also takes "" for NULL (every group the player ever subscribed in). */
#define STR_ARG(name, empty_is_null)                                              \
    PROC(name) {                                                                  \
        int32_t code;                                                             \
        iap_bridge *b = arg_bridge(#name, args, &code);                           \
        if (!b) return ret_int(code);                                             \
        char *s;                                                                  \
        if (!arg_str(#name, args, 1, &s)) return ret_int(IAP_E_INVALID_ARG);      \
        code = gdc_fail(iap_##name(b, (empty_is_null) && !*s ? NULL : s));     \
        free(s);                                                                  \
        return ret_int(code);                                                     \
    }
STR_ARG(request_products, 0)
STR_ARG(subscription_status, 1)
STR_ARG(request_refund, 0)
