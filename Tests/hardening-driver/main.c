/*
 * iap-hardening-driver: drives the C ABI the way the hardening scripts need
 * (docs/HARDENING.md). Built by the package; run plain by HardeningTests and
 * under AddressSanitizer, ThreadSanitizer and valgrind by scripts/.
 *
 *   stress   --catalog F --dir D [--threads 8] [--ops N] [--limit SECONDS]
 *       N operations on each of 8 threads calling every entry point at once:
 *       buy, poll, confirm, request, restore, simulator ops, set_callback,
 *       flush, and close + reopen racing with all of them; callbacks call
 *       back into the SDK (confirm, buy). Then checks every bought key was
 *       delivered and confirmed exactly once, no message was delivered twice
 *       in one session, and none came back after its confirm. A watchdog
 *       fails the run if it does not finish within the limit (deadlock).
 *   campaign --catalog F --dir D [--rounds N]
 *       A crash-campaign-like loop: a child buys and confirms until the
 *       SDK kills it at a fault point (IAP_CRASH_AT); the parent reopens and
 *       checks every bought, unconfirmed key is delivered again.
 *   cycles   --catalog F --dir D [--count N]
 *       Open, buy, callback, poll, confirm, simulator ops, every bad input,
 *       close; N times. For the leak checkers.
 *   open     --config JSON
 *       One iap_open and iap_close; prints the code and iap_errmsg (the
 *       permission tests run it as another user).
 *
 * Exit 0 when every check passed. The last line is a summary.
 */
#include "iap_bridge.h"
#include "iap_json_field.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char g_catalog[PATH_MAX], g_dir[PATH_MAX], g_config[8192];
static int g_failures = 0;
static pthread_mutex_t g_fail_mu = PTHREAD_MUTEX_INITIALIZER;

#define FAIL(...) do { \
    pthread_mutex_lock(&g_fail_mu); \
    if (g_failures++ < 20) { fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } \
    pthread_mutex_unlock(&g_fail_mu); \
} while (0)

static double now_s(void) {
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (double)tv.tv_sec + tv.tv_usec / 1e6;
}


static int is_type(const char *json, const char *type) {
    char t[32];
    return iap_json_field(json, "type", t, sizeof t) && strcmp(t, type) == 0;
}

static int64_t key_of(const char *json) {
    char k[32];
    if (!iap_json_field(json, "key", k, sizeof k)) return 0;
    return strtoll(k, NULL, 10);
}

/* durable_store: the crash campaign's config (the store's state synced, as
 * Apple's is; purchases charged in the job that starts them, so that the
 * child stores results, and reaches the fault points, while it runs: with
 * the default 10 ms delay it finished first and was killed in 0 to 1 of 21
 * rounds). Otherwise the cycles' and stress's (the default delay). */
static void make_config(int durable_store) {
    snprintf(g_config, sizeof g_config,
             "{\"store\":\"simulator\",\"dataDir\":\"%s/data\",\"catalog\":\"%s\","
             "\"simulator\":{\"stateDir\":\"%s/state\",\"durable\":%s,\"tickMs\":0,\"purchaseDelayMs\":%s}}",
             g_dir, g_catalog, g_dir, durable_store ? "true" : "false", durable_store ? "0" : "10");
}

static iap_bridge *open_or_die(void) {
    iap_bridge *b = NULL;
    int32_t rc = iap_open(g_config, &b);
    if (rc != IAP_OK) {
        fprintf(stderr, "iap_open failed: %s: %s\n", iap_error_name(rc), iap_errmsg());
        exit(2);
    }
    return b;
}

/* ====================================================================== */
/* Key book-keeping: what the game saw, per key.                          */

#define MAX_KEYS (1 << 18)
#define MAX_SESS 24
typedef struct {
    int64_t key;
    int used, bought, confirmed_ok, confirm_session;
    char product[16];
    int nsess;
    int sess[MAX_SESS];   /* sessions in which a "7" for this key was delivered */
} keyrec;

static keyrec *g_keys;
static pthread_mutex_t g_keys_mu = PTHREAD_MUTEX_INITIALIZER;
static long g_deliveries = 0, g_duplicates = 0, g_after_confirm = 0, g_buys = 0, g_confirms = 0;

