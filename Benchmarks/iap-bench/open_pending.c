/* open_pending_ms_N: a game starts with N results it never confirmed; the
 * time from iap_open until every one of them has been polled again. The
 * pending results are made once per N with syncs skipped, then the file
 * system is synced; each sample reopens the same, unchanged state. The
 * simulated store also re-delivers its N unfinished transactions at open
 * (as StoreKit does), which the SDK recognises as already delivered, and
 * vouches for each pending purchase (C11: a record the store does not list
 * as unfinished is dropped, so there is no "SDK alone" figure any more: the
 * SDK delivers nothing the store does not vouch for). */
#define _GNU_SOURCE
#include "bench.h"

#include <stdio.h>

/* Opens until N results were polled, `samples` times; the median in ms. */
static double time_opens(const char *dir, const char *state, long n, int samples) {
    enum { max_samples = 21 };
    double ms[max_samples];
    if (samples > max_samples) samples = max_samples;
    for (int s = 0; s < samples; s++) {
        double t0 = now_us();
        iap_bridge *b = bridge_open_dirs(dir, "data", state);
        long seen = 0;
        while (seen < n) {
            char *m = SDK.poll(b);
            if (!m) {
                if (now_us() - t0 > 600e6) die("only %ld of %ld results re-emitted", seen, n);
                continue;
            }
            seen += is_type7(m);
            SDK.free(m);
        }
        ms[s] = (now_us() - t0) / 1000;
        if (bridge_drain(b) != 0) die("more results than were pending");
        bridge_close(b);
    }
    return median(ms, samples);
}

static void measure(long n, int samples, double *full_ms) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/open-%ld", OPT.dir, n);
    iap_bridge *b = bridge_open(dir);
    bench_set_nosync(1);
    for (long i = 0; i < n; i++) {
        bridge_buy(b);
        if ((i & 1023) == 1023) bridge_drain(b);
    }
    bridge_drain(b);
    bridge_close(b);
    bench_set_nosync(0);
    sync_dir_fs(dir);
    *full_ms = time_opens(dir, "state", n, samples);
}

void bench_open_pending(void) {
    const long sizes[] = {10, 1000, 100000};
    const int samples_full[] = {21, 21, 5}, samples_quick[] = {5, 5, 1};
    double ms[3];
    char name[64];
    for (int i = 0; i < 3; i++) {
        measure(sizes[i], OPT.quick ? samples_quick[i] : samples_full[i], &ms[i]);
        snprintf(name, sizeof name, "open_pending_ms_%ld", sizes[i]);
        figure(name, ms[i], "ms");
    }
    /* Per-record cost at 100,000 over per-record cost at 1,000: ~1 when linear. */
    figure("open_pending_per_record_100000_vs_1000", (ms[2] / 100000) / (ms[1] / 1000), "x");
    for (int i = 0; i < 3; i++) {
        snprintf(name, sizeof name, "open_pending_samples_%ld", sizes[i]);
        figure_int(name, OPT.quick ? samples_quick[i] : samples_full[i], "samples");
    }
}
