/* confirm_burst_1000_*: a game confirms 1,000 delivered results in one frame;
 * timed until the sync that made the confirms durable returned (read from the
 * fdatasync interposer): the 1,000 iap_confirm calls and the SDK's group
 * commit, against one write + fdatasync (the floor) measured alongside.
 * confirm_burst_1000_finished_*: the same burst until iap_flush returned,
 * i.e. also the store finishing the 1,000 transactions (the simulated
 * store's work here; StoreKit's, asynchronously, in a shipped game).
 *
 * Each sample is a fresh session on a fresh data directory: 1,000 purchases
 * (made with syncs skipped, then the whole file system synced, so the burst
 * starts from clean, durable state), all polled, then the burst. A fresh
 * directory per sample keeps one sample's history out of the next. */
#define _GNU_SOURCE
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { burst = 1000, max_samples = 21 };

typedef struct {
    double total_us, frame_us, floor_us, cpu_us, frame_cpu_us, durable_us;
    long syncs;
} burst_sample;

/* One session: set up 1,000 pending results, then time the burst. With
 * `nosync`, syncs stay skipped during the burst too (CPU work alone). */
static burst_sample run(const char *dir, int floor_fd, int nosync) {
    static int64_t keys[burst];
    static char record[512];
    memset(record, 'x', sizeof record);
    burst_sample r = {0};
    iap_bridge *b = bridge_open(dir);
    bridge_drain(b);
    bench_set_nosync(1);
    for (int i = 0; i < burst; i++) keys[i] = bridge_buy(b);
    long seen = bridge_drain(b);
    if (seen != burst) die("expected %d results, polled %ld", burst, seen);
    if (!nosync) {
        bench_set_nosync(0);
        sync_dir_fs(dir);
        double t0 = now_us();
        if (BL.floor_commit(floor_fd, record, sizeof record) != 0) die("floor write failed");
        r.floor_us = now_us() - t0;
    }
    long s0 = bench_sync_calls();
    double c0 = cpu_us(), g0 = thread_cpu_us();
    double t0 = now_us();
    for (int i = 0; i < burst; i++) {
        if (SDK.confirm(b, keys[i]) != IAP_OK) die("iap_confirm failed: %s", SDK.errmsg());
    }
    double t1 = now_us();
    r.frame_cpu_us = thread_cpu_us() - g0;
    if (SDK.flush(b) != IAP_OK) die("iap_flush failed: %s", SDK.errmsg());
    double t2 = now_us();
    r.cpu_us = cpu_us() - c0;
    r.durable_us = bench_last_data_sync_end_us() - t0;
    r.syncs = bench_sync_calls() - s0;
    r.frame_us = t1 - t0;
    r.total_us = t2 - t0;
    bridge_close(b);
    bench_set_nosync(0);
    return r;
}

void bench_burst(void) {
    char base[4096], dir[4200], floor_path[4200];
    snprintf(base, sizeof base, "%s/burst", OPT.dir);
    make_dir(base);
    snprintf(floor_path, sizeof floor_path, "%s/floor.log", base);
    int floor_fd = BL.floor_open(floor_path);
    if (floor_fd < 0) die("cannot open %s", floor_path);

    const int samples = OPT.quick ? 3 : max_samples;
    double total[max_samples], frame[max_samples], flo[max_samples], nosync[max_samples], cpu[max_samples];
    double call_cpu[max_samples], durable[max_samples];
    long syncs = 0;
    for (int s = 0; s < samples; s++) {
        snprintf(dir, sizeof dir, "%s/s%d", base, s);
        burst_sample r = run(dir, floor_fd, 0);
        total[s] = r.total_us;
        durable[s] = r.durable_us;
        frame[s] = r.frame_us;
        flo[s] = r.floor_us;
        syncs += r.syncs;
        snprintf(dir, sizeof dir, "%s/n%d", base, s);
        burst_sample q = run(dir, floor_fd, 1);
        nosync[s] = q.total_us;
        cpu[s] = q.cpu_us;
        call_cpu[s] = q.frame_cpu_us * 1000 / burst;
    }

    double t = median(total, samples), fr = median(frame, samples), f = median(flo, samples);
    figure("confirm_burst_1000_ms", median(durable, samples) / 1000, "ms");
    figure("confirm_burst_1000_frame_ms", fr / 1000, "ms");
    figure("confirm_burst_1000_floor_us", f, "us");
    figure("confirm_burst_1000_vs_fsync", median(durable, samples) / f, "x");
    figure("confirm_burst_1000_finished_ms", t / 1000, "ms");
    figure("confirm_burst_1000_finished_vs_fsync", t / f, "x");
    figure("confirm_burst_1000_syncs", (double)syncs / samples, "syncs");
    /* The same burst with syncs skipped: the work alone (SDK and store), as
     * wall time and as CPU time of all threads (steadier on a busy machine). */
    figure("confirm_burst_1000_nosync_ms", median(nosync, samples) / 1000, "ms");
    figure("confirm_burst_1000_cpu_ms", median(cpu, samples) / 1000, "ms");
    /* One iap_confirm on the game's thread, in CPU time. */
    figure("confirm_call_cpu_ns", median(call_cpu, samples), "ns");
    figure_int("confirm_burst_1000_samples", samples, "samples");
}