static keyrec *key_get(int64_t k) {   /* g_keys_mu held */
    uint64_t h = (uint64_t)k * 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < MAX_KEYS; i++) {
        keyrec *r = &g_keys[(h + i) & (MAX_KEYS - 1)];
        if (!r->used) { r->used = 1; r->key = k; r->confirm_session = -1; return r; }
        if (r->key == k) return r;
    }
    fprintf(stderr, "key table full\n");
    exit(2);
}

static void note_bought(int64_t k, const char *product) {
    pthread_mutex_lock(&g_keys_mu);
    keyrec *r = key_get(k);
    r->bought++;
    snprintf(r->product, sizeof r->product, "%s", product);
    g_buys++;
    pthread_mutex_unlock(&g_keys_mu);
}

static void note_delivered(int64_t k, int session) {
    pthread_mutex_lock(&g_keys_mu);
    keyrec *r = key_get(k);
    g_deliveries++;
    for (int i = 0; i < r->nsess; i++) {
        if (r->sess[i] == session) {
            g_duplicates++;
            FAIL("key %lld delivered twice in session %d", (long long)k, session);
        }
    }
    if (r->confirm_session >= 0 && session > r->confirm_session) {
        g_after_confirm++;
        FAIL("key %lld delivered in session %d after its confirm in session %d", (long long)k, session, r->confirm_session);
    }
    if (r->nsess < MAX_SESS) r->sess[r->nsess++] = session;
    pthread_mutex_unlock(&g_keys_mu);
}

static void note_confirmed(int64_t k, int session) {
    pthread_mutex_lock(&g_keys_mu);
    keyrec *r = key_get(k);
    r->confirmed_ok++;
    r->confirm_session = session;
    g_confirms++;
    if (r->confirmed_ok > 1) FAIL("key %lld confirmed twice", (long long)k);
    pthread_mutex_unlock(&g_keys_mu);
}

/* ====================================================================== */
/* stress                                                                 */

typedef struct session {
    iap_bridge *b;
    int id;
} session;

static pthread_mutex_t g_cur_mu = PTHREAD_MUTEX_INITIALIZER;
static session *g_cur;
static session *g_all_sessions[4096];
static int g_nsessions = 0;
static int g_done = 0;   /* read by the watchdog: atomics only */
static int g_close_races = 1;   /* --close 0: no close + reopen during the run */

static session *current(void) {
    pthread_mutex_lock(&g_cur_mu);
    session *s = g_cur;
    pthread_mutex_unlock(&g_cur_mu);
    return s;
}

static session *new_session(void) {   /* g_cur_mu held (or single-threaded) */
    if (g_nsessions >= 4096) { fprintf(stderr, "too many sessions\n"); exit(2); }
    session *s = calloc(1, sizeof *s);
    s->b = open_or_die();
    s->id = g_nsessions;
    g_all_sessions[g_nsessions++] = s;
    return s;
}

static int ok_or_closed(int32_t rc) { return rc == IAP_OK || rc == IAP_E_CLOSED; }

static void check_rc(const char *what, int32_t rc, int also_ok) {
    if (ok_or_closed(rc) || rc == also_ok) return;
    FAIL("%s returned %s (%d): %s", what, iap_error_name(rc), rc, iap_errmsg());
}

static void handle_message(session *s, const char *json, unsigned *seed) {
    if (!strstr(json, "\"type\":")) {
        FAIL("message without a type: %s", json);
        return;
    }
    if (is_type(json, "7") || is_type(json, "revoked")) {
        int64_t k = key_of(json);
        if (is_type(json, "7")) note_delivered(k, s->id);
        int32_t rc = iap_confirm(s->b, k);
        if (rc == IAP_OK) note_confirmed(k, s->id);
        /* UNKNOWN_KEY: another thread confirmed a copy delivered in an earlier session. */
        else check_rc("iap_confirm", rc, IAP_E_UNKNOWN_KEY);
    }
    /* The callback calling back in: sometimes buy from inside it. */
    if (seed && rand_r(seed) % 8 == 0) {
        int64_t key = 0;
        int32_t rc = iap_buy(s->b, "coins_100", 0, &key);
        if (rc == IAP_OK) note_bought(key, "coins_100");
        else check_rc("iap_buy in callback", rc, IAP_E_BUSY); /* past the purchases in flight */
    }
}

