/*
 * iap-exhaustion: the system runs out of threads or file descriptors (C8,
 * docs/CONTRACT.md). Every thread a bridge needs is created by iap_open, so:
 *  - iap_open with no thread to be had answers IAP_E_RESOURCE, leaves nothing
 *    behind (the same dataDir opens right after), never crashes or hangs;
 *  - on an open bridge every entry point works with threads refused;
 *  - with a quota of 30 threads, bridges open until the quota is used up,
 *    the next one answers IAP_E_RESOURCE, the open ones keep working;
 *  - with every descriptor taken, every entry point of an open bridge
 *    answers (a code, never a crash or hang) and iap_open answers an error.
 * pthread_create is interposed by this program (its definition wins over
 * libc's for the whole process), so the failures are real failures of the
 * call the SDK makes.
 *
 *   iap-exhaustion --catalog FILE --dir DIR
 * Exit 0 and "exhaustion: N passed, 0 failed" when every check passed.
 */
#define _GNU_SOURCE
#include "iap_bridge.h"
#include "iap_json_field.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static atomic_int g_refuse_threads;      /* 1: every pthread_create fails */
static atomic_int g_thread_quota = -1;   /* >= 0: creations left */
static atomic_int g_threads_made;

int pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*f)(void *), void *arg) {
    static int (*real)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
    if (!real) real = (int (*)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *))dlsym(RTLD_NEXT, "pthread_create");
    if (atomic_load(&g_refuse_threads)) return EAGAIN;
    int q = atomic_load(&g_thread_quota);
    if (q >= 0) {
        if (q == 0) return EAGAIN;
        atomic_fetch_sub(&g_thread_quota, 1);
    }
    atomic_fetch_add(&g_threads_made, 1);
    return real(t, a, f, arg);
}

static int passed, failed;
static char g_catalog[PATH_MAX], g_dir[PATH_MAX];

#define CHECK(cond, ...) do { if (cond) passed++; else { failed++; fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
    fprintf(stderr, __VA_ARGS__); fprintf(stderr, " (errmsg: %s)\n", iap_errmsg()); } } while (0)

static void config(char *out, size_t n, const char *name) {
    snprintf(out, n, "{\"store\":\"simulator\",\"dataDir\":\"%s/%s\",\"catalog\":\"%s\","
             "\"simulator\":{\"stateDir\":\"%s/%s.store\",\"durable\":false,\"tickMs\":0}}",
             g_dir, name, g_catalog, g_dir, name);
}

static void sleep_ms(int ms) { struct timespec ts = {0, ms * 1000000L}; nanosleep(&ts, NULL); }

/* Polls until the "7" for `want` arrives (a few seconds at most); returns
 * its key or 0. Results of earlier sessions on the way are confirmed. */
static int64_t wait7(iap_bridge *b, int64_t want) {
    for (int i = 0; i < 3000; i++) {
        char *m;
        while ((m = iap_poll(b)) != NULL) {
            char type[16] = "", key[32] = "";
            iap_json_field(m, "type", type, sizeof type);
            iap_json_field(m, "key", key, sizeof key);
            iap_free(m);
            if (strcmp(type, "7") != 0) continue;
            int64_t k = strtoll(key, NULL, 10);
            if (k == want) return k;
            iap_confirm(b, k);
        }
        sleep_ms(1);
    }
    return 0;
}

static atomic_int g_callbacks;
static void on_message(void *ctx, const char *json) { (void)ctx; (void)json; atomic_fetch_add(&g_callbacks, 1); }

/* Every entry point of an open bridge, with whatever is exhausted now. */
static void every_entry_point(iap_bridge *b, const char *what, int expect_ok) {
    int64_t key = 0;
    int32_t rc = iap_buy(b, "coins_100", 0, &key);
    CHECK(rc == IAP_OK && key > 0, "%s: iap_buy returned %s", what, iap_error_name(rc));
    int64_t got = wait7(b, key);
    CHECK(got == key, "%s: the \"7\" for key %lld (got %lld)", what, (long long)key, (long long)got);
    rc = iap_confirm(b, got);
    CHECK(rc == IAP_OK, "%s: iap_confirm returned %s", what, iap_error_name(rc));
    rc = iap_request_products(b, "[\"coins_100\"]");
    CHECK(rc == IAP_OK, "%s: iap_request_products returned %s", what, iap_error_name(rc));
    rc = iap_restore(b);
    CHECK(rc == IAP_OK, "%s: iap_restore returned %s", what, iap_error_name(rc));
    char *out = NULL;
    rc = iap_simulator(b, "{\"op\":\"transactions\"}", &out);
    CHECK(rc == IAP_OK || (!expect_ok && rc < 0), "%s: iap_simulator returned %s", what, iap_error_name(rc));
    iap_free(out);
    atomic_store(&g_callbacks, 0);
    rc = iap_set_callback(b, on_message, NULL);
    CHECK(rc == IAP_OK, "%s: iap_set_callback returned %s", what, iap_error_name(rc));
    rc = iap_buy(b, "coins_100", 0, &key);
    CHECK(rc == IAP_OK, "%s: iap_buy (callback mode) returned %s", what, iap_error_name(rc));
    for (int i = 0; i < 3000 && atomic_load(&g_callbacks) == 0; i++) sleep_ms(1);
    CHECK(atomic_load(&g_callbacks) > 0, "%s: the callback thread (made at open) delivers", what);
    rc = iap_set_callback(b, NULL, NULL);
    CHECK(rc == IAP_OK, "%s: iap_set_callback(NULL) returned %s", what, iap_error_name(rc));
    rc = iap_flush(b);
    CHECK(rc == IAP_OK || (!expect_ok && rc < 0), "%s: iap_flush returned %s", what, iap_error_name(rc));
}

