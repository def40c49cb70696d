/* flood_*: issue 21's defect 1, measured. 8 threads flood one bridge (the
 * default "purchasesInFlight", 32): each calls iap_buy in a loop, polls
 * after every call and confirms every "7" it gets; most buys answer
 * IAP_E_BUSY at once. Syncs are real. The peak resident memory (VmHWM of
 * /proc/self/status, reset through /proc/self/clear_refs when the flood
 * starts, so earlier sections do not count) and the heap in use (mallinfo2)
 * are read when the threads together have made 1x, 4x and 16x a base number
 * of calls (buy + poll + confirm), with the purchases accepted by then.
 * Bounded means the peak does not grow with the calls: what grows is the
 * simulated App Store's ledger (every transaction it charged, as the real
 * one keeps them), per purchase accepted, not per call. flood_slow_* is
 * the same flood on a store that takes 1 s to answer each purchase (the
 * defect's case: buys pile up while the store is slow), so few purchases
 * complete and the calls alone are measured. After the flood,
 * The section runs first, the slow store first, so the peaks are those of a
 * process that has not grown yet. flood_sdk_heap_retained_kb separates the two as rss.c does: the heap in
 * use at the end minus the heap with a fresh bridge (another install) on the
 * same store state. */
#define _GNU_SOURCE
#include "bench.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct {
    iap_bridge *b;
    atomic_long calls, accepted, busy, delivered, other;
    atomic_int stop;
} F;

static long peak_rss_kb(void) {
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return -1;
    char line[256];
    long kb = -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "VmHWM:", 6) == 0) kb = strtol(line + 6, NULL, 10);
    fclose(f);
    return kb;
}

/* Linux 4.0+: writing 5 to clear_refs resets VmHWM to the current RSS. */
static int reset_peak_rss(void) {
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (!f) return 0;
    int ok = fputs("5", f) >= 0;
    return fclose(f) == 0 && ok;
}

static void named(const char *prefix, const char *suffix, double v, const char *unit) {
    char name[64];
    snprintf(name, sizeof name, "%s%s", prefix, suffix);
    figure(name, v, unit);
}

static void named_int(const char *prefix, const char *suffix, long v, const char *unit) {
    char name[64];
    snprintf(name, sizeof name, "%s%s", prefix, suffix);
    figure_int(name, v, unit);
}

static void *flooder(void *arg) {
    (void)arg;
    while (!atomic_load(&F.stop)) {
        int64_t key = 0;
        int32_t rc = SDK.buy(F.b, "coins_100", 0, &key);
        if (rc == IAP_OK) atomic_fetch_add(&F.accepted, 1);
        else if (rc == IAP_E_BUSY) atomic_fetch_add(&F.busy, 1);
        else atomic_fetch_add(&F.other, 1);
        long calls = 1;
        for (char *m; calls++, (m = SDK.poll(F.b)) != NULL;) {
            if (is_type7(m)) {
                const char *k = strstr(m, "\"key\":\"");
                if (!k) die("a \"7\" without a key: %s", m);
                if (SDK.confirm(F.b, strtoll(k + 7, NULL, 10)) != IAP_OK) die("iap_confirm failed: %s", SDK.errmsg());
                atomic_fetch_add(&F.delivered, 1);
                calls++;
            }
            SDK.free(m);
        }
        atomic_fetch_add(&F.calls, calls);
    }
    return NULL;
}

