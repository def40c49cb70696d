/*
 * The static-library test (scripts/ci-25-native-lib.sh): a C program linked
 * against out/lib/libIAPBridge.a with nothing but the flags in
 * out/lib/link-flags.txt, run with no Swift toolchain on the library path.
 *
 *   static_link_test CATALOG.storekit
 *
 * Opens a simulator bridge in a fresh temporary directory, buys coins_100,
 * polls until its "7" arrives (results are asynchronous), confirms it, closes,
 * reopens and checks nothing is delivered again. Prints "ok ..." lines and
 * exits 0 on success.
 */
#include "iap_bridge.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <limits.h>
#include <unistd.h>

static int failures;

static void check(int ok, const char *what, const char *detail) {
    if (ok) {
        printf("ok   %s\n", what);
    } else {
        failures++;
        printf("FAIL %s%s%s\n", what, detail && *detail ? ": " : "", detail ? detail : "");
    }
}

static void sleep_ms(long ms) {
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

/* Polls until a message containing both needles arrives (or 15 s pass). */
static char *wait_for(iap_bridge *b, const char *needle1, const char *needle2) {
    for (int i = 0; i < 15000 / 2; i++) {
        char *m;
        while ((m = iap_poll(b)) != NULL) {
            if (strstr(m, needle1) && (!needle2 || strstr(m, needle2))) return m;
            iap_free(m);
        }
        sleep_ms(2);
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s CATALOG.storekit\n", argv[0]);
        return 2;
    }
    char catalog[PATH_MAX];
    if (!realpath(argv[1], catalog)) {
        perror(argv[1]);
        return 2;
    }
    char dir[] = "/tmp/iap-static-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 2;
    }

    check(strcmp(iap_version(), IAP_VERSION_STRING) == 0, "iap_version matches the header", iap_version());
    check(iap_version_number() == IAP_VERSION_NUMBER, "iap_version_number matches the header", NULL);

    char config[3 * PATH_MAX];
    snprintf(config, sizeof config,
             "{\"store\":\"simulator\",\"dataDir\":\"%s/data\",\"catalog\":\"%s\","
             "\"simulator\":{\"stateDir\":\"%s/appstore\"}}", dir, catalog, dir);

    iap_bridge *b = NULL;
    int32_t rc = iap_open(config, &b);
    check(rc == IAP_OK && b != NULL, "iap_open on the simulator", iap_errmsg());
    if (rc != IAP_OK) {
        char rm[PATH_MAX + 16];
        snprintf(rm, sizeof rm, "rm -rf '%s'", dir);
        if (system(rm) != 0) fprintf(stderr, "could not remove %s\n", dir);
        return 1;
    }

    int64_t key = 0;
    rc = iap_buy(b, "coins_100", 1700000000123LL, &key);
    check(rc == IAP_OK && key > 0, "iap_buy coins_100 returns at once with a key", iap_errmsg());

    char needle[64];
    snprintf(needle, sizeof needle, "\"key\":\"%lld\"", (long long)key);
    char *msg = wait_for(b, "\"type\":\"7\"", needle);
    check(msg != NULL && strstr(msg, "\"productID\":\"coins_100\"") && strstr(msg, "\"result\":\"0\""),
          "the \"7\" arrives through iap_poll: success for coins_100", msg ? msg : "nothing within 15 s");
    iap_free(msg);

    rc = iap_confirm(b, key);
    check(rc == IAP_OK, "iap_confirm of the delivered key", iap_errmsg());
    check(iap_flush(b) == IAP_OK, "iap_flush", iap_errmsg());
    check(iap_close(b) == IAP_OK, "iap_close", iap_errmsg());
    rc = iap_close(b);
    check(rc == IAP_E_CLOSED || rc == IAP_E_INVALID_HANDLE, "iap_close twice is refused", iap_error_name(rc));

    /* Reopen: the confirmed result is gone. */
    rc = iap_open(config, &b);
    check(rc == IAP_OK, "iap_open again", iap_errmsg());
    if (rc == IAP_OK) {
        char *ent = wait_for(b, "\"type\":\"entitlements\"", NULL);
        check(ent != NULL, "reopen: \"entitlements\" at open", NULL);
        iap_free(ent);
        sleep_ms(100);
        int again = 0;
        char *m;
        while ((m = iap_poll(b)) != NULL) {
            if (strstr(m, "\"type\":\"7\"")) again++;
            iap_free(m);
        }
        check(again == 0, "reopen: the confirmed result is not delivered again", NULL);
        iap_close(b);
    }

    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);

    printf("static-link: %s\n", failures ? "FAILED" : "all checks passed");
    return failures ? 1 : 0;
}