static void stress_callback(void *ctx, const char *json) {
    static __thread unsigned seed = 12345;
    handle_message((session *)ctx, json, &seed);
}

static void close_and_reopen(int seen_id) {
    pthread_mutex_lock(&g_cur_mu);
    if (g_cur->id == seen_id) {
        int32_t rc = iap_close(g_cur->b);
        if (rc != IAP_OK) FAIL("iap_close returned %s: %s", iap_error_name(rc), iap_errmsg());
        g_cur = new_session();
    }
    pthread_mutex_unlock(&g_cur_mu);
}

typedef struct { int index, ops; } worker_arg;

static void *worker(void *p) {
    worker_arg *a = p;
    unsigned seed = 0x5eed + 7919u * (unsigned)a->index;
    int64_t click = 5000000000000000LL + (int64_t)a->index * 100000000LL;
    for (int i = 0; i < a->ops; i++) {
        session *s = current();
        int r = rand_r(&seed) % 100;
        if (r < 28) {
            int64_t key = 0;
            const char *product = (r % 4 == 0) ? "remove_ads" : "coins_100";
            int32_t rc = iap_buy(s->b, product, (r % 2) ? 0 : ++click, &key);
            if (rc == IAP_OK) note_bought(key, product);
            else check_rc("iap_buy", rc, IAP_E_BUSY);  /* past the purchases in flight */
        } else if (r < 58) {
            for (int n = 0; n < 4; n++) {
                char *m = iap_poll(s->b);
                if (!m) break;
                handle_message(s, m, NULL);
                iap_free(m);
            }
        } else if (r < 62) {
            check_rc("iap_request_products", iap_request_products(s->b, "[\"coins_100\",\"remove_ads\",\"nope\"]"), 0);
        } else if (r < 64) {
            check_rc("iap_restore", iap_restore(s->b), 0);
        } else if (r < 70) {
            static const char *ops[] = {
                "{\"op\":\"transactions\"}", "{\"op\":\"clock\"}", "{\"op\":\"entitlements\"}",
                "{\"op\":\"pending\"}", "{\"op\":\"external_purchase\",\"productID\":\"coins_100\"}",
            };
            char *out = NULL;
            int32_t rc = iap_simulator(s->b, ops[r % 5], &out);
            check_rc("iap_simulator", rc, 0);
            if (rc == IAP_OK && !out) FAIL("iap_simulator OK without an answer");
            iap_free(out);
        } else if (r < 75) {
            check_rc("iap_set_callback", (r % 2) ? iap_set_callback(s->b, stress_callback, s) : iap_set_callback(s->b, NULL, NULL), 0);
        } else if (r < 77) {
            check_rc("iap_flush", iap_flush(s->b), 0);
        } else if (r < 78) {
            if (!iap_version()[0] || !iap_error_name(r - 100)[0]) FAIL("empty static string");
            (void)iap_errmsg();
        } else if (r < 79 && g_close_races) {
            close_and_reopen(s->id);
        } else if (r < 84) {
            /* The store requests: a sheet may be up on another thread (BUSY). */
            int32_t rc;
            switch (r) {
            case 79: rc = iap_subscription_status(s->b, (seed & 1) ? NULL : "[\"vip_monthly\",\"coins_100\"]"); break;
            case 80: rc = iap_app_transaction(s->b); break;
            case 81: rc = iap_request_refund(s->b, "1"); break;  /* no such transaction: outcome error */
            case 82: rc = (seed & 1) ? iap_manage_subscriptions(s->b) : iap_redeem_offer_code(s->b); break;
            default: rc = iap_show_store_messages(s->b); break;
            }
            check_rc("a store request", rc, IAP_E_BUSY);
            if (r == 83 && seed % 7 == 0) {
                char *out = NULL;
                check_rc("iap_simulator price_increase",
                         iap_simulator(s->b, "{\"op\":\"price_increase\",\"productID\":\"vip_monthly\",\"price\":\"3.99\"}", &out), 0);
                iap_free(out);
            }
        } else {
            char *m = iap_poll(s->b);
            if (m) { handle_message(s, m, NULL); iap_free(m); }
        }
    }
    return NULL;
}

