/* commit_*: from iap_buy to its "7" polled (the result is durable before the
 * game can see it, C2), against the same record kept by the baselines:
 * - the floor: one append of the same number of bytes + fdatasync;
 * - SQLite (WAL, synchronous=FULL): one INSERT of the same record;
 * - one file per record, temporary + fsync + rename + directory fsync;
 * - the handoff floor: the floor's append + fdatasync made by a second thread
 *   woken through a condition variable (what keeping the disk off the
 *   game's thread, C10, costs at the least: the wake-up).
 * Each round measures all four, in a rotating order, on the same disk; the
 * confirm of each purchase (and its flush) happens outside the timed part.
 * commit_slow_*: the SDK and the floor again with 20 ms added to every sync
 * (what F_FULLFSYNC can cost on a phone), where the handoff's wake-up is
 * small beside the sync. commit_slow_sleeping_poll_*: the same SDK commit
 * with a game thread that sleeps 100 us between empty polls instead of
 * spinning, so the woken SDK thread does not wait for the spinner's core. */
#define _GNU_SOURCE
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

double g_floor_us;

static long file_size(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

static int64_t key_of(const char *json) {
    const char *k = strstr(json, "\"key\":\"");
    return k ? strtoll(k + 7, NULL, 10) : 0;
}

void bench_commit(void) {
    char dir[4096], outbox[4200], floor_path[4200], sqlite_path[4200], files_dir[4200];
    snprintf(dir, sizeof dir, "%s/commit", OPT.dir);
    iap_bridge *b = bridge_open(dir);
    bridge_drain(b);
    snprintf(outbox, sizeof outbox, "%s/data/outbox.log", dir);
    snprintf(floor_path, sizeof floor_path, "%s/floor.log", dir);
    snprintf(sqlite_path, sizeof sqlite_path, "%s/baseline.sqlite", dir);
    snprintf(files_dir, sizeof files_dir, "%s/files", dir);
    make_dir(files_dir);

    /* Warm up, and learn what one purchase writes to the outbox. */
    char *message = NULL;
    long record_bytes = 0;
    for (int i = 0; i < 20; i++) {
        long before = file_size(outbox);
        int64_t key = bridge_buy(b);
        char *m = bridge_wait7(b, 5e6);
        if (!m || key_of(m) != key) die("no \"7\" for key %lld", (long long)key);
        record_bytes = file_size(outbox) - before;
        free(message);
        message = strdup(m);
        SDK.free(m);
        if (SDK.confirm(b, key) != IAP_OK || SDK.flush(b) != IAP_OK) die("confirm failed: %s", SDK.errmsg());
    }
    size_t message_len = strlen(message);
    char *record = calloc(1, (size_t)record_bytes);
    memcpy(record, message, message_len < (size_t)record_bytes ? message_len : (size_t)record_bytes);

    int floor_fd = BL.floor_open(floor_path);
    char handoff_path[4300];
    snprintf(handoff_path, sizeof handoff_path, "%s/handoff.log", dir);
    bl_handoff *handoff = BL.handoff_open(BL.floor_open(handoff_path));
    if (!handoff) die("cannot start the handoff baseline");
    bl_sqlite *db = BL.sqlite_open(sqlite_path);
    if (floor_fd < 0 || !db) die("cannot open the baselines in %s", dir);

    enum { max_rounds = 301 };
    const int rounds = OPT.quick ? 31 : max_rounds;
    static double sdk[max_rounds], flo[max_rounds], sql[max_rounds], fil[max_rounds], hof[max_rounds];
    long syncs_in_commits = 0;
    static double cpu[max_rounds];
    for (int r = 0; r < rounds; r++) {
        for (int step = 0; step < 5; step++) {
            double t0, t1;
            switch ((step + r) % 5) {
            case 0: {
                long s0 = bench_sync_calls();
                double c0 = cpu_us();
                t0 = now_us();
                int64_t key = bridge_buy(b);
                char *m = bridge_wait7(b, 5e6);
                t1 = now_us();
                cpu[r] = cpu_us() - c0;
                syncs_in_commits += bench_sync_calls() - s0;
                if (!m || key_of(m) != key) die("no \"7\" for key %lld", (long long)key);
                SDK.free(m);
                sdk[r] = t1 - t0;
                if (SDK.confirm(b, key) != IAP_OK || SDK.flush(b) != IAP_OK) die("confirm failed: %s", SDK.errmsg());
                break;
            }
            case 1:
                t0 = now_us();
                if (BL.floor_commit(floor_fd, record, (size_t)record_bytes) != 0) die("floor write failed");
                flo[r] = now_us() - t0;
                break;
            case 2:
                t0 = now_us();
                if (BL.sqlite_insert(db, 1000000 + r, 1, "2000000000000001", message, message_len) != 0) die("sqlite insert failed");
                sql[r] = now_us() - t0;
                break;
            case 3:
                t0 = now_us();
                if (BL.atomic_file_commit(files_dir, 1000000 + r, record, (size_t)record_bytes) != 0) die("atomic file write failed");
                fil[r] = now_us() - t0;
                break;
            case 4:
                t0 = now_us();
                if (BL.handoff_commit(handoff, record, (size_t)record_bytes) != 0) die("handoff write failed");
                hof[r] = now_us() - t0;
                break;
            }
        }
    }
    /* The same commit where every sync costs 20 ms more (a phone's
     * F_FULLFSYNC, as in frame_slow_*): the SDK against the floor only. */
    enum { max_slow = 15 };
    const int slow_rounds = OPT.quick ? 3 : max_slow;
    static double sdk_slow[max_slow], flo_slow[max_slow], sdk_slow_sleeping[max_slow];
    bench_set_sync_delay_us(20000);
    for (int r = 0; r < slow_rounds; r++) {
        double t0 = now_us();
        int64_t key = bridge_buy(b);
        char *m = bridge_wait7(b, 5e6);
        sdk_slow[r] = now_us() - t0;
        if (!m || key_of(m) != key) die("no \"7\" for key %lld", (long long)key);
        SDK.free(m);
        if (SDK.confirm(b, key) != IAP_OK || SDK.flush(b) != IAP_OK) die("confirm failed: %s", SDK.errmsg());
        /* The same with a game thread that sleeps 100 us between empty
         * polls instead of spinning (a game renders between its polls). */
        t0 = now_us();
        key = bridge_buy(b);
        m = bridge_wait7_sleeping(b, 5e6, 100);
        sdk_slow_sleeping[r] = now_us() - t0;
        if (!m || key_of(m) != key) die("no \"7\" for key %lld", (long long)key);
        SDK.free(m);
        if (SDK.confirm(b, key) != IAP_OK || SDK.flush(b) != IAP_OK) die("confirm failed: %s", SDK.errmsg());
        t0 = now_us();
        if (BL.floor_commit(floor_fd, record, (size_t)record_bytes) != 0) die("floor write failed");
        flo_slow[r] = now_us() - t0;
    }
    bench_set_sync_delay_us(0);
    bridge_close(b);
    BL.sqlite_close(db);
    BL.handoff_close(handoff);

    double s = median(sdk, rounds), f = median(flo, rounds), q = median(sql, rounds), a = median(fil, rounds);
    double h = median(hof, rounds);
    g_floor_us = f;
    figure("commit_us", s, "us");
    figure("commit_floor_us", f, "us");
    figure("commit_sqlite_us", q, "us");
    figure("commit_atomic_file_us", a, "us");
    figure("commit_handoff_floor_us", h, "us");
    figure("commit_vs_fsync", s / f, "x");
    figure("commit_vs_sqlite", s / q, "x");
    figure("commit_vs_atomic_file", s / a, "x");
    figure("commit_vs_handoff_floor", s / h, "x");
    figure("commit_cpu_us", median(cpu, rounds), "us");
    figure("commit_syncs_per_commit", (double)syncs_in_commits / rounds, "syncs");
    double ss = median(sdk_slow, slow_rounds), fs = median(flo_slow, slow_rounds);
    figure("commit_slow_us", ss, "us");
    figure("commit_slow_floor_us", fs, "us");
    figure("commit_slow_vs_fsync", ss / fs, "x");
    double sp = median(sdk_slow_sleeping, slow_rounds);
    figure("commit_slow_sleeping_poll_us", sp, "us");
    figure("commit_slow_sleeping_poll_vs_fsync", sp / fs, "x");
    figure_int("commit_slow_samples", slow_rounds, "samples");
    figure_int("commit_record_bytes", record_bytes, "bytes");
    figure_int("commit_samples", rounds, "samples");
    free(record);
    free(message);
}
