/*
 * iap_gd_common.h: what the Godot 3 (GDNative) and Godot 4 (GDExtension)
 * bindings share: the table of open bridges, keys as decimal strings, and the
 * binding's own error messages. Engine-neutral C: no Godot header here.
 *
 * KEYS never become GDScript ints or floats: gdc_key_string prints the
 * int64_t key iap_buy returned, gdc_parse_key reads a message's "key"
 * string back digit by digit (no double, no 32-bit clamp) and refuses
 * anything that is not exactly a decimal int64.
 *
 * HANDLES: GDScript holds a bridge as a small int (a slot of this table,
 * 1...GDC_MAX_BRIDGES), never as a pointer. A closed slot answers
 * IAP_E_CLOSED until it is reused by a later open.
 */
#ifndef IAP_GD_COMMON_H
#define IAP_GD_COMMON_H

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "iap_bridge.h"

#define GDC_MAX_BRIDGES 64

static pthread_mutex_t gdc_lock = PTHREAD_MUTEX_INITIALIZER;
static iap_bridge *gdc_slots[GDC_MAX_BRIDGES];
static int gdc_closed[GDC_MAX_BRIDGES];
static _Thread_local char gdc_err[512];

/* Records the message errmsg() returns next on this thread. */
static void gdc_set_error(const char *msg) {
    snprintf(gdc_err, sizeof gdc_err, "%s", msg ? msg : "");
}

/* A failed iap_* call: keep its sentence, return its code. */
static int32_t gdc_fail(int32_t code) {
    if (code != IAP_OK) gdc_set_error(iap_errmsg());
    return code;
}

static const char *gdc_errmsg(void) { return gdc_err; }

/* A call on a bridge its object closed (the slot may belong to another bridge
 * by now, so the object answers without it). */
static int32_t gdc_closed_error(void) {
    gdc_set_error("the bridge was closed; open a new one");
    return IAP_E_CLOSED;
}

/* The bridge of handle h, or NULL with *code set (IAP_E_INVALID_HANDLE, IAP_E_CLOSED). */
static iap_bridge *gdc_bridge(int64_t h, int32_t *code) {
    iap_bridge *b = NULL;
    *code = IAP_E_INVALID_HANDLE;
    pthread_mutex_lock(&gdc_lock);
    if (h >= 1 && h <= GDC_MAX_BRIDGES) {
        b = gdc_slots[h - 1];
        if (!b && gdc_closed[h - 1]) *code = IAP_E_CLOSED;
    }
    pthread_mutex_unlock(&gdc_lock);
    if (b) *code = IAP_OK;
    else if (*code == IAP_E_CLOSED) gdc_closed_error();
    else gdc_set_error("not a bridge handle from open()");
    return b;
}

/* Opens a bridge; returns its handle (>= 1) or a negative IAP_E_* code. */
static int64_t gdc_open(const char *config_json) {
    iap_bridge *b = NULL;
    int32_t rc = iap_open(config_json, &b);
    if (rc != IAP_OK) return gdc_fail(rc);
    pthread_mutex_lock(&gdc_lock);
    for (int i = 0; i < GDC_MAX_BRIDGES; i++) {
        if (!gdc_slots[i]) {
            gdc_slots[i] = b;
            gdc_closed[i] = 0;
            pthread_mutex_unlock(&gdc_lock);
            return i + 1;
        }
    }
    pthread_mutex_unlock(&gdc_lock);
    iap_close(b);
    gdc_set_error("too many bridges open in this binding (64)");
    return IAP_E_BUSY;
}

/* Closes handle h: the slot is emptied first, so no other call gets the bridge. */
static int32_t gdc_close(int64_t h) {
    int32_t code;
    iap_bridge *b = gdc_bridge(h, &code);
    if (!b) return code;
    pthread_mutex_lock(&gdc_lock);
    int mine = gdc_slots[h - 1] == b;
    if (mine) {
        gdc_slots[h - 1] = NULL;
        gdc_closed[h - 1] = 1;
    }
    pthread_mutex_unlock(&gdc_lock);
    if (!mine) return gdc_closed_error();
    return gdc_fail(iap_close(b));
}

/* Closes every bridge still open (the engine unloads the library). */
static void gdc_close_all(void) {
    for (int64_t h = 1; h <= GDC_MAX_BRIDGES; h++) {
        int32_t code;
        if (gdc_bridge(h, &code)) gdc_close(h);
    }
}

/* Reads a decimal int64 key ("1732406400123", "-4127..."): exactly, or returns 0. */
static int gdc_parse_key(const char *s, int64_t *out) {
    int neg = 0;
    uint64_t v = 0, limit;
    if (!s || !*s) return 0;
    if (*s == '-') { neg = 1; s++; }
    if (!*s || strlen(s) > 19) return 0;
    limit = neg ? (uint64_t)INT64_MAX + 1u : (uint64_t)INT64_MAX;
    for (; *s; s++) {
        if (*s < '0' || *s > '9') return 0;
        unsigned d = (unsigned)(*s - '0');
        if (v > (limit - d) / 10u) return 0;
        v = v * 10u + d;
    }
    *out = neg ? (int64_t)(0u - v) : (int64_t)v;
    return 1;
}

/* Prints a key as the decimal string messages carry. buf: at least 24 bytes. */
static void gdc_key_string(int64_t key, char *buf, size_t size) {
    snprintf(buf, size, "%lld", (long long)key);
}

/* confirm(h, key string): refuses a key that is not a decimal int64. */
static int32_t gdc_confirm(int64_t h, const char *key) {
    int64_t k;
    int32_t code;
    iap_bridge *b = gdc_bridge(h, &code);
    if (!b) return code;
    if (!gdc_parse_key(key, &k)) {
        char msg[400];
        snprintf(msg, sizeof msg, "confirm: the key \"%.300s\" is not a decimal int64 (pass the message's \"key\" String as it is)", key ? key : "");
        gdc_set_error(msg);
        return IAP_E_INVALID_ARG;
    }
    return gdc_fail(iap_confirm(b, k));
}

#endif