static void *watchdog(void *p) {
    int limit = *(int *)p;
    for (int i = 0; i < limit * 10; i++) {
        if (__atomic_load_n(&g_done, __ATOMIC_ACQUIRE)) return NULL;
        usleep(100000);
    }
    fprintf(stderr, "FAIL: not finished after %d s: deadlock or livelock\n", limit);
    fflush(stderr);
    _exit(3);
}

/* Opens a session, takes every message (re-emitted and re-delivered at
 * open), confirms each; returns how many "7"s it saw. */
static int drain_session(void) {
    session *s = new_session();
    int sevens = 0;
    char *m;
    while ((m = iap_poll(s->b)) != NULL) {
        if (is_type(m, "7")) sevens++;
        handle_message(s, m, NULL);
        iap_free(m);
    }
    if (iap_flush(s->b) != IAP_OK) FAIL("final iap_flush");
    if (iap_close(s->b) != IAP_OK) FAIL("final iap_close");
    return sevens;
}

static int run_stress(int threads, int ops, int limit) {
    make_config(0);
    g_keys = calloc(MAX_KEYS, sizeof *g_keys);
    pthread_t wd;
    pthread_create(&wd, NULL, watchdog, &limit);
    double t0 = now_s();
    g_cur = new_session();
    pthread_t th[64];
    worker_arg args[64];
    for (int i = 0; i < threads; i++) {
        args[i] = (worker_arg){i, ops};
        pthread_create(&th[i], NULL, worker, &args[i]);
    }
    for (int i = 0; i < threads; i++) pthread_join(th[i], NULL);
    if (iap_close(g_cur->b) != IAP_OK) FAIL("iap_close after the threads");
    double t1 = now_s();

    /* Everything still unconfirmed comes back now; then nothing at all. */
    int first = drain_session();
    int second = drain_session();
    __atomic_store_n(&g_done, 1, __ATOMIC_RELEASE);
    pthread_join(wd, NULL);
    if (second != 0) FAIL("%d \"7\" messages after everything was confirmed", second);

    long bought = 0, lost = 0, unconfirmed = 0;
    for (size_t i = 0; i < MAX_KEYS; i++) {
        keyrec *r = &g_keys[i];
        if (!r->used || !r->bought) continue;
        bought++;
        if (r->bought > 1) FAIL("key %lld returned by iap_buy %d times", (long long)r->key, r->bought);
        if (r->nsess == 0) { lost++; if (lost <= 5) FAIL("key %lld (%s) bought but never delivered", (long long)r->key, r->product); }
        else if (r->confirmed_ok != 1) { unconfirmed++; if (unconfirmed <= 5) FAIL("key %lld confirmed %d times", (long long)r->key, r->confirmed_ok); }
    }
    printf("stress: %d threads x %d ops in %.2f s (+%.2f s final drains); %ld keys bought, %ld deliveries, %ld confirms, "
           "%d sessions (close+reopen races), %d redelivered at the end; lost %ld, duplicated %ld, after-confirm %ld, "
           "confirm-not-once %ld; %d failures\n",
           threads, ops, t1 - t0, now_s() - t1, bought, g_deliveries, g_confirms, g_nsessions, first, lost,
           g_duplicates, g_after_confirm, unconfirmed, g_failures);
    for (int i = 0; i < g_nsessions; i++) free(g_all_sessions[i]);
    free(g_keys);
    return g_failures == 0 ? 0 : 1;
}

/* ====================================================================== */
/* campaign                                                               */

static const char *fault_points[] = {
    "after_outbox_write", "after_outbox_sync", "after_confirm_write", "before_finish",
    "after_finish", "after_charge", "during_compaction",
};

/* The child: buys, logs each key bought, each confirm it is about to make
 * and each flush that made the confirms before it durable, until the SDK
 * kills it. Log lines: "b KEY", "c KEY", "f". */
