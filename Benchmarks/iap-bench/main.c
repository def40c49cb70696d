/*
 * iap-bench: the IAPBridge benchmark. Prints one figure per line,
 * `name value unit`, each ratio against its baseline measured in the same
 * run; lines starting with "#" are notes (the machine, the goals).
 *
 *   scripts/bench.sh            the full run (builds everything first)
 *   scripts/bench.sh --quick    fewer samples, for CI: catches breakage only
 *
 *   iap-bench --lib libIAPBridge.so --baselines libiapbaselines.so
 *             --catalog Game.storekit --dir EMPTYDIR [--quick] [--only SECTIONS]
 *
 * The SDK is loaded with dlopen, as an engine loads a native plugin. The
 * method behind each figure is at the top of its file; BENCHMARKS.md has it
 * all with the latest figures.
 */
#define _GNU_SOURCE
#include "bench.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <unistd.h>

bench_options OPT;

static const char *absolute(const char *path) {
    char *r = realpath(path, NULL);
    if (!r) die("no such file or directory: %s", path);
    return r;
}

/* --only a,b: run only these sections (for profiling one of them). */
static int selected(const char *section) {
    if (!OPT.only) return 1;
    size_t n = strlen(section);
    for (const char *p = OPT.only; (p = strstr(p, section)) != NULL; p += n)
        if ((p == OPT.only || p[-1] == ',') && (p[n] == 0 || p[n] == ',')) return 1;
    return 0;
}

static void usage(void) {
    die("usage: iap-bench --lib libIAPBridge.so --baselines libiapbaselines.so --catalog FILE.storekit --dir EMPTYDIR [--quick] [--only library,poll,commit,burst,open,rss,frame,scan,sustain,flood]");
}

/* The load average: the machine is shared, so every run says how busy it was. */
static void note_load(const char *when) {
    char line[128] = "unknown";
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (!fgets(line, sizeof line, f)) snprintf(line, sizeof line, "unknown");
        fclose(f);
    }
    line[strcspn(line, "\n")] = 0;
    note("load average %s: %s (1, 5, 15 min; running/total; last pid)", when, line);
}

static void describe_machine(void) {
    struct utsname u;
    uname(&u);
    char cpu[256] = "unknown";
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        char line[512];
        while (fgets(line, sizeof line, f)) {
            if (strncmp(line, "model name", 10) == 0) {
                const char *v = strchr(line, ':');
                if (v) snprintf(cpu, sizeof cpu, "%s", v + 2);
                cpu[strcspn(cpu, "\n")] = 0;
                break;
            }
        }
        fclose(f);
    }
    note("machine: %s, %ld cores online, %s %s", cpu, sysconf(_SC_NPROCESSORS_ONLN), u.sysname, u.release);
    struct stat run, here;
    struct statfs fs;
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd)) snprintf(cwd, sizeof cwd, ".");
    if (stat(OPT.dir, &run) != 0 || stat(cwd, &here) != 0 || statfs(OPT.dir, &fs) != 0) die("cannot stat %s", OPT.dir);
    const char *type = fs.f_type == 0xEF53 ? "ext2/3/4" : fs.f_type == 0x01021994 ? "tmpfs" : fs.f_type == 0x58465342 ? "xfs"
                     : fs.f_type == 0x9123683E ? "btrfs" : fs.f_type == 0x794c7630 ? "overlayfs" : "other";
    note("disk: runs in %s (device %u:%u, %s, f_type 0x%lx); the working directory %s is on device %u:%u: %s",
         OPT.dir, major(run.st_dev), minor(run.st_dev), type, (unsigned long)fs.f_type, cwd,
         major(here.st_dev), minor(here.st_dev), run.st_dev == here.st_dev ? "same device" : "DIFFERENT device");
    note("mode: %s", OPT.quick ? "quick (few samples; for catching breakage, not for figures)" : "full");
    note_load("at start");
}