static void threads_refused_at_open(void) {
    char cfg[8192];
    config(cfg, sizeof cfg, "t-open");
    iap_bridge *b = (iap_bridge *)0x1;
    atomic_store(&g_refuse_threads, 1);
    int32_t rc = iap_open(cfg, &b);
    atomic_store(&g_refuse_threads, 0);
    CHECK(rc == IAP_E_RESOURCE, "iap_open with no thread returned %s", iap_error_name(rc));
    CHECK(b == NULL, "*out is NULL after a failed open");
    CHECK(strstr(iap_errmsg(), "thread") != NULL, "the message says what ran out");
    rc = iap_open(cfg, &b);
    CHECK(rc == IAP_OK, "the same dataDir opens once threads are back (nothing left locked): %s", iap_error_name(rc));
    if (rc == IAP_OK) CHECK(iap_close(b) == IAP_OK, "iap_close");
}

static void threads_refused_after_open(void) {
    char cfg[8192];
    config(cfg, sizeof cfg, "t-after");
    iap_bridge *b = NULL;
    int32_t rc = iap_open(cfg, &b);
    CHECK(rc == IAP_OK, "iap_open: %s", iap_error_name(rc));
    if (rc != IAP_OK) return;
    int made = atomic_load(&g_threads_made);
    atomic_store(&g_refuse_threads, 1);
    every_entry_point(b, "threads refused", 1);
    rc = iap_close(b);
    atomic_store(&g_refuse_threads, 0);
    CHECK(rc == IAP_OK, "iap_close with threads refused: %s", iap_error_name(rc));
    CHECK(atomic_load(&g_threads_made) == made, "no thread was asked for after iap_open (%d more)", atomic_load(&g_threads_made) - made);
}

static void thread_quota(void) {
    enum { max = 64 };
    iap_bridge *open_[max];
    int n = 0;
    atomic_store(&g_thread_quota, 30);
    int32_t rc = IAP_OK;
    while (n < max) {
        char cfg[8192], name[32];
        snprintf(name, sizeof name, "q%d", n);
        config(cfg, sizeof cfg, name);
        rc = iap_open(cfg, &open_[n]);
        if (rc != IAP_OK) break;
        n++;
    }
    CHECK(rc == IAP_E_RESOURCE, "at a 30-thread quota the bridge after %d answers IAP_E_RESOURCE (got %s)", n, iap_error_name(rc));
    CHECK(n == 15, "2 threads a bridge: 15 bridges fit in 30 threads (%d opened)", n);
    /* The open ones still work, callbacks included. */
    for (int i = 0; i < n; i += 7) every_entry_point(open_[i], "a bridge at the quota", 1);
    for (int i = 0; i < n; i++) CHECK(iap_close(open_[i]) == IAP_OK, "iap_close %d", i);
    atomic_store(&g_thread_quota, -1);
}

static void descriptors(void) {
    char cfg[8192];
    config(cfg, sizeof cfg, "fd");
    iap_bridge *b = NULL;
    int32_t rc = iap_open(cfg, &b);
    CHECK(rc == IAP_OK, "iap_open: %s", iap_error_name(rc));
    if (rc != IAP_OK) return;
    /* Take every descriptor left. */
    struct rlimit old;
    getrlimit(RLIMIT_NOFILE, &old);
    struct rlimit low = old;
    low.rlim_cur = 256 < old.rlim_cur ? 256 : old.rlim_cur;
    setrlimit(RLIMIT_NOFILE, &low);
    int fds[1024], nfd = 0;
    for (int fd; nfd < 1024 && (fd = open("/dev/null", O_RDONLY)) >= 0;) fds[nfd++] = fd;
    CHECK(open("/dev/null", O_RDONLY) < 0 && errno == EMFILE, "every descriptor is taken (%d)", nfd);
    every_entry_point(b, "no descriptor left", 0);
    char cfg2[8192];
    config(cfg2, sizeof cfg2, "fd2");
    iap_bridge *b2 = (iap_bridge *)0x1;
    rc = iap_open(cfg2, &b2);
    CHECK(rc == IAP_E_IO || rc == IAP_E_RESOURCE || rc == IAP_E_CATALOG, "iap_open with no descriptor answers a code (%s)", iap_error_name(rc));
    CHECK(b2 == NULL, "*out is NULL after a failed open");
    rc = iap_close(b);
    CHECK(rc == IAP_OK, "iap_close with no descriptor left: %s", iap_error_name(rc));
    for (int i = 0; i < nfd; i++) close(fds[i]);
    setrlimit(RLIMIT_NOFILE, &old);
    /* And everything comes back: the results are there, nothing was lost. */
    rc = iap_open(cfg, &b);
    CHECK(rc == IAP_OK, "iap_open once descriptors are back: %s", iap_error_name(rc));
    if (rc == IAP_OK) {
        every_entry_point(b, "descriptors back", 1);
        CHECK(iap_close(b) == IAP_OK, "iap_close");
    }
}

int main(int argc, char **argv) {
    for (int i = 1; i + 1 < argc; i++) {
        if (strcmp(argv[i], "--catalog") == 0) snprintf(g_catalog, sizeof g_catalog, "%s", argv[++i]);
        else if (strcmp(argv[i], "--dir") == 0) snprintf(g_dir, sizeof g_dir, "%s", argv[++i]);
    }
    if (!g_catalog[0] || !g_dir[0]) { fprintf(stderr, "usage: iap-exhaustion --catalog FILE --dir DIR\n"); return 2; }
    mkdir(g_dir, 0700);
    threads_refused_at_open();
    threads_refused_after_open();
    thread_quota();
    descriptors();
    printf("exhaustion: %d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
