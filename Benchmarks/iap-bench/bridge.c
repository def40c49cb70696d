/* A bridge on the simulated App Store, configured as the issue asks: no
 * simulated delay, the store's own state kept without fsync (its durability
 * is Apple's, not the SDK's; the outbox stays durable), no renewal timer and
 * no entitlements message at open, so every message polled is a result. */
#define _GNU_SOURCE
#include "bench.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

iap_bridge *bridge_open(const char *dir) { return bridge_open_data(dir, "data"); }

iap_bridge *bridge_open_data(const char *dir, const char *data_name) { return bridge_open_dirs(dir, data_name, "state"); }

iap_bridge *bridge_open_dirs(const char *dir, const char *data_name, const char *state_name) {
    char data[4096], state[4096], config[12288];
    make_dir(dir);
    snprintf(data, sizeof data, "%s/%s", dir, data_name);
    snprintf(state, sizeof state, "%s/%s", dir, state_name);
    snprintf(config, sizeof config,
             "{\"store\":\"simulator\",\"dataDir\":\"%s\",\"catalog\":\"%s\",\"entitlementsAtOpen\":false,\"purchasesInFlight\":1000000,"
             "\"simulator\":{\"stateDir\":\"%s\",\"durable\":false,\"tickMs\":0,\"purchaseDelayMs\":0}}",
             data, OPT.catalog, state);
    iap_bridge *b = NULL;
    int32_t rc = SDK.open(config, &b);
    if (rc != IAP_OK) die("iap_open failed (%d): %s", rc, SDK.errmsg());
    return b;
}

void bridge_close(iap_bridge *b) {
    int32_t rc = SDK.close(b);
    if (rc != IAP_OK) die("iap_close failed (%d): %s", rc, SDK.errmsg());
}

int64_t bridge_buy(iap_bridge *b) {
    int64_t key = 0;
    int32_t rc = SDK.buy(b, "coins_100", 0, &key);
    if (rc != IAP_OK) die("iap_buy failed (%d): %s", rc, SDK.errmsg());
    return key;
}

int is_type7(const char *json) { return strncmp(json, "{\"type\":\"7\"", 11) == 0; }

char *bridge_wait7(iap_bridge *b, double limit_us) {
    double start = now_us();
    for (;;) {
        char *m = SDK.poll(b);
        if (m) {
            if (is_type7(m)) return m;
            SDK.free(m);
            continue;
        }
        if (now_us() - start > limit_us) return NULL;
    }
}

char *bridge_wait7_sleeping(iap_bridge *b, double limit_us, long sleep_us) {
    double start = now_us();
    struct timespec pause = {0, sleep_us * 1000};
    for (;;) {
        char *m = SDK.poll(b);
        if (m) {
            if (is_type7(m)) return m;
            SDK.free(m);
            continue;
        }
        if (now_us() - start > limit_us) return NULL;
        nanosleep(&pause, NULL);
    }
}

/* Everything the SDK thread has made so far: iap_flush waits until it has
 * handled what was handed to it (results included: no purchase delay). */
long bridge_drain(iap_bridge *b) {
    if (SDK.flush(b) != IAP_OK) die("iap_flush failed: %s", SDK.errmsg());
    long sevens = 0;
    for (char *m; (m = SDK.poll(b)) != NULL; SDK.free(m)) sevens += is_type7(m);
    return sevens;
}