static int run_child(const char *logpath, int round) {
    make_config(1);
    FILE *log = fopen(logpath, "a");
    if (!log) return 2;
    setvbuf(log, NULL, _IONBF, 0);
    iap_bridge *b = open_or_die();
    char *m;
    while ((m = iap_poll(b)) != NULL) iap_free(m);   /* the parent checks redelivery, not the child */
    for (int i = 0; i < 12; i++) {
        int64_t key = 0;
        const char *product = (i % 3 == 2) ? "remove_ads" : "coins_100";
        int32_t rc = iap_buy(b, product, 1000000LL * (round + 1) + i + 1, &key);
        if (rc == IAP_OK) fprintf(log, "b %lld\n", (long long)key);
        else if (rc != IAP_E_DUPLICATE_KEY) { fprintf(stderr, "child: iap_buy: %s\n", iap_errmsg()); return 2; }
        while ((m = iap_poll(b)) != NULL) {
            if (is_type(m, "7") && i % 2 == 0) {
                /* Logged before the call: the group commit may make the
                 * confirm durable (and the SDK kill us) before it returns. */
                fprintf(log, "c %lld\n", (long long)key_of(m));
                if (iap_confirm(b, key_of(m)) != IAP_OK) { fprintf(stderr, "child: iap_confirm: %s\n", iap_errmsg()); return 2; }
            }
            iap_free(m);
        }
        if (i % 4 == 3 && iap_flush(b) == IAP_OK) fprintf(log, "f\n");
    }
    iap_close(b);
    fprintf(log, "f\n");
    fclose(log);
    return 0;
}

static int run_campaign(const char *self, int rounds) {
    make_config(1);
    char logpath[PATH_MAX + 16];
    snprintf(logpath, sizeof logpath, "%s/campaign.log", g_dir);
    int kills = 0, checked = 0, never_charged = 0;
    for (int round = 0; round < rounds; round++) {
        unlink(logpath);
        char spec[64], rs[16];
        snprintf(spec, sizeof spec, "%s:%d", fault_points[round % 7], 1 + (round / 7) % 3);
        snprintf(rs, sizeof rs, "%d", round);
        pid_t pid = fork();
        if (pid == 0) {
            setenv("IAP_CRASH_AT", spec, 1);
            setenv("SWIFT_BACKTRACE", "enable=no", 1);
            execl("/proc/self/exe", self, "child", "--catalog", g_catalog, "--dir", g_dir, "--log", logpath, "--round", rs, (char *)NULL);
            _exit(127);
        }
        int status = 0;
        waitpid(pid, &status, 0);
        if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) kills++;
        else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) { FAIL("round %d (%s): child status %d", round, spec, status); continue; }

        /* What the child knew: keys bought, keys whose confirm is durable. */
        int64_t bought[64], pending_confirm[64], durable[64];
        int nb = 0, np = 0, nd = 0;
        FILE *f = fopen(logpath, "r");
        char line[64];
        while (f && fgets(line, sizeof line, f)) {
            if (line[0] == 'b' && nb < 64) bought[nb++] = strtoll(line + 2, NULL, 10);
            if (line[0] == 'c' && np < 64) pending_confirm[np++] = strtoll(line + 2, NULL, 10);
            if (line[0] == 'f') { for (int i = 0; i < np && nd < 64; i++) durable[nd++] = pending_confirm[i]; np = 0; }
        }
        if (f) fclose(f);

        iap_bridge *b = open_or_die();
        int64_t seen[256];
        int ns = 0;
        char *m;
        while ((m = iap_poll(b)) != NULL) {
            if (is_type(m, "7") && ns < 256) seen[ns++] = key_of(m);
            if (is_type(m, "7") || is_type(m, "revoked")) iap_confirm(b, key_of(m));
            iap_free(m);
        }
        /* The keys the store charged. A key bought but never charged is a
         * purchase the kill stopped before anyone paid: before the SDK
         * thread started it (iap_buy does no I/O, C10), or while it waited
         * for the player (the simulator forgets a purchase still in its
         * delay, as a payment sheet dies with its app). Nothing was paid,
         * so no result is owed (docs/CONTRACT.md, C5); a charged one is. */
        int64_t charged[256];
        int nc = 0;
        char *tx = NULL;
        if (iap_simulator(b, "{\"op\":\"transactions\"}", &tx) != IAP_OK || !tx) {
            FAIL("round %d (%s): the simulator's transactions: %s", round, spec, iap_errmsg());
        } else {
            for (const char *p = tx; nc < 256 && (p = strstr(p, "\"key\":")) != NULL;) {
                p += 6;
                if (*p == '"') p++;
                charged[nc++] = strtoll(p, NULL, 10);
            }
            iap_free(tx);
        }
        iap_flush(b);
        iap_close(b);
        for (int i = 0; i < nb; i++) {
            int was_durable = 0, delivered = 0;
            for (int j = 0; j < nd; j++) was_durable |= durable[j] == bought[i];
            for (int j = 0; j < ns; j++) delivered |= seen[j] == bought[i];
            if (was_durable && delivered) FAIL("round %d (%s): key %lld delivered again after a durable confirm", round, spec, (long long)bought[i]);
            if (!was_durable && !delivered) {
                /* Confirmed but not yet durable when killed is fine either way;
                 * bought and never confirmed must come back. */
                int confirmed = 0, paid = 0;
                for (int j = 0; j < np; j++) confirmed |= pending_confirm[j] == bought[i];
                for (int j = 0; j < nc; j++) paid |= charged[j] == bought[i];
                if (!confirmed && paid) FAIL("round %d (%s): bought key %lld charged and lost", round, spec, (long long)bought[i]);
                if (!confirmed && !paid) never_charged++;
            }
            checked++;
        }
    }
    printf("campaign: %d rounds, %d children killed at fault points, %d bought keys checked (%d never charged: the kill came first); %d failures\n",
           rounds, kills, checked, never_charged, g_failures);
    return g_failures == 0 ? 0 : 1;
}

