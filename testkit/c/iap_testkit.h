/*
 * iap_testkit.h: the IAPBridge test kit for C and C++ (header-only, POSIX:
 * Linux, macOS). Runs a game's purchase code against the simulated App Store
 * in a child process (fork), kills it at a chosen point, restarts it, and
 * checks that every purchase was granted exactly once (docs/TESTKIT.md).
 *
 *   #define IAPTK_INTERCEPT          // iap_open/iap_poll/iap_set_callback/iap_confirm below go through the kit
 *   #include "iap_testkit.h"
 *   #include "my_game_purchases.c"   // your game's code, unchanged
 *
 *   static void game(const char *config, void *ctx) { my_game_run(config, ctx); }
 *
 *   iaptk_kit kit;
 *   iaptk_init(&kit, "/abs/Game.storekit");
 *   iaptk_run r = iaptk_run_game(&kit, game, NULL, "before_confirm", NULL);  // killed there
 *   iaptk_run_game(&kit, game, NULL, NULL, NULL);                            // the restart
 *   int problems = iaptk_expect_granted_exactly_once(&kit, grants, n, takebacks, m);
 *   iaptk_cleanup(&kit);
 *
 * Kill points: "after_charge" (a successful "7" is handed to the game, by
 * iap_poll or its iap_set_callback callback: the store charged, nothing is
 * granted), "before_confirm" (the game calls
 * iap_confirm: granted and saved), "after_confirm" (iap_confirm returned, not
 * durable yet), or any name the game's code passes to iaptk_checkpoint().
 * "name:N" dies at the Nth time. The child dies by SIGKILL: no atexit, no
 * iap_close. Without IAPTK_INTERCEPT, call iaptk_poll / iaptk_set_callback /
 * iaptk_confirm / iaptk_open yourself. Call iaptk_run_game with no bridge open in the test
 * process (fork copies only the calling thread). Store actions of one session
 * (fail_next, cancel_next, interrupt_next) go in run_game's store_ops (a JSON
 * array of commands run right after the game's bridge opens); approve,
 * refund, lapse... are kit functions, run while the game is not running.
 *
 * Every function is static: include it in one test file. Link libIAPBridge.
 */
#ifndef IAP_TESTKIT_H
#define IAP_TESTKIT_H

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "iap_bridge.h"

/* The most charges a ledger holds; define it before including the kit to
 * raise it. A store holding more makes iaptk_read_ledger fail (and so the
 * exactly-once check), never compare against a truncated list. */
#ifndef IAPTK_MAX_TX
#define IAPTK_MAX_TX 1024
#endif
#define IAPTK_UNUSED __attribute__((unused))

typedef struct {
    char root[256], data_dir[300], state_dir[300], marker[300], catalog[1024];
    char config[2048];
} iaptk_kit;

/* How one run of the game's code ended. */
typedef struct {
    int exit_code;       /* its exit status, or -1 when a signal ended it */
    int signal;          /* the signal that ended it (9: killed), or 0 */
    char killed_at[64];  /* the kill point reached, or "" */
} iaptk_run;

/* A grant or takeback the game saved: the message's key and product, and
 * optionally its transactionID (NULL or ""). */
typedef struct {
    int64_t key;
    const char *productID;
    const char *transactionID;
} iaptk_record;

typedef struct {
    char productID[128], transactionID[32];
    int revoked;
} iaptk_tx;

/* What the store charged (verified transactions), and the results the SDK
 * still holds unconfirmed (delivered again at the next start). */
typedef struct {
    iaptk_tx tx[IAPTK_MAX_TX];
    int count;
    int overflow; /* more charges than IAPTK_MAX_TX: the list is incomplete */
    char unconfirmed[16][160];
    int unconfirmed_count;
} iaptk_ledger;

/* ---- small JSON readers (flat objects of the simulator's answers) ------- */

/* Copies the string value of "name" found in [obj, end) into out. */
static IAPTK_UNUSED int iaptk__str(const char *obj, const char *end, const char *name, char *out, size_t len) {
    char pat[80];
    snprintf(pat, sizeof pat, "\"%s\":\"", name);
    const char *p = strstr(obj, pat);
    if (!p || p >= end) return 0;
    p += strlen(pat);
    const char *q = strchr(p, '"');
    if (!q || q >= end || (size_t)(q - p) >= len) return 0;
    memcpy(out, p, (size_t)(q - p));
    out[q - p] = 0;
    return 1;
}