/* The goals of issues 8 and 21 (issue 21 tightened the poll, commit, open
 * and frame goals). A quick run prints them but does not judge them. */
static void check_goals(void) {
    static const struct { const char *name; const char *op; double limit; const char *goal; } goals[] = {
        {"poll_empty_vs_call", "<=", 1.5, "empty poll at most 1.5x an empty call into another shared library"},
        {"poll_empty_allocs", "==", 0, "empty poll allocates nothing"},
        {"commit_vs_fsync", "<=", 1.3, "commit at most 1.3x one write + fdatasync"},
        {"commit_vs_handoff_floor", "<=", 1.10, "commit at most 1.1x the same append + fdatasync made by a woken second thread (the least C10 costs)"},
        {"commit_slow_vs_fsync", "<=", 1.05, "with 20 ms syncs (a phone's F_FULLFSYNC): commit at most 1.05x one write + fdatasync on the caller's thread"},
        {"commit_vs_sqlite", "<=", 1.0, "commit no slower than SQLite (WAL, synchronous=FULL)"},
        {"confirm_burst_1000_vs_fsync", "<=", 10, "1,000 confirms in one frame, durable (group commit), at most 10x one fsync"},
        {"open_pending_ms_1000", "<=", 5, "1,000 pending results re-emitted within 5 ms of open"},
        {"open_pending_ms_100000", "<=", 500, "100,000 pending results re-emitted within 0.5 s of open"},
        {"open_pending_per_record_100000_vs_1000", "<=", 2, "open is linear: per-record cost at 100,000 at most 2x that at 1,000"},
        {"sdk_heap_retained_kb", "<=", 1024, "flat: the SDK holds on to at most 1 MB after 100,000 confirmed cycles"},
        {"links_icu", "==", 0, "the library does not load ICU"},
        {"links_foundation", "==", 0, "the library does not load Foundation"},
        {"scan_garbage_8mb_vs_1mb_rate", ">=", 0.5, "iap_open scans garbage linearly: the MB/s at 8 MB at least half that at 1 MB"},
        {"frame_buy_click_p99_us", "<=", 20, "iap_buy (click key) on the game's thread: p99 at most 20 us"},
        {"frame_buy_click_max_us", "<=", 1000, "iap_buy (click key): max at most 1 ms"},
        {"frame_buy_sdk_p99_us", "<=", 20, "iap_buy (SDK key): p99 at most 20 us"},
        {"frame_buy_sdk_max_us", "<=", 1000, "iap_buy (SDK key): max at most 1 ms"},
        {"frame_confirm_p99_us", "<=", 20, "iap_confirm: p99 at most 20 us"},
        {"frame_confirm_max_us", "<=", 1000, "iap_confirm: max at most 1 ms"},
        {"frame_request_products_p99_us", "<=", 20, "iap_request_products: p99 at most 20 us"},
        {"frame_request_products_max_us", "<=", 1000, "iap_request_products: max at most 1 ms"},
        {"frame_restore_p99_us", "<=", 20, "iap_restore: p99 at most 20 us"},
        {"frame_restore_max_us", "<=", 1000, "iap_restore: max at most 1 ms"},
        {"frame_poll_p99_us", "<=", 20, "iap_poll: p99 at most 20 us"},
        {"frame_poll_max_us", "<=", 1000, "iap_poll: max at most 1 ms"},
        {"frame_slow_buy_click_p99_us", "<=", 20, "iap_buy (click key) with 20 ms syncs: p99 at most 20 us"},
        {"frame_slow_buy_click_max_us", "<=", 1000, "iap_buy (click key) with 20 ms syncs: max at most 1 ms"},
        {"frame_slow_buy_sdk_p99_us", "<=", 20, "iap_buy (SDK key) with 20 ms syncs: p99 at most 20 us"},
        {"frame_slow_buy_sdk_max_us", "<=", 1000, "iap_buy (SDK key) with 20 ms syncs: max at most 1 ms"},
        {"frame_slow_confirm_p99_us", "<=", 20, "iap_confirm with 20 ms syncs: p99 at most 20 us"},
        {"frame_slow_confirm_max_us", "<=", 1000, "iap_confirm with 20 ms syncs: max at most 1 ms"},
        {"frame_slow_request_products_p99_us", "<=", 20, "iap_request_products with 20 ms syncs: p99 at most 20 us"},
        {"frame_slow_request_products_max_us", "<=", 1000, "iap_request_products with 20 ms syncs: max at most 1 ms"},
        {"frame_slow_restore_p99_us", "<=", 20, "iap_restore with 20 ms syncs: p99 at most 20 us"},
        {"frame_slow_restore_max_us", "<=", 1000, "iap_restore with 20 ms syncs: max at most 1 ms"},
        {"frame_slow_poll_p99_us", "<=", 20, "iap_poll with 20 ms syncs: p99 at most 20 us"},
        {"frame_slow_poll_max_us", "<=", 1000, "iap_poll with 20 ms syncs: max at most 1 ms"},
        {"sustain_sdk_cpu_10000_vs_10", "<=", 1.25, "sustained buys: the SDK threads' CPU per purchase at 10,000 purchases within 1.25x of that at 10 (flat)"},
        {"flood_slow_peak_rss_growth_1x_to_16x_kb", "<=", 1024, "8 threads flooding one bridge on a slow store: the peak RSS grows by at most 1 MB from 1x to 16x the calls (bounded)"},
    };
    int met = 0, total = 0;
    for (size_t i = 0; i < sizeof goals / sizeof goals[0]; i++) {
        double v;
        const char *verdict;
        if (!figure_value(goals[i].name, &v)) verdict = "NOT MEASURED";
        else if (strcmp(goals[i].op, "<=") == 0) verdict = v <= goals[i].limit ? "met" : "MISSED";
        else if (strcmp(goals[i].op, ">=") == 0) verdict = v >= goals[i].limit ? "met" : "MISSED";
        else verdict = v == goals[i].limit ? "met" : "MISSED";
        total++;
        met += strcmp(verdict, "met") == 0;
        note("goal %s %s %g (%s): %s%s", goals[i].name, goals[i].op, goals[i].limit, goals[i].goal, verdict,
             OPT.quick ? " [quick run: not a measurement]" : "");
    }
    note("goals met: %d of %d", met, total);
}

