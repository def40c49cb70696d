/* sustain_*: what the SDK's own threads spend per purchase when a game buys
 * one purchase after the other (buy, wait for its "7", confirm), at 10, 100,
 * 1,000 and 10,000 purchases on a fresh bridge each (after 10 warm-up
 * purchases). The SDK's threads' CPU time is the process's CPU time minus
 * this (the game's) thread's, both read from the kernel's per-thread clocks:
 * the store's answer, the record written and synced, the confirm and its
 * group commit, compaction. Syncs are real (a quick run skips them). Flat
 * means the cost at 10,000 is close to the cost at 10;
 * scripts/bench-callgrind.sh counts the same in instructions.
 *
 * Each size is run on fresh bridges until the SDK's threads have spent at
 * least MIN_SPAN_US between them, and the figure is their total CPU time over
 * the total purchases. A median of short rounds was not enough: on a CI
 * runner whose process clock takes in the other threads' time only now and
 * then, two of three rounds of 100 purchases (1.3 ms of SDK time) read 0, and
 * the quick run printed 0.00 us per purchase. Over 20 ms such a lag is small. */
#define _GNU_SOURCE
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int64_t key_of(const char *json) {
    const char *k = strstr(json, "\"key\":\"");
    return k ? strtoll(k + 7, NULL, 10) : 0;
}

static void purchase(iap_bridge *b) {
    int64_t key = bridge_buy(b);
    char *m = bridge_wait7(b, 5e6);
    if (!m || key_of(m) != key) die("no \"7\" for key %lld", (long long)key);
    SDK.free(m);
    if (SDK.confirm(b, key) != IAP_OK) die("iap_confirm failed: %s", SDK.errmsg());
}

/* One fresh bridge, N purchases: the SDK threads' CPU microseconds in all. */
static double run(long n, int round) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/sustain-%ld-%d", OPT.dir, n, round);
    iap_bridge *b = bridge_open(dir);
    bridge_drain(b);
    for (int i = 0; i < 10; i++) purchase(b);
    if (SDK.flush(b) != IAP_OK) die("iap_flush failed: %s", SDK.errmsg());
    double others0 = cpu_us() - thread_cpu_us();
    for (long i = 0; i < n; i++) purchase(b);
    if (SDK.flush(b) != IAP_OK) die("iap_flush failed: %s", SDK.errmsg());
    double others = cpu_us() - thread_cpu_us() - others0;
    bridge_close(b);
    return others;
}

/* Past its least rounds a size stops at 20 ms of SDK time or at 20,000
 * purchases, whichever comes first (a clock that never moves ends there, and
 * the figure check in CI then fails it). */
enum { MIN_SPAN_US = 20000, MAX_PURCHASES = 20000 };

void bench_sustain(void) {
    const long sizes[] = {10, 100, 1000, 10000};
    const int rounds_full[] = {21, 11, 3, 1}, rounds_quick[] = {5, 3, 1, 1};
    double us[4];
    bench_set_nosync(OPT.quick);
    for (int i = 0; i < 4; i++) {
        int least = OPT.quick ? rounds_quick[i] : rounds_full[i];
        double spent = 0;
        long bought = 0;
        for (int r = 0; r < least || (spent < MIN_SPAN_US && bought < MAX_PURCHASES); r++) {
            spent += run(sizes[i], r);
            bought += sizes[i];
        }
        us[i] = spent / (double)bought;
    }
    bench_set_nosync(0);
    char name[64];
    for (int i = 0; i < 4; i++) {
        snprintf(name, sizeof name, "sustain_sdk_cpu_us_per_purchase_%ld", sizes[i]);
        figure(name, us[i], "us");
    }
    figure("sustain_sdk_cpu_10000_vs_10", us[3] / us[0], "x");
}
