/*
 * iap_json_field: reads one top-level field of an IAPBridge message, enough
 * for the C samples and tests. The SDK writes compact JSON ("name":value,
 * no spaces), which is what this relies on; a real game uses its engine's
 * JSON parser. Copies the field's value (a string's contents without the
 * quotes and with escapes reduced to the escaped character, or a number's or
 * literal's text) into out, NUL-terminated. Returns 1 if found, 0 if not.
 */
#ifndef IAP_JSON_FIELD_H
#define IAP_JSON_FIELD_H
#include <stdio.h>
#include <string.h>

static int iap_json_field(const char *json, const char *name, char *out, size_t size) {
    char pat[128];
    snprintf(pat, sizeof pat, "\"%s\":", name);
    const char *p = strstr(json, pat);
    if (!p || size == 0) return 0;
    p += strlen(pat);
    size_t n = 0;
    if (*p == '"') {
        p++;
        while (*p && *p != '"' && n + 1 < size) {
            if (*p == '\\' && p[1]) p++;
            out[n++] = *p++;
        }
    } else {
        while (*p && *p != ',' && *p != '}' && n + 1 < size) out[n++] = *p++;
    }
    out[n] = 0;
    return 1;
}
#endif
