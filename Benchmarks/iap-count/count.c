/*
 * iap-count: the CPU-bound figures of BENCHMARKS.md counted in instructions,
 * under `valgrind --tool=callgrind --separate-threads=yes`
 * (scripts/bench-callgrind.sh builds it, runs it and gates on the counts).
 * Instruction counts do not move with what else runs on the machine, as
 * milliseconds do.
 *
 *   iap-count --lib libIAPBridge.so --empty libiapempty.so --catalog Game.storekit
 *             --dir EMPTYDIR (--windows | --sustain N)
 *
 * --windows: the game thread's calls. Each window is bracketed by
 * CALLGRIND_ZERO_STATS and CALLGRIND_DUMP_STATS_AT("<window> <n>"), which act
 * on the calling thread only: the dump counts this thread's instructions in
 * the window, none of the SDK thread's.
 *   call N      N calls of an empty exported function of another dlopen'ed library
 *   poll N      N iap_poll calls on a bridge with nothing queued
 *   buy N       N iap_buy calls (SDK keys; the SDK thread works meanwhile)
 *   confirm N   N iap_confirm calls of delivered results
 * --sustain N: open a bridge, 10 warm-up purchases, then N purchases one
 * after the other (buy, iap_flush, poll the "7", confirm), close. No client
 * request: the script reads callgrind's per-thread totals at exit and
 * subtracts the run with N = 0, so what remains is the N purchases' cost on
 * the game's thread (thread 1) and on the SDK's threads (all others).
 * --make-pending N (run natively; nothing counted): N purchases in
 * DIR/open whose "7"s were polled and never confirmed, the bridge closed.
 * --open-pending N: window "open N" is iap_open on that directory and the
 * polls until all N results came back, on the game's thread; the script
 * reads the SDK's threads at exit and subtracts the run with N = 0.
 * Outside valgrind the client requests do nothing and the program just runs.
 */
#define _GNU_SOURCE
#include "../iap-bench/bench.h"  /* the SDK's table and its loader (sdk.c), shared with iap-bench */

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <valgrind/callgrind.h>

static void (*empty_call)(void);
static const char *catalog, *root;

void die(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "iap-count: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(1);
}

/* The empty function of another shared library (not the baselines
 * library iap-bench loads: only this one symbol). */
static void (*load_empty_call(const char *path))(void) {
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) die("cannot load %s: %s", path, dlerror());
    void (*f)(void) = (void (*)(void))dlsym(h, "bl_empty_call");
    if (!f) die("%s does not export bl_empty_call", path);
    return f;
}

/* The simulator as iap-bench configures it: no delay, no store syncs, no
 * entitlements message, no in-flight limit in the way of the buy window. */
static iap_bridge *open_raw(const char *dir) {
    char config[12288];
    snprintf(config, sizeof config,
             "{\"store\":\"simulator\",\"dataDir\":\"%s/data\",\"catalog\":\"%s\",\"entitlementsAtOpen\":false,"
             "\"purchasesInFlight\":1000000,"
             "\"simulator\":{\"stateDir\":\"%s/state\",\"durable\":false,\"tickMs\":0,\"purchaseDelayMs\":0}}",
             dir, catalog, dir);
    iap_bridge *b = NULL;
    if (SDK.open(config, &b) != IAP_OK) die("iap_open failed: %s", SDK.errmsg());
    return b;
}

/* A bridge on a new DIR/name, every message of its open taken. */
static iap_bridge *open_bridge(const char *name) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/%s", root, name);
    if (mkdir(dir, 0755) != 0) die("cannot create %s", dir);
    iap_bridge *b = open_raw(dir);
    if (SDK.flush(b) != IAP_OK) die("iap_flush failed: %s", SDK.errmsg());
    for (char *m; (m = SDK.poll(b)) != NULL;) SDK.free(m);
    return b;
}