/* ====================================================================== */
/* cycles                                                                 */

static void cycle_callback(void *ctx, const char *json) {
    iap_bridge *b = ctx;
    if (is_type(json, "7") || is_type(json, "revoked")) iap_confirm(b, key_of(json));
}

/* This process's resident memory in KiB (Linux), or -1. */
static long rss_kib(void) {
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return -1;
    char line[256];
    long kib = -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "VmRSS:", 6) == 0) kib = strtol(line + 6, NULL, 10);
    fclose(f);
    return kib;
}

static int run_cycles(int count) {
    long rss_early = -1;
    make_config(0);
    static char huge[1 << 20];
    memset(huge, 'a', sizeof huge - 1);
    for (int i = 0; i < count; i++) {
        if (i == count / 10) rss_early = rss_kib();
        iap_bridge *b = open_or_die();
        int64_t key = 0;
        char *out = NULL, *m;
        /* Good calls. */
        if (iap_request_products(b, "[\"coins_100\",\"vip_monthly\",\"nope\"]") != IAP_OK) FAIL("request");
        if (iap_buy(b, "coins_100", 0, &key) != IAP_OK) FAIL("buy: %s", iap_errmsg());
        if (iap_buy(b, "remove_ads", 0, &key) != IAP_OK) FAIL("buy: %s", iap_errmsg());
        if (iap_simulator(b, "{\"op\":\"transactions\"}", &out) != IAP_OK) FAIL("simulator");
        iap_free(out);
        out = NULL;
        if (iap_simulator(b, "{\"op\":\"external_purchase\",\"productID\":\"coins_100\"}", &out) != IAP_OK) FAIL("external");
        iap_free(out);
        if (iap_set_callback(b, cycle_callback, b) != IAP_OK) FAIL("set_callback");
        if (iap_buy(b, "vip_monthly", 0, &key) != IAP_OK) FAIL("buy sub: %s", iap_errmsg());
        if (iap_restore(b) != IAP_OK) FAIL("restore");
        if (iap_set_callback(b, NULL, NULL) != IAP_OK) FAIL("set_callback NULL");
        while ((m = iap_poll(b)) != NULL) {
            if (is_type(m, "7") || is_type(m, "revoked")) iap_confirm(b, key_of(m));
            iap_free(m);
        }
        /* Bad calls: each must fail cleanly. */
        out = NULL;
        if (iap_buy(b, NULL, 1, &key) != IAP_E_NULL_ARG) FAIL("buy NULL");
        if (iap_buy(b, "\xff\xfe", 1, &key) != IAP_E_INVALID_ARG) FAIL("buy utf8");
        if (iap_buy(b, huge, 1, &key) != IAP_E_INVALID_ARG) FAIL("buy huge");
        if (iap_request_products(b, huge) != IAP_E_INVALID_ARG) FAIL("request huge");
        if (iap_request_products(b, "[1,2") != IAP_E_BAD_JSON) FAIL("request bad json");
        if (iap_simulator(b, "{\"op\":\"nope\"}", &out) != IAP_E_UNKNOWN_OP || out) FAIL("simulator unknown op");
        if (iap_confirm(b, -42) != IAP_E_UNKNOWN_KEY) FAIL("confirm unknown");
        iap_bridge *other = NULL;
        if (iap_open("{\"store\":\"simulator\"}", &other) == IAP_OK || other) FAIL("open without dataDir");
        if (iap_flush(b) != IAP_OK) FAIL("flush");
        if (iap_close(b) != IAP_OK) FAIL("close");
        if (iap_close(b) != IAP_E_CLOSED) FAIL("double close");
        if (iap_poll(b) != NULL) FAIL("poll after close");
    }
    /* Leave nothing behind for the next run. */
    iap_bridge *b = open_or_die();
    char *m;
    while ((m = iap_poll(b)) != NULL) {
        if (is_type(m, "7") || is_type(m, "revoked")) iap_confirm(b, key_of(m));
        iap_free(m);
    }
    iap_close(b);
    printf("cycles: %d open/buy/callback/confirm/close cycles with bad inputs; resident memory %ld KiB after %d cycles, "
           "%ld KiB at the end; %d failures\n", count, rss_early, count / 10, rss_kib(), g_failures);
    return g_failures == 0 ? 0 : 1;
}