static IAPTK_UNUSED int iaptk__true(const char *obj, const char *end, const char *name) {
    char pat[80];
    snprintf(pat, sizeof pat, "\"%s\":true", name);
    const char *p = strstr(obj, pat);
    return p && p < end;
}

static IAPTK_UNUSED long long iaptk__num(const char *json, const char *name) {
    char pat[80];
    snprintf(pat, sizeof pat, "\"%s\":", name);
    const char *p = strstr(json, pat);
    return p ? strtoll(p + strlen(pat), NULL, 10) : -1;
}

/* ---- the kit ------------------------------------------------------------- */

/* A fresh temporary directory for the game's data and the simulated store.
 * Returns 0, or -1 (errno) when it cannot be made. */
static IAPTK_UNUSED int iaptk_init(iaptk_kit *kit, const char *catalog) {
    memset(kit, 0, sizeof *kit);
    snprintf(kit->root, sizeof kit->root, "%s/iap-testkit.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(kit->root)) return -1;
    snprintf(kit->data_dir, sizeof kit->data_dir, "%s/data", kit->root);
    snprintf(kit->state_dir, sizeof kit->state_dir, "%s/appstore", kit->root);
    snprintf(kit->marker, sizeof kit->marker, "%s/killed-at", kit->root);
    snprintf(kit->catalog, sizeof kit->catalog, "%s", catalog);
    snprintf(kit->config, sizeof kit->config,
             "{\"store\":\"simulator\",\"dataDir\":\"%s\",\"catalog\":\"%s\","
             "\"simulator\":{\"stateDir\":\"%s\",\"tickMs\":0}}",
             kit->data_dir, kit->catalog, kit->state_dir);
    return 0;
}

static int iaptk__rm(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st; (void)flag; (void)ftw;
    return remove(path);
}

/* Deletes the kit's directory (keep it with IAPTK_KEEP=1 in the environment). */
static IAPTK_UNUSED void iaptk_cleanup(iaptk_kit *kit) {
    if (getenv("IAPTK_KEEP")) return;
    nftw(kit->root, iaptk__rm, 16, FTW_DEPTH | FTW_PHYS);
}

/* One simulator command (docs/SIMULATOR.md) in a bridge of its own, while the
 * game is not running; results it makes wait for the game's next start.
 * *answer (if answer is not NULL) is malloc'd: free() it. Returns IAP_OK or
 * the error code (also printed to stderr). */
static IAPTK_UNUSED int iaptk_store(iaptk_kit *kit, const char *command, char **answer) {
    iap_bridge *b = NULL;
    char *out = NULL;
    if (answer) *answer = NULL;
    int rc = iap_open(kit->config, &b);
    if (rc == IAP_OK) {
        rc = iap_simulator(b, command, &out);
        if (rc != IAP_OK) fprintf(stderr, "iaptk: %s: %s (%s)\n", command, iap_error_name(rc), iap_errmsg());
        iap_close(b);
    } else {
        fprintf(stderr, "iaptk: iap_open: %s (%s)\n", iap_error_name(rc), iap_errmsg());
    }
    if (out && answer) *answer = strdup(out);
    iap_free(out);
    return rc;
}

static IAPTK_UNUSED int iaptk_ask_to_buy(iaptk_kit *kit, int enabled) {
    return iaptk_store(kit, enabled ? "{\"op\":\"ask_to_buy\",\"enabled\":true}" : "{\"op\":\"ask_to_buy\",\"enabled\":false}", NULL);
}

/* The id of the oldest purchase of product_id (NULL: any) waiting for a
 * parent, into id; 0 when there is one. */
static IAPTK_UNUSED int iaptk_pending(iaptk_kit *kit, const char *product_id, char *id, size_t len) {
    char *a = NULL;
    int found = 0;
    if (iaptk_store(kit, "{\"op\":\"pending\"}", &a) != IAP_OK) return -1;
    for (const char *o = strchr(a, '['); o && (o = strchr(o, '{')) != NULL;) {
        const char *end = strchr(o, '}');
        char pid[128];
        if (!end) break;
        if (iaptk__str(o, end, "productID", pid, sizeof pid) && (!product_id || strcmp(pid, product_id) == 0)
            && iaptk__str(o, end, "id", id, len)) { found = 1; break; }
        o = end;
    }
    free(a);
    return found ? 0 : -1;
}

static int iaptk__decide(iaptk_kit *kit, const char *op, const char *product_id) {
    char id[64], cmd[160];
    if (iaptk_pending(kit, product_id, id, sizeof id) != 0) {
        fprintf(stderr, "iaptk: no purchase of %s waits for approval\n", product_id ? product_id : "any product");
        return IAP_E_NOT_FOUND;
    }
    snprintf(cmd, sizeof cmd, "{\"op\":\"%s\",\"id\":\"%s\"}", op, id);
    return iaptk_store(kit, cmd, NULL);
}

/* A parent approves (declines) the oldest waiting purchase of product_id. */
static IAPTK_UNUSED int iaptk_approve(iaptk_kit *kit, const char *product_id) { return iaptk__decide(kit, "approve", product_id); }
static IAPTK_UNUSED int iaptk_decline(iaptk_kit *kit, const char *product_id) { return iaptk__decide(kit, "decline", product_id); }

static void iaptk__read_tx(const char *json, iaptk_ledger *l) {
    const char *o = strstr(json, "\"transactions\":[");
    l->count = 0;
    l->overflow = 0;
    while (o && (o = strchr(o + 1, '{')) != NULL) {
        const char *end = strchr(o, '}');
        if (!end) break;
        const char *unverified = strstr(o, "\"verified\":false");
        if (!unverified || unverified > end) { /* a forged transaction is no charge */
            if (l->count == IAPTK_MAX_TX) {
                l->overflow = 1;
                break;
            }
            iaptk_tx *t = &l->tx[l->count++];
            iaptk__str(o, end, "productID", t->productID, sizeof t->productID);
            iaptk__str(o, end, "transactionID", t->transactionID, sizeof t->transactionID);
            t->revoked = iaptk__true(o, end, "revoked");
        }
        o = end;
    }
}

/* Refunds the newest unrefunded transaction of product_id; its ID goes to
 * tid (if not NULL). The game gets a "revoked" at its next start. */
static IAPTK_UNUSED int iaptk_refund(iaptk_kit *kit, const char *product_id, char tid[32]) {
    char *a = NULL, cmd[160];
    static iaptk_ledger l;
    const char *pick = NULL;
    if (iaptk_store(kit, "{\"op\":\"transactions\"}", &a) != IAP_OK) return -1;
    iaptk__read_tx(a, &l);
    free(a);
    if (l.overflow) {
        fprintf(stderr, "iaptk: the store holds more than %d charges: define IAPTK_MAX_TX higher before including iap_testkit.h\n", IAPTK_MAX_TX);
        return IAP_E_INVALID_ARG;
    }
    for (int i = 0; i < l.count; i++)
        if (!l.tx[i].revoked && (!product_id || strcmp(l.tx[i].productID, product_id) == 0)) pick = l.tx[i].transactionID;
    if (!pick) { fprintf(stderr, "iaptk: no transaction of %s to refund\n", product_id ? product_id : "any product"); return IAP_E_NOT_FOUND; }
    if (tid) snprintf(tid, 32, "%s", pick);
    snprintf(cmd, sizeof cmd, "{\"op\":\"refund\",\"transactionID\":\"%s\"}", pick);
    return iaptk_store(kit, cmd, NULL);
}

/* Auto-renew off, then the store's clock past the period's end: the
 * subscription of product_id expires. */
static IAPTK_UNUSED int iaptk_lapse_subscription(iaptk_kit *kit, const char *product_id) {
    iap_bridge *b = NULL;
    char *a = NULL, *c = NULL, cmd[200];
    int rc = iap_open(kit->config, &b);
    if (rc != IAP_OK) return rc;
    snprintf(cmd, sizeof cmd, "{\"op\":\"auto_renew\",\"productID\":\"%s\",\"enabled\":false}", product_id);
    rc = iap_simulator(b, cmd, &a);
    if (rc == IAP_OK) rc = iap_simulator(b, "{\"op\":\"clock\"}", &c);
    if (rc == IAP_OK) {
        long long expires = iaptk__num(a, "expiresDate"), now = iaptk__num(c, "now");
        if (expires <= 0) { fprintf(stderr, "iaptk: %s has no running subscription to lapse\n", product_id); rc = IAP_E_NOT_FOUND; }
        else {
            char *d = NULL;
            snprintf(cmd, sizeof cmd, "{\"op\":\"advance\",\"seconds\":%lld}", (expires > now ? (expires - now) / 1000 : 0) + 1);
            rc = iap_simulator(b, cmd, &d);
            iap_free(d);
        }
    }
    iap_free(a);
    iap_free(c);
    iap_close(b);
    return rc;
}

/* ---- the child: kill points ----------------------------------------------- */

static struct { char point[64]; int nth, seen; const char *marker; const char *store_ops; } iaptk__armed;

static void iaptk__die(const char *point) {
    int fd = open(iaptk__armed.marker, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd >= 0) { ssize_t w = write(fd, point, strlen(point)); (void)w; close(fd); }
    fflush(NULL);
    kill(getpid(), SIGKILL);
}

/* A kill point of the game's own (e.g. between granting and saving): the
 * child dies here when the test asked for it. Does nothing otherwise. */
static IAPTK_UNUSED void iaptk_checkpoint(const char *name) {
    if (!iaptk__armed.marker || strcmp(iaptk__armed.point, name) != 0) return;
    if (++iaptk__armed.seen == iaptk__armed.nth) iaptk__die(name);
}

/* iap_open, then the run's store_ops (once, on the game's first bridge). */
static IAPTK_UNUSED int32_t iaptk_open(const char *config, iap_bridge **out) {
    int32_t rc = iap_open(config, out);
    if (rc == IAP_OK && iaptk__armed.store_ops) {
        const char *o = iaptk__armed.store_ops;
        while ((o = strchr(o, '{')) != NULL) {
            const char *end = strchr(o, '}');
            char cmd[512], *ans = NULL;
            if (!end || (size_t)(end - o + 1) >= sizeof cmd) break;
            memcpy(cmd, o, (size_t)(end - o + 1));
            cmd[end - o + 1] = 0;
            if (iap_simulator(*out, cmd, &ans) != IAP_OK) fprintf(stderr, "iaptk: store op %s: %s\n", cmd, iap_errmsg());
            iap_free(ans);
            o = end;
        }
        iaptk__armed.store_ops = NULL;
    }
    return rc;
}

/* A message the game takes (polled or handed to its callback): a successful
 * "7" is the after_charge point. */
static void iaptk__handed_to_game(const char *m) {
    if (m && strncmp(m, "{\"type\":\"7\"", 11) == 0 && strstr(m, "\"result\":\"0\"")) iaptk_checkpoint("after_charge");
}

static IAPTK_UNUSED char *iaptk_poll(iap_bridge *b) {
    char *m = iap_poll(b);
    iaptk__handed_to_game(m);
    return m;
}

/* The game's callback and its ctx, behind the kit's after_charge check. */
typedef struct { iap_callback cb; void *ctx; } iaptk__callback;

static void iaptk__callback_trampoline(void *ctx, const char *json) {
    iaptk__callback *c = (iaptk__callback *)ctx;
    iaptk__handed_to_game(json);
    c->cb(c->ctx, json);
}

/* iap_set_callback with the after_charge kill point in front of cb. Each call
 * keeps a few bytes until the child ends: the SDK may still be running the
 * callback it replaces. */
static IAPTK_UNUSED int32_t iaptk_set_callback(iap_bridge *b, iap_callback cb, void *ctx) {
    if (!cb) return iap_set_callback(b, NULL, ctx);
    iaptk__callback *c = (iaptk__callback *)malloc(sizeof *c);
    if (!c) return IAP_E_RESOURCE;
    c->cb = cb;
    c->ctx = ctx;
    int32_t rc = iap_set_callback(b, iaptk__callback_trampoline, c);
    if (rc != IAP_OK) free(c);
    return rc;
}

static IAPTK_UNUSED int32_t iaptk_confirm(iap_bridge *b, int64_t key) {
    iaptk_checkpoint("before_confirm");
    int32_t rc = iap_confirm(b, key);
    iaptk_checkpoint("after_confirm");
    return rc;
}

/* The game of a forked child, run on a thread the child starts. The thread
 * that called fork() keeps, in the child, the thread ID the Swift runtime
 * cached for it in the parent (any earlier call into the library), and a
 * runtime lock it then contends for with the SDK's threads can wait forever;
 * a thread started after the fork has its own ID. */
typedef struct { void (*game)(const char *config, void *ctx); const char *config; void *ctx; } iaptk__child;

static void *iaptk__child_main(void *arg) {
    iaptk__child *c = (iaptk__child *)arg;
    c->game(c->config, c->ctx);
    return NULL;
}

/* Runs game(config, ctx) in a child process (fork) with the kill point armed
 * (kill_at NULL: none) and store_ops (a JSON array of simulator commands, or
 * NULL) run right after the game's bridge opens. The child exits 0 when game
 * returns. Prints what went wrong when a kill point was asked for and not
 * reached, or a run without one did not exit 0. */
static IAPTK_UNUSED iaptk_run iaptk_run_game(iaptk_kit *kit, void (*game)(const char *config, void *ctx), void *ctx,
                                           const char *kill_at, const char *store_ops) {
    iaptk_run r;
    memset(&r, 0, sizeof r);
    unlink(kit->marker);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        memset(&iaptk__armed, 0, sizeof iaptk__armed);
        iaptk__armed.marker = kit->marker;
        iaptk__armed.store_ops = store_ops;
        iaptk__armed.nth = 1;
        if (kill_at) {
            snprintf(iaptk__armed.point, sizeof iaptk__armed.point, "%s", kill_at);
            char *colon = strrchr(iaptk__armed.point, ':');
            if (colon) { iaptk__armed.nth = atoi(colon + 1); *colon = 0; }
        }
        setenv("SWIFT_BACKTRACE", "enable=no", 1);
        iaptk__child child = { game, kit->config, ctx };
        pthread_t thread;
        if (pthread_create(&thread, NULL, iaptk__child_main, &child) != 0 || pthread_join(thread, NULL) != 0) {
            fprintf(stderr, "iaptk: cannot start the game's thread in the child\n");
            _exit(1);
        }
        fflush(NULL);
        _exit(0);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) < 0) { r.exit_code = -1; return r; }
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    FILE *f = fopen(kit->marker, "r");
    if (f) { if (!fgets(r.killed_at, sizeof r.killed_at, f)) r.killed_at[0] = 0; fclose(f); }
    if (kill_at) {
        char want[64];
        snprintf(want, sizeof want, "%s", kill_at);
        char *colon = strrchr(want, ':');
        if (colon) *colon = 0;
        if (strcmp(r.killed_at, want) != 0 || r.signal != SIGKILL)
            fprintf(stderr, "iaptk: the game was to be killed at %s, but exit %d, signal %d, killed at \"%s\"\n",
                    kill_at, r.exit_code, r.signal, r.killed_at);
    } else if (r.exit_code != 0) {
        fprintf(stderr, "iaptk: the game failed: exit %d, signal %d\n", r.exit_code, r.signal);
    }
    return r;
}