static int64_t key_of(const char *json) {
    if (strncmp(json, "{\"type\":\"7\"", 11) != 0) return 0;
    const char *k = strstr(json, "\"key\":\"");
    return k ? strtoll(k + 7, NULL, 10) : 0;
}

/* Polls until the "7" of `key` (iap_flush returned: it is queued). */
static void take7(iap_bridge *b, int64_t key) {
    for (char *m; (m = SDK.poll(b)) != NULL;) {
        int64_t k = key_of(m);
        SDK.free(m);
        if (k == key) return;
    }
    die("no \"7\" for key %lld after iap_flush", (long long)key);
}

static void purchase(iap_bridge *b) {
    int64_t key = 0;
    if (SDK.buy(b, "coins_100", 0, &key) != IAP_OK) die("iap_buy failed: %s", SDK.errmsg());
    if (SDK.flush(b) != IAP_OK) die("iap_flush failed: %s", SDK.errmsg());
    take7(b, key);
    if (SDK.confirm(b, key) != IAP_OK) die("iap_confirm failed: %s", SDK.errmsg());
}

static void window_start(void) { CALLGRIND_ZERO_STATS; }

static void window_end(const char *name, long n) {
    char label[64];
    snprintf(label, sizeof label, "%s %ld", name, n);
    CALLGRIND_DUMP_STATS_AT(label);
    printf("window %s done\n", label);
}

static void calls_and_polls(long n) {
    iap_bridge *b = open_bridge("poll");
    void (*call)(void) = empty_call;
    char *(*poll)(iap_bridge *) = SDK.poll;
    for (long i = 0; i < 1000; i++) { call(); if (poll(b)) die("a message on an empty queue"); }
    window_start();
    for (long i = 0; i < n; i++) call();
    window_end("call", n);
    window_start();
    for (long i = 0; i < n; i++) {
        if (poll(b)) die("a message on an empty queue");
    }
    window_end("poll", n);
    SDK.close(b);
}

static void buys_and_confirms(long n) {
    iap_bridge *b = open_bridge("buy");
    for (int i = 0; i < 10; i++) purchase(b);
    int64_t *keys = calloc((size_t)n, sizeof *keys);
    window_start();
    for (long i = 0; i < n; i++) {
        if (SDK.buy(b, "coins_100", 0, &keys[i]) != IAP_OK) die("iap_buy failed: %s", SDK.errmsg());
    }
    window_end("buy", n);
    if (SDK.flush(b) != IAP_OK) die("iap_flush failed");
    long sevens = 0;
    for (char *m; (m = SDK.poll(b)) != NULL; SDK.free(m)) sevens += key_of(m) != 0;
    if (sevens != n) die("%ld results for %ld buys", sevens, n);
    window_start();
    for (long i = 0; i < n; i++) {
        if (SDK.confirm(b, keys[i]) != IAP_OK) die("iap_confirm failed: %s", SDK.errmsg());
    }
    window_end("confirm", n);
    if (SDK.flush(b) != IAP_OK) die("iap_flush failed");
    SDK.close(b);
    free(keys);
}

/* Product requests as a game makes them (under the bound of 64 a second:
 * n <= 30 after the warm-up), with the same list as frame.c's. */
static void requests(long n) {
    iap_bridge *b = open_bridge("request");
    const char *ids = "[\"coins_100\",\"remove_ads\",\"no_such_product\"]";
    for (int i = 0; i < 2; i++) {
        if (SDK.request_products(b, ids) != IAP_OK) die("iap_request_products failed: %s", SDK.errmsg());
    }
    if (SDK.flush(b) != IAP_OK) die("iap_flush failed");
    for (char *m; (m = SDK.poll(b)) != NULL; SDK.free(m)) {}
    window_start();
    for (long i = 0; i < n; i++) {
        if (SDK.request_products(b, ids) != IAP_OK) die("iap_request_products failed: %s", SDK.errmsg());
    }
    window_end("request", n);
    if (SDK.flush(b) != IAP_OK) die("iap_flush failed");
    for (char *m; (m = SDK.poll(b)) != NULL; SDK.free(m)) {}
    SDK.close(b);
}