int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) OPT.quick = 1;
        else if (i + 1 < argc && strcmp(argv[i], "--only") == 0) OPT.only = argv[++i];
        else if (i + 1 >= argc) usage();
        else if (strcmp(argv[i], "--lib") == 0) OPT.lib = absolute(argv[++i]);
        else if (strcmp(argv[i], "--baselines") == 0) OPT.baselines = absolute(argv[++i]);
        else if (strcmp(argv[i], "--catalog") == 0) OPT.catalog = absolute(argv[++i]);
        else if (strcmp(argv[i], "--dir") == 0) OPT.dir = absolute(argv[++i]);
        else usage();
    }
    if (!OPT.lib || !OPT.baselines || !OPT.catalog || !OPT.dir) usage();
    setvbuf(stdout, NULL, _IOLBF, 0);
    load_sdk(OPT.lib);
    load_baselines(OPT.baselines);
    describe_machine();

    /* First: its peak RSS is read in a process that has not yet grown. */
    if (selected("flood")) bench_flood();
    if (selected("library")) bench_library();
    if (selected("poll")) bench_poll();
    if (selected("commit")) bench_commit();
    if (selected("burst")) bench_burst();
    if (selected("open")) bench_open_pending();
    if (selected("rss")) bench_rss();
    if (selected("frame")) bench_frame();
    if (selected("scan")) bench_scan();
    if (selected("sustain")) bench_sustain();
    note_load("at end");
    check_goals();
    return 0;
}