/* ---- the check --------------------------------------------------------------- */

/* Reads the store's ledger (the game must not be running). 0 on success. */
static IAPTK_UNUSED int iaptk_read_ledger(iaptk_kit *kit, iaptk_ledger *l) {
    iap_bridge *b = NULL;
    char *a = NULL, *m;
    memset(l, 0, sizeof *l);
    int rc = iap_open(kit->config, &b);
    if (rc != IAP_OK) return rc;
    rc = iap_simulator(b, "{\"op\":\"transactions\"}", &a);
    if (rc == IAP_OK) iaptk__read_tx(a, l);
    iap_free(a);
    if (rc == IAP_OK && l->overflow) {
        fprintf(stderr, "iaptk: the store holds more than %d charges: define IAPTK_MAX_TX higher before including iap_testkit.h\n", IAPTK_MAX_TX);
        rc = IAP_E_INVALID_ARG;
    }
    iap_flush(b);
    while ((m = iap_poll(b)) != NULL) {
        if ((strncmp(m, "{\"type\":\"7\"", 11) == 0 || strncmp(m, "{\"type\":\"revoked\"", 17) == 0) && l->unconfirmed_count < 16)
            snprintf(l->unconfirmed[l->unconfirmed_count++], sizeof l->unconfirmed[0], "%.159s", m);
        iap_free(m);
    }
    iap_close(b);
    return rc;
}

