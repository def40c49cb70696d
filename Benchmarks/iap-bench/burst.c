/* confirm_burst_1000_*: a game confirms 1,000 delivered results in one frame,
 * then iap_flush waits until every confirm is durable and its transaction
 * finished; against one write + fdatasync (the floor) measured alongside.
 * Set-up purchases are made with syncs skipped, then the whole file system
 * is synced, so the burst starts from clean, durable state. */
#define _GNU_SOURCE
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { burst = 1000 };

void bench_burst(void) {
    char dir[4096], floor_path[4200];
    snprintf(dir, sizeof dir, "%s/burst", OPT.dir);
    snprintf(floor_path, sizeof floor_path, "%s/floor.log", dir);
    iap_bridge *b = bridge_open(dir);
    bridge_drain(b);
    int floor_fd = BL.floor_open(floor_path);
    if (floor_fd < 0) die("cannot open %s", floor_path);
    char record[512];
    memset(record, 'x', sizeof record);

    enum { max_samples = 21 };
    const int samples = OPT.quick ? 3 : max_samples;
    double total[max_samples], frame[max_samples], flo[max_samples];
    long syncs = 0;
    static int64_t keys[burst];
    for (int s = 0; s < samples; s++) {
        bench_set_nosync(1);
        for (int i = 0; i < burst; i++) keys[i] = bridge_buy(b);
        long seen = bridge_drain(b);
        bench_set_nosync(0);
        if (seen != burst) die("expected %d results, polled %ld", burst, seen);
        sync_dir_fs(dir);

        double t0 = now_us();
        if (BL.floor_commit(floor_fd, record, sizeof record) != 0) die("floor write failed");
        flo[s] = now_us() - t0;

        long s0 = bench_sync_calls();
        t0 = now_us();
        for (int i = 0; i < burst; i++) {
            if (SDK.confirm(b, keys[i]) != IAP_OK) die("iap_confirm failed: %s", SDK.errmsg());
        }
        double t1 = now_us();
        if (SDK.flush(b) != IAP_OK) die("iap_flush failed: %s", SDK.errmsg());
        double t2 = now_us();
        syncs += bench_sync_calls() - s0;
        frame[s] = t1 - t0;
        total[s] = t2 - t0;
    }
    bridge_close(b);

    double t = median(total, samples), fr = median(frame, samples), f = median(flo, samples);
    figure("confirm_burst_1000_ms", t / 1000, "ms");
    figure("confirm_burst_1000_frame_ms", fr / 1000, "ms");
    figure("confirm_burst_1000_floor_us", f, "us");
    figure("confirm_burst_1000_vs_fsync", t / f, "x");
    figure("confirm_burst_1000_syncs", (double)syncs / samples, "syncs");
    figure_int("confirm_burst_1000_samples", samples, "samples");
}
