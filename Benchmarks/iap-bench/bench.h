/* iap-bench: shared declarations. See BENCHMARKS.md for the method. */
#ifndef IAP_BENCH_H
#define IAP_BENCH_H
#include "iap_bridge.h"
#include "../baselines/baselines.h"

#include <stddef.h>
#include <stdint.h>

/* ---- The SDK and the baselines, both loaded with dlopen (sdk.c). ---- */
typedef struct {
    int32_t (*open)(const char *, iap_bridge **);
    int32_t (*close)(iap_bridge *);
    int32_t (*buy)(iap_bridge *, const char *, int64_t, int64_t *);
    int32_t (*confirm)(iap_bridge *, int64_t);
    char *(*poll)(iap_bridge *);
    void (*free)(void *);
    int32_t (*flush)(iap_bridge *);
    int32_t (*request_products)(iap_bridge *, const char *);
    int32_t (*restore)(iap_bridge *);
    const char *(*errmsg)(void);
} sdk_api;

typedef struct {
    int (*floor_open)(const char *);
    int (*floor_commit)(int, const void *, size_t);
    bl_sqlite *(*sqlite_open)(const char *);
    int (*sqlite_insert)(bl_sqlite *, int64_t, int, const char *, const void *, size_t);
    void (*sqlite_close)(bl_sqlite *);
    int (*atomic_file_commit)(const char *, int64_t, const void *, size_t);
    bl_handoff *(*handoff_open)(int);
    int (*handoff_commit)(bl_handoff *, const void *, size_t);
    void (*handoff_close)(bl_handoff *);
    bl_wake *(*wake_open)(long);
    void (*wake_post)(bl_wake *);
    void (*wake_close)(bl_wake *);
    void (*empty_call)(void); /* bl_empty_call: an empty exported C function of a dlopen'ed library */
} baseline_api;

extern sdk_api SDK;
extern baseline_api BL;
void load_sdk(const char *path);
void load_baselines(const char *path);

/* ---- Run settings (main.c). ---- */
typedef struct {
    const char *lib, *baselines, *catalog, *dir;
    const char *only; /* comma-separated sections, or NULL for all */
    int quick;
} bench_options;
extern bench_options OPT;

/* ---- Interposed libc calls (interpose.c). ---- */
/* malloc/calloc/realloc/posix_memalign/aligned_alloc calls made by this thread. */
long bench_thread_allocs(void);
/* fsync + fdatasync calls made by the whole process. */
long bench_sync_calls(void);
/* When the latest fdatasync returned (now_us clock), 0 before any. */
double bench_last_data_sync_end_us(void);
/* Every fsync/fdatasync from now on first sleeps this long: a slow disk
 * (F_FULLFSYNC on a phone can take 20 ms). 0 turns it off. */
void bench_set_sync_delay_us(long us);
/* While set, fsync/fdatasync return at once (setup only: never while a
 * durability figure is measured). */
void bench_set_nosync(int on);

/* ---- Measuring and printing (measure.c). ---- */
double now_us(void);
double cpu_us(void); /* CPU time of the whole process, user + system */
double thread_cpu_us(void); /* CPU time of the calling thread */
double median(double *v, int n);
long rss_kb(void);
long heap_kb(void);               /* bytes in use by malloc, all arenas (mallinfo2) */
void figure(const char *name, double value, const char *unit);
void figure_int(const char *name, long value, const char *unit);
int figure_value(const char *name, double *out); /* 1 when printed */
void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void make_dir(const char *path);
void sync_dir_fs(const char *path); /* syncfs: makes set-up writes durable before a measurement */

/* ---- A bridge on the simulator (bridge.c). ---- */
/* Opens a bridge on the simulated store in <dir>/data, the store's state in
 * <dir>/state, without the store's own syncs, no simulated delay. */
iap_bridge *bridge_open(const char *dir);
/* The same with the game's data in <dir>/<data> (another install, same store). */
iap_bridge *bridge_open_data(const char *dir, const char *data);
/* The same with the store's state in <dir>/<state> too. */
iap_bridge *bridge_open_dirs(const char *dir, const char *data, const char *state);
void bridge_close(iap_bridge *b);
/* Buys coins_100 with an SDK-chosen key; returns the key. */
int64_t bridge_buy(iap_bridge *b);
/* Polls until a "7" message arrives (or gives up after `limit_us`);
 * returns it (free with SDK.free) or NULL. */
char *bridge_wait7(iap_bridge *b, double limit_us);
/* The same, sleeping `sleep_us` between empty polls (a game that renders
 * between its polls) instead of spinning. */
char *bridge_wait7_sleeping(iap_bridge *b, double limit_us, long sleep_us);
/* Polls every queued message away; returns how many "7"s it saw. */
long bridge_drain(iap_bridge *b);
int is_type7(const char *json);

/* ---- The sections, in the order they run. ---- */
void bench_flood(void); /* first: its peak RSS is read before the process grows */
void bench_library(void);
void bench_poll(void);
void bench_commit(void);
void bench_burst(void);
void bench_open_pending(void);
void bench_rss(void);
void bench_frame(void);
void bench_scan(void);
void bench_sustain(void);

/* Shared between sections: the floor's median from the commit section. */
extern double g_floor_us;

#endif