/* Charged minus refunded of a product: what the player should own. */
static IAPTK_UNUSED int iaptk_net(const iaptk_ledger *l, const char *product_id) {
    int n = 0;
    for (int i = 0; i < l->count; i++)
        if (strcmp(l->tx[i].productID, product_id) == 0) n += l->tx[i].revoked ? 0 : 1;
    return n;
}

static int iaptk__side(const iaptk_ledger *l, const iaptk_record *r, size_t n, int refunds, FILE *out) {
    const char *what = refunds ? "taken back" : "granted";
    int problems = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            if (r[i].key == r[j].key) { fprintf(out, "  key %lld was %s more than once\n", (long long)r[i].key, what); problems++; }
    /* Per product: the store's count against the save's. */
    for (int i = 0; i < l->count; i++) {
        int first = 1;
        for (int k = 0; k < i; k++) if (strcmp(l->tx[k].productID, l->tx[i].productID) == 0) first = 0;
        if (!first) continue;
        int want = 0, have = 0;
        for (int k = 0; k < l->count; k++)
            if (strcmp(l->tx[k].productID, l->tx[i].productID) == 0 && (!refunds || l->tx[k].revoked)) want++;
        for (size_t k = 0; k < n; k++) if (r[k].productID && strcmp(r[k].productID, l->tx[i].productID) == 0) have++;
        if (want != have) {
            fprintf(out, "  %s: the store %s %d, the game's save has %d %s\n", l->tx[i].productID,
                    refunds ? "refunded" : "charged", want, have, what);
            problems++;
        }
    }
    for (size_t k = 0; k < n; k++) {
        int known = 0;
        for (int i = 0; i < l->count; i++) if (r[k].productID && strcmp(r[k].productID, l->tx[i].productID) == 0) known = 1;
        if (!known) { fprintf(out, "  key %lld (%s) was %s, but the store has no such charge\n", (long long)r[k].key, r[k].productID, what); problems++; }
    }
    /* Each transaction once, when every record names its transaction. */
    int all_ids = n > 0;
    for (size_t k = 0; k < n; k++) if (!r[k].transactionID || !r[k].transactionID[0]) all_ids = 0;
    if (all_ids)
        for (int i = 0; i < l->count; i++) {
            if (refunds && !l->tx[i].revoked) continue;
            int c = 0;
            for (size_t k = 0; k < n; k++) if (strcmp(r[k].transactionID, l->tx[i].transactionID) == 0) c++;
            if (c != 1) { fprintf(out, "  transaction %s (%s) was %s %d times\n", l->tx[i].transactionID, l->tx[i].productID, what, c); problems++; }
        }
    return problems;
}