static void run(const char *prefix, int delay_ms) {
    char dir[4096], data[4200], state[4200], config[12288];
    snprintf(dir, sizeof dir, "%s/%s", OPT.dir, prefix);
    memset(&F, 0, sizeof F);
    make_dir(dir);
    snprintf(data, sizeof data, "%s/data", dir);
    snprintf(state, sizeof state, "%s/state", dir);
    /* bridge_open's config without its "purchasesInFlight": the default limit. */
    snprintf(config, sizeof config,
             "{\"store\":\"simulator\",\"dataDir\":\"%s\",\"catalog\":\"%s\",\"entitlementsAtOpen\":false,"
             "\"simulator\":{\"stateDir\":\"%s\",\"durable\":false,\"tickMs\":0,\"purchaseDelayMs\":%d}}",
             data, OPT.catalog, state, delay_ms);
    if (SDK.open(config, &F.b) != IAP_OK) die("iap_open failed: %s", SDK.errmsg());
    bridge_drain(F.b);
    if (!reset_peak_rss())
        note("%s: cannot reset the peak RSS (/proc/self/clear_refs): the peaks include the process's earlier peak", prefix);

    enum { threads = 8, points = 3 };
    const long base = OPT.quick ? 100000 : 1000000;
    const long at[points] = {base, 4 * base, 16 * base};
    long hwm[points], heap[points], accepted[points], calls[points];
    pthread_t t[threads];
    for (int i = 0; i < threads; i++)
        if (pthread_create(&t[i], NULL, flooder, NULL) != 0) die("pthread_create failed");
    double t0 = now_us();
    for (int p = 0; p < points; p++) {
        while (atomic_load(&F.calls) < at[p]) usleep(1000);
        calls[p] = atomic_load(&F.calls);
        accepted[p] = atomic_load(&F.accepted);
        hwm[p] = peak_rss_kb();
        heap[p] = heap_kb();
    }
    double seconds = (now_us() - t0) / 1e6;
    atomic_store(&F.stop, 1);
    for (int i = 0; i < threads; i++) pthread_join(t[i], NULL);
    /* Every accepted purchase is delivered once (confirmed by the flooders or here). */
    double deadline = now_us() + 30e6 + delay_ms * 1e3;
    while (atomic_load(&F.delivered) < atomic_load(&F.accepted)) {
        if (now_us() > deadline) die("flood: %ld accepted, %ld delivered", atomic_load(&F.accepted), atomic_load(&F.delivered));
        SDK.flush(F.b);
        for (char *m; (m = SDK.poll(F.b)) != NULL; SDK.free(m)) {
            if (!is_type7(m)) continue;
            const char *k = strstr(m, "\"key\":\"");
            if (!k || SDK.confirm(F.b, strtoll(k + 7, NULL, 10)) != IAP_OK) die("flood: confirm after the flood failed");
            atomic_fetch_add(&F.delivered, 1);
        }
    }
    if (atomic_load(&F.other) != 0) die("flood: %ld buys answered neither IAP_OK nor IAP_E_BUSY", atomic_load(&F.other));
    if (atomic_load(&F.delivered) != atomic_load(&F.accepted)) die("flood: more results than purchases accepted");
    SDK.flush(F.b);
    long heap_end = heap_kb();
    double c0 = now_us();
    bridge_close(F.b);
    double close_ms = (now_us() - c0) / 1000;
    /* As rss.c does: the same store state under a fresh data directory
     * (another install). The store holds what it held; the SDK starts empty. */
    iap_bridge *fresh = bridge_open_data(dir, "data-reinstalled");
    bridge_drain(fresh);
    long heap_reopened = heap_kb();
    bridge_close(fresh);

    char name[64];
    const char *label[points] = {"1x", "4x", "16x"};
    for (int p = 0; p < points; p++) {
        snprintf(name, sizeof name, "%s_calls_%s", prefix, label[p]);
        figure_int(name, calls[p], "calls");
        snprintf(name, sizeof name, "%s_purchases_%s", prefix, label[p]);
        figure_int(name, accepted[p], "purchases");
        snprintf(name, sizeof name, "%s_peak_rss_kb_%s", prefix, label[p]);
        figure_int(name, hwm[p], "kB");
        snprintf(name, sizeof name, "%s_heap_kb_%s", prefix, label[p]);
        figure_int(name, heap[p], "kB");
    }
    named_int(prefix, "_peak_rss_growth_1x_to_16x_kb", hwm[2] - hwm[0], "kB");
    named(prefix, "_peak_rss_16x_vs_1x", (double)hwm[2] / (double)hwm[0], "x");
    /* The peak's growth per purchase accepted between 1x and 16x (the
     * simulated store's ledger grows by about this much per purchase). */
    long bought = accepted[2] - accepted[0];
    named(prefix, "_peak_rss_growth_per_purchase_bytes", bought > 0 ? (double)(hwm[2] - hwm[0]) * 1024 / (double)bought : 0, "bytes");
    named_int(prefix, "_sdk_heap_retained_kb", heap_end - heap_reopened, "kB");
    named(prefix, "_calls_per_s", (double)calls[2] / seconds, "calls/s");
    named_int(prefix, "_busy", atomic_load(&F.busy), "calls");
    named(prefix, "_close_ms", close_ms, "ms");
}

void bench_flood(void) {
    run("flood_slow", 1000);
    run("flood", 0);
}