static void sustain(long n) {
    iap_bridge *b = open_bridge("sustain");
    for (int i = 0; i < 10; i++) purchase(b);
    for (long i = 0; i < n; i++) purchase(b);
    if (SDK.flush(b) != IAP_OK) die("iap_flush failed");
    if (SDK.close(b) != IAP_OK) die("iap_close failed: %s", SDK.errmsg());
    printf("sustain %ld done\n", n);
}

/* --make-pending N (run natively, not counted): N purchases whose "7"s
 * were polled and never confirmed, in DIR/open. */
static void make_pending(long n) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/open", root);
    if (mkdir(dir, 0755) != 0) die("cannot create %s", dir);
    iap_bridge *b = open_raw(dir);
    for (long i = 0; i < n; i++) {
        int64_t key = 0;
        if (SDK.buy(b, "coins_100", 0, &key) != IAP_OK) die("iap_buy failed: %s", SDK.errmsg());
    }
    if (SDK.flush(b) != IAP_OK) die("iap_flush failed: %s", SDK.errmsg());
    long sevens = 0;
    for (char *m; (m = SDK.poll(b)) != NULL; SDK.free(m)) sevens += key_of(m) != 0;
    if (sevens != n) die("%ld results for %ld buys", sevens, n);
    if (SDK.close(b) != IAP_OK) die("iap_close failed: %s", SDK.errmsg());
    printf("make-pending %ld done\n", n);
}

/* --open-pending N: the window "open N" is iap_open on DIR/open (made by
 * --make-pending N) and the polls until its N results came back, on the
 * game's thread; the SDK's threads are read at exit. */
static void open_pending(long n) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/open", root);
    window_start();
    iap_bridge *b = open_raw(dir);
    long sevens = 0;
    for (long spins = 0; sevens < n; spins++) {
        char *m = SDK.poll(b);
        if (!m) {
            if (spins > 4000000000L) die("only %ld of %ld results came back", sevens, n);
            continue;
        }
        sevens += key_of(m) != 0;
        SDK.free(m);
    }
    window_end("open", n);
    if (SDK.close(b) != IAP_OK) die("iap_close failed: %s", SDK.errmsg());
}

int main(int argc, char **argv) {
    const char *lib = NULL, *empty = NULL;
    int windows = 0;
    long sustain_n = -1, make_n = -1, open_n = -1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--windows") == 0) { windows = 1; continue; }
        if (i + 1 >= argc) die("option %s needs a value", argv[i]);
        if (strcmp(argv[i], "--lib") == 0) lib = argv[++i];
        else if (strcmp(argv[i], "--empty") == 0) empty = argv[++i];
        else if (strcmp(argv[i], "--catalog") == 0) catalog = argv[++i];
        else if (strcmp(argv[i], "--dir") == 0) root = argv[++i];
        else if (strcmp(argv[i], "--sustain") == 0) sustain_n = strtol(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--make-pending") == 0) make_n = strtol(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--open-pending") == 0) open_n = strtol(argv[++i], NULL, 10);
        else die("unknown option %s", argv[i]);
    }
    if (!lib || !empty || !catalog || !root || windows + (sustain_n >= 0) + (make_n >= 0) + (open_n >= 0) != 1)
        die("usage: iap-count --lib LIB --empty LIB --catalog FILE --dir DIR (--windows | --sustain N | --make-pending N | --open-pending N)");
    setvbuf(stdout, NULL, _IOLBF, 0);
    load_sdk(lib);
    empty_call = load_empty_call(empty);

    if (windows) {
        calls_and_polls(1000000);
        buys_and_confirms(1000);
        requests(30);
    } else if (sustain_n >= 0) {
        sustain(sustain_n);
    } else if (make_n >= 0) {
        make_pending(make_n);
    } else {
        open_pending(open_n);
    }
    return 0;
}
