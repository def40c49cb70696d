/* rss_growth_*: memory over 100,000 buy-poll-confirm cycles on one bridge.
 * Syncs are skipped here (this measures memory, not durability; 200,000
 * syncs would take minutes). Readings after 1,000 warm-up cycles, after
 * 50,000 more and after 100,000 more (RSS, and the heap in use from
 * mallinfo2, which freed-but-kept pages do not blur).
 *
 * The simulated App Store keeps every transaction it ever charged in memory,
 * as the App Store keeps them all; that growth is the store's, not the SDK's.
 * To tell them apart the bridge is closed, and a bridge is opened on the
 * same store state with a fresh data directory (another install): the store
 * holds exactly what it held, the SDK starts empty. The heap in use at the
 * end of the session minus the heap after that open is what the SDK itself
 * held on to after 101,000 confirmed purchases (sdk_heap_retained_kb); the
 * rest of the growth is the store's (store_heap_retained_kb). */
#include "bench.h"

#include <stdio.h>

static void cycle(iap_bridge *b) {
    int64_t key = bridge_buy(b);
    char *m = bridge_wait7(b, 5e6);
    if (!m) die("no \"7\" for key %lld", (long long)key);
    SDK.free(m);
    if (SDK.confirm(b, key) != IAP_OK) die("iap_confirm failed: %s", SDK.errmsg());
}

void bench_rss(void) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/rss", OPT.dir);
    const long half = 50000;
    bench_set_nosync(1);
    iap_bridge *b = bridge_open(dir);
    bridge_drain(b);
    for (int i = 0; i < 1000; i++) cycle(b);
    SDK.flush(b);
    long rss0 = rss_kb(), heap0 = heap_kb();
    double t0 = now_us();
    for (long i = 0; i < half; i++) {
        cycle(b);
        if (i % 1000 == 999) SDK.flush(b);
    }
    SDK.flush(b);
    long rss1 = rss_kb(), heap1 = heap_kb();
    for (long i = 0; i < half; i++) {
        cycle(b);
        if (i % 1000 == 999) SDK.flush(b);
    }
    SDK.flush(b);
    double cycle_us = (now_us() - t0) / (2 * half);
    long rss2 = rss_kb(), heap2 = heap_kb();
    bridge_close(b);
    b = bridge_open_data(dir, "data-reinstalled");
    if (bridge_drain(b) != 0) die("a confirmed result came back after reopening");
    SDK.flush(b);
    long heap3 = heap_kb();
    bridge_close(b);
    bench_set_nosync(0);

    figure_int("rss_growth_kb", rss2 - rss0, "kB");
    figure_int("rss_growth_first_50k_kb", rss1 - rss0, "kB");
    figure_int("rss_growth_second_50k_kb", rss2 - rss1, "kB");
    figure_int("heap_growth_kb", heap2 - heap0, "kB");
    figure_int("heap_growth_second_50k_kb", heap2 - heap1, "kB");
    figure_int("sdk_heap_retained_kb", heap2 - heap3, "kB");
    figure_int("store_heap_retained_kb", (heap2 - heap0) - (heap2 - heap3), "kB");
    figure("rss_cycle_us_nosync", cycle_us, "us");
    figure_int("rss_cycles", 2 * half, "cycles");
}