/* ====================================================================== */

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s stress|campaign|cycles --catalog FILE --dir DIR [options] | open --config JSON\n", argv[0]);
        return 2;
    }
    const char *mode = argv[1], *logpath = NULL, *config = NULL;
    int threads = 8, ops = 2000, limit = 120, rounds = 14, count = 20, round = 0;
    for (int i = 2; i + 1 < argc; i += 2) {
        const char *k = argv[i], *v = argv[i + 1];
        if (!strcmp(k, "--catalog")) snprintf(g_catalog, sizeof g_catalog, "%s", v);
        else if (!strcmp(k, "--dir")) snprintf(g_dir, sizeof g_dir, "%s", v);
        else if (!strcmp(k, "--threads")) threads = atoi(v);
        else if (!strcmp(k, "--ops")) ops = atoi(v);
        else if (!strcmp(k, "--limit")) limit = atoi(v);
        else if (!strcmp(k, "--rounds")) rounds = atoi(v);
        else if (!strcmp(k, "--count")) count = atoi(v);
        else if (!strcmp(k, "--log")) logpath = v;
        else if (!strcmp(k, "--round")) round = atoi(v);
        else if (!strcmp(k, "--close")) g_close_races = atoi(v);
        else if (!strcmp(k, "--config")) config = v;
        else { fprintf(stderr, "unknown option %s\n", k); return 2; }
    }
    if (!strcmp(mode, "open") && config) {
        /* One iap_open (e.g. as another user, for the permission checks). */
        iap_bridge *b = NULL;
        int32_t rc = iap_open(config, &b);
        printf("open: %s (%d): %s\n", iap_error_name(rc), rc, rc == IAP_OK ? "" : iap_errmsg());
        if (rc == IAP_OK) iap_close(b);
        return rc == IAP_OK ? 0 : 1;
    }
    if (!g_catalog[0] || !g_dir[0]) { fprintf(stderr, "--catalog and --dir are required\n"); return 2; }
    if (threads < 1 || threads > 64) threads = 8;
    mkdir(g_dir, 0700);
    if (!strcmp(mode, "stress")) return run_stress(threads, ops, limit);
    if (!strcmp(mode, "campaign")) return run_campaign(argv[0], rounds);
    if (!strcmp(mode, "cycles")) return run_cycles(count);
    if (!strcmp(mode, "child") && logpath) return run_child(logpath, round);
    fprintf(stderr, "unknown mode %s\n", mode);
    return 2;
}