/* Each charge granted exactly once in the game's save, each refund taken
 * back exactly once, no key twice, and nothing left unconfirmed. Prints
 * every problem to stderr; returns how many (0: all good). */
static IAPTK_UNUSED int iaptk_expect_granted_exactly_once(iaptk_kit *kit, const iaptk_record *grants, size_t ngrants,
                                                        const iaptk_record *takebacks, size_t ntakebacks) {
    static iaptk_ledger l;
    if (iaptk_read_ledger(kit, &l) != IAP_OK) { fprintf(stderr, "iaptk: could not read the store's ledger\n"); return 1; }
    int problems = iaptk__side(&l, grants, ngrants, 0, stderr) + iaptk__side(&l, takebacks, ntakebacks, 1, stderr);
    for (int i = 0; i < l.unconfirmed_count; i++) {
        fprintf(stderr, "  the game left a result unconfirmed (it comes again at every start): %s\n", l.unconfirmed[i]);
        problems++;
    }
    if (problems) fprintf(stderr, "iaptk: not granted exactly once (%d problems above)\n", problems);
    return problems;
}

#ifdef IAPTK_INTERCEPT
/* The game's code included after this header goes through the kit. */
#define iap_open iaptk_open
#define iap_poll iaptk_poll
#define iap_set_callback iaptk_set_callback
#define iap_confirm iaptk_confirm
#endif

#endif /* IAP_TESTKIT_H */
