/*
 * The C test harness: drives the real C ABI from C, as an engine does.
 * Built by the package (target iap-c-harness) and run by the Swift test
 * suite (CHarnessTests). Usage: iap-c-harness --catalog FILE --dir EMPTYDIR
 * Every message polled is appended to DIR/messages.jsonl so the Swift suite
 * can validate each against its JSON Schema. Ends with "N passed, M failed".
 */
#include "iap_bridge.h"
#include "iap_json_field.h"

#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int passed = 0, failed = 0;
static char g_dir[PATH_MAX], g_catalog[PATH_MAX], g_config[8192];
static FILE *g_log;

#define CHECK(cond, ...) do { \
    if (cond) { passed++; } else { failed++; \
        fprintf(stderr, "FAIL %s:%d: %s -- ", __FILE__, __LINE__, #cond); \
        fprintf(stderr, __VA_ARGS__); fprintf(stderr, " (errmsg: %s)\n", iap_errmsg()); } \
} while (0)

#define CHECK_RC(call, want) do { \
    int32_t rc_ = (call); \
    CHECK(rc_ == (want), "%s returned %s (%d), wanted %s", #call, iap_error_name(rc_), rc_, iap_error_name(want)); \
    if (rc_ != IAP_OK) CHECK(iap_errmsg()[0] != 0, "%s: iap_errmsg is empty after an error", #call); \
} while (0)


static char *expect_msg(iap_bridge *b, const char *type, const char *must_contain);

static void log_message(const char *m) {
    fprintf(g_log, "%s\n", m);
    fflush(g_log);
}


/* Drains everything for ~100 ms (a pass takes every message it sees): *n1
 * counts the "7" messages with key k1 (any "7" when k1 is NULL), *n2, unless
 * n2 is NULL, those with key k2. With k2, which every caller expects once,
 * it drains until that one came (5 s at most: valgrind, a slow runner) and
 * 100 ms more. */
static void count_two(iap_bridge *b, const char *k1, int *n1, const char *k2, int *n2) {
    *n1 = 0;
    if (n2) *n2 = 0;
    for (int i = 0, last = 20; i < last; i++) {
        if (n2 && *n2 == 0 && last < 1000) last = i + 20;
        char *m;
        while ((m = iap_poll(b)) != NULL) {
            log_message(m);
            char t[32] = "", k[32] = "";
            iap_json_field(m, "type", t, sizeof t);
            iap_json_field(m, "key", k, sizeof k);
            if (strcmp(t, "7") == 0 && (k1 == NULL || strcmp(k, k1) == 0)) (*n1)++;
            if (n2 && strcmp(t, "7") == 0 && strcmp(k, k2) == 0) (*n2)++;
            iap_free(m);
        }
        usleep(5000);
    }
}

/* The "7" messages with this key (or any when key is NULL), draining all. */
static int count_results(iap_bridge *b, const char *key) {
    int n = 0;
    count_two(b, key, &n, NULL, NULL);
    return n;
}

/* A wall clock's milliseconds (November 2023): clicks at WALL + n are their
 * own keys on a fresh dataDir (below 10^12 a click is an engine clock's). */
#define WALL INT64_C(1700000000000)

/* The wall clock in milliseconds: what a game passes as click_ms. */
static int64_t wall_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* "\"key\":\"<k>\"", as a message carries it (four buffers in turn). */
static const char *key_field(int64_t k) {
    static char bufs[4][48];
    static int next;
    char *b = bufs[next++ % 4];
    snprintf(b, sizeof bufs[0], "\"key\":\"%lld\"", (long long)k);
    return b;
}

static iap_bridge *open_with(const char *config) {
    iap_bridge *b = NULL;
    CHECK_RC(iap_open(config, &b), IAP_OK);
    CHECK(b != NULL, "iap_open gave no bridge");
    return b;
}

static iap_bridge *open_ok(void) { return open_with(g_config); }

static void test_open_errors(void) {
    iap_bridge *b = (iap_bridge *)0x1;
    char cfg[8192];
    CHECK_RC(iap_open(NULL, &b), IAP_E_NULL_ARG);
    CHECK(b == NULL, "out not cleared on error");
    CHECK_RC(iap_open(g_config, NULL), IAP_E_NULL_ARG);
    CHECK_RC(iap_open("", &b), IAP_E_BAD_JSON);
    CHECK_RC(iap_open("{", &b), IAP_E_BAD_JSON);
    CHECK_RC(iap_open("{\"store\":\"simulator\",\"dataDir\":\"/tmp/\xff\xfe\"}", &b), IAP_E_BAD_JSON);
    CHECK_RC(iap_open("[]", &b), IAP_E_BAD_CONFIG);
    snprintf(cfg, sizeof cfg, "{\"store\":\"simulator\",\"dataDir\":\"%s/d\",\"catalog\":\"%s\",\"colour\":1}", g_dir, g_catalog);
    CHECK_RC(iap_open(cfg, &b), IAP_E_BAD_CONFIG);
    CHECK(strstr(iap_errmsg(), "colour") != NULL, "errmsg should name the unknown key");
    snprintf(cfg, sizeof cfg, "{\"store\":\"simulator\",\"dataDir\":\"relative/dir\",\"catalog\":\"%s\"}", g_catalog);
    CHECK_RC(iap_open(cfg, &b), IAP_E_BAD_CONFIG);
    snprintf(cfg, sizeof cfg, "{\"store\":\"simulator\",\"dataDir\":\"%s/no/such/parent\",\"catalog\":\"%s\"}", g_dir, g_catalog);
    CHECK_RC(iap_open(cfg, &b), IAP_E_IO);
    snprintf(cfg, sizeof cfg, "{\"store\":\"simulator\",\"dataDir\":\"%s/d\",\"catalog\":\"%s/missing.storekit\"}", g_dir, g_dir);
    CHECK_RC(iap_open(cfg, &b), IAP_E_CATALOG);
    char bad[PATH_MAX];
    snprintf(bad, sizeof bad, "%s/bad.storekit", g_dir);
    FILE *f = fopen(bad, "w");
    fputs("{\"products\":[{\"productID\":\"x\",\"type\":\"Gadget\",\"displayPrice\":\"1\"}]}", f);
    fclose(f);
    snprintf(cfg, sizeof cfg, "{\"store\":\"simulator\",\"dataDir\":\"%s/d\",\"catalog\":\"%s\"}", g_dir, bad);
    CHECK_RC(iap_open(cfg, &b), IAP_E_CATALOG);
    snprintf(cfg, sizeof cfg, "{\"store\":\"storekit\",\"dataDir\":\"%s/d\"}", g_dir);
    CHECK_RC(iap_open(cfg, &b), IAP_E_NOT_SUPPORTED);
    CHECK(b == NULL, "out not cleared on error");
}

static void test_invalid_handles(void) {
    iap_bridge *garbage = (iap_bridge *)(uintptr_t)0x12345;
    int64_t key = 7;
    char *out = (char *)0x1;
    CHECK_RC(iap_close(NULL), IAP_E_INVALID_HANDLE);
    CHECK_RC(iap_close(garbage), IAP_E_INVALID_HANDLE);
    CHECK_RC(iap_request_products(NULL, "[]"), IAP_E_INVALID_HANDLE);
    CHECK_RC(iap_buy(garbage, "coins_100", 1, &key), IAP_E_INVALID_HANDLE);
    CHECK(key == 0, "out_key not cleared on error");
    CHECK_RC(iap_confirm(NULL, 1), IAP_E_INVALID_HANDLE);
    CHECK_RC(iap_restore(garbage), IAP_E_INVALID_HANDLE);
    CHECK_RC(iap_set_callback(NULL, NULL, NULL), IAP_E_INVALID_HANDLE);
    CHECK_RC(iap_simulator(garbage, "{\"op\":\"transactions\"}", &out), IAP_E_INVALID_HANDLE);
    CHECK(out == NULL, "out_json not cleared on error");
    CHECK_RC(iap_flush(NULL), IAP_E_INVALID_HANDLE);
    CHECK(iap_poll(NULL) == NULL, "poll(NULL) returned a message");
    CHECK(iap_poll(garbage) == NULL, "poll(garbage) returned a message");
    iap_free(NULL);
    CHECK(strcmp(iap_error_name(IAP_E_DUPLICATE_KEY), "IAP_E_DUPLICATE_KEY") == 0, "error name");
    CHECK(strcmp(iap_error_name(12345), "IAP_E_UNKNOWN_CODE") == 0, "unknown error name");
    CHECK(strcmp(iap_version(), IAP_VERSION_STRING) == 0, "version %s vs header %s", iap_version(), IAP_VERSION_STRING);
}

static void test_purchase_redelivery_confirm(void) {
    iap_bridge *b = open_ok();
    iap_bridge *second = NULL;
    CHECK_RC(iap_open(g_config, &second), IAP_E_BUSY);

    CHECK_RC(iap_request_products(b, "[\"coins_100\",\"remove_ads\",\"nope\"]"), IAP_OK);
    char *m = expect_msg(b, "999", NULL);
    CHECK(m != NULL, "no 999");
    if (m) {
        CHECK(strstr(m, "\"invalid\":[\"nope\"]") != NULL, "unknown ID not reported invalid: %s", m);
        CHECK(strstr(m, "\"coins_100\":\"0.99\"") != NULL, "price of coins_100 missing: %s", m);
        free(m);
    }
    CHECK_RC(iap_request_products(b, NULL), IAP_E_NULL_ARG);
    CHECK_RC(iap_request_products(b, "not json"), IAP_E_BAD_JSON);
    CHECK_RC(iap_request_products(b, "[1,2]"), IAP_E_BAD_JSON);
    CHECK_RC(iap_request_products(b, "{\"a\":1}"), IAP_E_BAD_JSON);
    CHECK_RC(iap_request_products(b, "[\"\"]"), IAP_E_INVALID_ARG);

    /* A wall-clock click above every key handed out is its own key. */
    int64_t click = wall_ms(), key = 0;
    char ck[32];
    snprintf(ck, sizeof ck, "%lld", (long long)click);
    CHECK_RC(iap_buy(b, "coins_100", click, &key), IAP_OK);
    CHECK(key == click, "key %lld for the click %lld", (long long)key, (long long)click);
    m = expect_msg(b, "7", NULL);
    CHECK(m != NULL, "no 7 after buy");
    if (m) {
        char k[32], r[8], t[64];
        iap_json_field(m, "key", k, sizeof k); iap_json_field(m, "result", r, sizeof r); iap_json_field(m, "transactionID", t, sizeof t);
        CHECK(strcmp(k, ck) == 0 && strcmp(r, "0") == 0 && t[0], "bad 7: %s", m);
        free(m);
    }
    /* C7: the same click key again gets a fresh key (reported in out_key). */
    CHECK_RC(iap_buy(b, "coins_100", click, &key), IAP_OK);
    CHECK(key > click, "a used click key was handed out again: %lld", (long long)key);
    /* An engine clock's click (milliseconds since launch) is no key: the
     * next install would click it again, and a save that outlived this one
     * would take the purchase for one it granted. A key past the clock. */
    int64_t engine_key = 0;
    CHECK_RC(iap_buy(b, "coins_100", 1000, &engine_key), IAP_OK);
    CHECK(engine_key > key && engine_key >= click, "engine-clock click 1000 became key %lld", (long long)engine_key);
    /* An SDK-chosen key. */
    int64_t auto_key = 0;
    CHECK_RC(iap_buy(b, "remove_ads", 0, &auto_key), IAP_OK);
    CHECK(auto_key > engine_key, "auto key %lld", (long long)auto_key);
    CHECK_RC(iap_buy(b, "coins_100", -5, NULL), IAP_OK);  /* out_key may be NULL */
    /* Bad purchases store nothing. */
    CHECK_RC(iap_buy(b, "sword_of_nothing", 2000, &key), IAP_E_UNKNOWN_PRODUCT);
    CHECK_RC(iap_buy(b, NULL, 2001, &key), IAP_E_NULL_ARG);
    CHECK_RC(iap_buy(b, "", 2002, &key), IAP_E_INVALID_ARG);
    CHECK_RC(iap_buy(b, "coins\xff", 2003, &key), IAP_E_INVALID_ARG);
    /* A click no clock reaches (2^61 and above) is refused: a key the outbox
     * could not remember would come back at every launch (issue 21). */
    key = 7;
    CHECK_RC(iap_buy(b, "coins_100", INT64_MAX, &key), IAP_E_INVALID_ARG);
    CHECK(key == 0 && strncmp(iap_errmsg(), "iap_buy: ", 9) == 0, "key %lld, \"%s\"", (long long)key, iap_errmsg());
    CHECK_RC(iap_buy(b, "coins_100", INT64_C(1) << 61, &key), IAP_E_INVALID_ARG);
    char *huge = malloc(1 << 20);
    memset(huge, 'a', (1 << 20) - 1);
    huge[(1 << 20) - 1] = 0;
    CHECK_RC(iap_buy(b, huge, 2004, &key), IAP_E_INVALID_ARG);
    CHECK_RC(iap_request_products(b, huge), IAP_E_INVALID_ARG);
    free(huge);
    CHECK_RC(iap_confirm(b, 424242), IAP_E_UNKNOWN_KEY);
    count_results(b, NULL);
    /* "Crash": close without confirming. */
    CHECK_RC(iap_close(b), IAP_OK);

    b = open_ok();
    char ak[32];
    snprintf(ak, sizeof ak, "%lld", (long long)auto_key);
    int n_click = 0, n_auto = 0;
    count_two(b, ck, &n_click, ak, &n_auto);
    CHECK(n_click == 1, "key %s re-delivered %d times after reopen, not once", ck, n_click);
    CHECK(n_auto == 1, "the unconfirmed SDK key %s re-delivered %d times after reopen, not once", ak, n_auto);
    CHECK_RC(iap_confirm(b, click), IAP_OK);
    CHECK_RC(iap_confirm(b, click), IAP_E_UNKNOWN_KEY);
    CHECK_RC(iap_flush(b), IAP_OK);
    char *tx = NULL;
    CHECK_RC(iap_simulator(b, "{\"op\":\"transactions\"}", &tx), IAP_OK);
    CHECK(tx && strstr(tx, "\"finished\":true") != NULL, "confirmed transaction not finished: %s", tx ? tx : "(null)");
    iap_free(tx);
    CHECK_RC(iap_close(b), IAP_OK);

    b = open_ok();
    count_two(b, ck, &n_click, ak, &n_auto);
    CHECK(n_click == 0, "key %s delivered again after its confirm", ck);
    CHECK(n_auto == 1, "the unconfirmed SDK key %s re-delivered %d times at the third open, not once", ak, n_auto);
    CHECK_RC(iap_close(b), IAP_OK);
}

static void test_confirm_all_then_nothing(void) {
    iap_bridge *b = open_ok();
    /* Collect every waiting key and confirm it. */
    for (int i = 0; i < 40; i++) {
        char *m;
        while ((m = iap_poll(b)) != NULL) {
            log_message(m);
            char t[32] = "", k[32] = "";
            iap_json_field(m, "type", t, sizeof t);
            iap_json_field(m, "key", k, sizeof k);
            if (strcmp(t, "7") == 0) CHECK_RC(iap_confirm(b, strtoll(k, NULL, 10)), IAP_OK);
            iap_free(m);
        }
        usleep(5000);
    }
    CHECK_RC(iap_close(b), IAP_OK);
    b = open_ok();
    CHECK(count_results(b, NULL) == 0, "results delivered after everything was confirmed");
    /* After close: every entry point says CLOSED. */
    CHECK_RC(iap_close(b), IAP_OK);
    CHECK_RC(iap_close(b), IAP_E_CLOSED);
    CHECK_RC(iap_buy(b, "coins_100", 5, NULL), IAP_E_CLOSED);
    CHECK_RC(iap_confirm(b, 5), IAP_E_CLOSED);
    CHECK_RC(iap_request_products(b, "[]"), IAP_E_CLOSED);
    CHECK_RC(iap_restore(b), IAP_E_CLOSED);
    CHECK_RC(iap_set_callback(b, NULL, NULL), IAP_E_CLOSED);
    CHECK_RC(iap_flush(b), IAP_E_CLOSED);
    char *out = NULL;
    CHECK_RC(iap_simulator(b, "{\"op\":\"transactions\"}", &out), IAP_E_CLOSED);
    CHECK(iap_poll(b) == NULL, "poll after close returned a message");
}

/* ---- callbacks ---- */
struct cb_state {
    pthread_mutex_t mu;
    pthread_t main_thread;
    int results, other_thread, confirmed;
    iap_bridge *b;
};

static void on_message(void *ctx, const char *json) {
    struct cb_state *s = ctx;
    char t[32] = "", k[32] = "";
    iap_json_field(json, "type", t, sizeof t);
    iap_json_field(json, "key", k, sizeof k);
    pthread_mutex_lock(&s->mu);
    log_message(json);
    if (strcmp(t, "7") == 0) {
        s->results++;
        if (!pthread_equal(pthread_self(), s->main_thread)) s->other_thread++;
        /* Calling back into the SDK from the callback is allowed. */
        if (iap_confirm(s->b, strtoll(k, NULL, 10)) == IAP_OK) s->confirmed++;
    }
    pthread_mutex_unlock(&s->mu);
}

static void test_callback(void) {
    iap_bridge *b = open_ok();
    count_results(b, NULL);
    struct cb_state s = {PTHREAD_MUTEX_INITIALIZER, pthread_self(), 0, 0, 0, b};
    CHECK_RC(iap_set_callback(b, on_message, &s), IAP_OK);
    for (int i = 0; i < 5; i++) CHECK_RC(iap_buy(b, "coins_100", 5000 + i, NULL), IAP_OK);
    /* While a callback is set, messages go to it; this thread only waits. */
    for (int i = 0; i < 400; i++) {
        pthread_mutex_lock(&s.mu);
        int done = s.results >= 5;
        pthread_mutex_unlock(&s.mu);
        if (done) break;
        usleep(5000);
    }
    pthread_mutex_lock(&s.mu);
    CHECK(s.results == 5, "callback results %d of 5", s.results);
    CHECK(s.other_thread == s.results, "callbacks on the caller's thread: %d of %d", s.results - s.other_thread, s.results);
    CHECK(s.confirmed == s.results, "confirm from callback: %d of %d", s.confirmed, s.results);
    pthread_mutex_unlock(&s.mu);
    CHECK_RC(iap_set_callback(b, NULL, NULL), IAP_OK);
    CHECK_RC(iap_close(b), IAP_OK);
    b = open_ok();
    CHECK(count_results(b, NULL) == 0, "callback-confirmed results delivered again");
    CHECK_RC(iap_close(b), IAP_OK);
}

static void test_simulator_ops(void) {
    iap_bridge *b = open_ok();
    count_results(b, NULL);
    char *out = (char *)0x1;
    CHECK_RC(iap_simulator(b, NULL, &out), IAP_E_NULL_ARG);
    CHECK(out == NULL, "out_json not cleared");
    CHECK_RC(iap_simulator(b, "{\"op\":\"transactions\"}", NULL), IAP_E_NULL_ARG);
    CHECK_RC(iap_simulator(b, "{\"op\":\"teleport\"}", &out), IAP_E_UNKNOWN_OP);
    CHECK_RC(iap_simulator(b, "{\"nop\":1}", &out), IAP_E_BAD_JSON);
    CHECK_RC(iap_simulator(b, "{\"op\":\"fail_next\",\"error\":\"gremlins\"}", &out), IAP_E_INVALID_ARG);
    CHECK_RC(iap_simulator(b, "{\"op\":\"refund\",\"transactionID\":\"999999\"}", &out), IAP_E_NOT_FOUND);

    CHECK_RC(iap_simulator(b, "{\"op\":\"cancel_next\"}", &out), IAP_OK);
    CHECK(out && strcmp(out, "{\"ok\":true}") == 0, "answer %s", out ? out : "(null)");
    iap_free(out);
    /* Click 7000 is below the keys this dataDir handed out already (C7): the
     * SDK uses the next fresh key and says which in out_key. */
    int64_t k7000 = 0, k7001 = 0;
    char ks[64];
    CHECK_RC(iap_buy(b, "coins_100", 7000, &k7000), IAP_OK);
    CHECK(k7000 > 7000, "a click key below the last one handed out was used as it is: %lld", (long long)k7000);
    snprintf(ks, sizeof ks, "\"key\":\"%lld\"", (long long)k7000);
    char *m = expect_msg(b, "7", NULL);
    CHECK(m && strstr(m, "\"result\":\"1\"") && strstr(m, ks), "cancel result: %s", m ? m : "(null)");
    free(m);
    CHECK_RC(iap_confirm(b, k7000), IAP_OK);

    CHECK_RC(iap_simulator(b, "{\"op\":\"fail_next\",\"error\":\"networkError\"}", &out), IAP_OK);
    iap_free(out);
    CHECK_RC(iap_buy(b, "coins_100", 7001, &k7001), IAP_OK);
    CHECK(k7001 > k7000, "keys only grow: %lld after %lld", (long long)k7001, (long long)k7000);
    m = expect_msg(b, "7", NULL);
    CHECK(m && strstr(m, "\"result\":\"3\""), "network failure result: %s", m ? m : "(null)");
    free(m);
    CHECK_RC(iap_confirm(b, k7001), IAP_OK);
    /* Failures charged nothing. */
    CHECK_RC(iap_simulator(b, "{\"op\":\"transactions\"}", &out), IAP_OK);
    int n = 0;
    for (const char *p = out; (p = strstr(p, "\"transactionID\"")) != NULL; p++) n++;
    iap_free(out);
    CHECK_RC(iap_close(b), IAP_OK);
    /* Every transaction so far was confirmed and finished. */
    b = open_ok();
    CHECK_RC(iap_simulator(b, "{\"op\":\"transactions\"}", &out), IAP_OK);
    CHECK(out && strstr(out, "\"finished\":false") == NULL, "unfinished transaction left: %s", out ? out : "(null)");
    iap_free(out);
    CHECK(n >= 4, "transactions so far: %d", n);
    CHECK_RC(iap_close(b), IAP_OK);
}


/* ---- issue 4: the store lifecycle from C, across restarts ---- */
static char g_config_lc[8192];

static iap_bridge *open_lc(void) {
    iap_bridge *b = NULL;
    CHECK_RC(iap_open(g_config_lc, &b), IAP_OK);
    return b;
}

static void sim(iap_bridge *b, const char *cmd, char *answer, size_t size) {
    char *out = NULL;
    CHECK_RC(iap_simulator(b, cmd, &out), IAP_OK);
    if (answer) snprintf(answer, size, "%s", out ? out : "");
    iap_free(out);
}

/* Waits for a message of `type` whose fields match; returns a copy or NULL. */
static char *expect_msg(iap_bridge *b, const char *type, const char *must_contain) {
    for (int i = 0; i < 200; i++) {
        char *m;
        while ((m = iap_poll(b)) != NULL) {
            log_message(m);
            char t[32] = "";
            iap_json_field(m, "type", t, sizeof t);
            if (strcmp(t, type) == 0 && (!must_contain || strstr(m, must_contain))) {
                char *copy = strdup(m);
                iap_free(m);
                return copy;
            }
            iap_free(m);
        }
        usleep(5000);
    }
    return NULL;
}

static void confirm_msg(iap_bridge *b, const char *m) {
    char k[32] = "";
    iap_json_field(m, "key", k, sizeof k);
    CHECK_RC(iap_confirm(b, strtoll(k, NULL, 10)), IAP_OK);
}

static void test_lifecycle(void) {
    char answer[8192], id[32], cmd[256], txn_ads[64] = "";
    int64_t k_approved = 0, k_declined = 0, k_interrupted = 0, k_vip = 0;
    iap_bridge *b = open_lc();

    /* Ask to Buy, approved after a restart: success with the original key. */
    sim(b, "{\"op\":\"ask_to_buy\",\"enabled\":true}", NULL, 0);
    CHECK_RC(iap_buy(b, "remove_ads", 0, &k_approved), IAP_OK);
    char *m = expect_msg(b, "pending", key_field(k_approved));
    CHECK(m != NULL, "no pending message for Ask to Buy");
    free(m);
    CHECK_RC(iap_close(b), IAP_OK);
    b = open_lc();
    sim(b, "{\"op\":\"pending\"}", answer, sizeof answer);
    CHECK(iap_json_field(answer, "id", id, sizeof id), "pending list: %s", answer);
    snprintf(cmd, sizeof cmd, "{\"op\":\"approve\",\"id\":\"%s\"}", id);
    sim(b, cmd, NULL, 0);
    m = expect_msg(b, "7", key_field(k_approved));
    CHECK(m && strstr(m, "\"result\":\"0\"") && strstr(m, "\"origin\":\"game\""), "approved result: %s", m ? m : "(null)");
    if (m) { iap_json_field(m, "transactionID", txn_ads, sizeof txn_ads); confirm_msg(b, m); free(m); }

    /* Ask to Buy declined: a "7" with result "2" and the original key. */
    CHECK_RC(iap_buy(b, "coins_100", 0, &k_declined), IAP_OK);
    free(expect_msg(b, "pending", key_field(k_declined)));
    sim(b, "{\"op\":\"pending\"}", answer, sizeof answer);
    iap_json_field(answer, "id", id, sizeof id);
    snprintf(cmd, sizeof cmd, "{\"op\":\"decline\",\"id\":\"%s\"}", id);
    sim(b, cmd, NULL, 0);
    m = expect_msg(b, "7", key_field(k_declined));
    CHECK(m && strstr(m, "\"result\":\"2\""), "declined result: %s", m ? m : "(null)");
    if (m) { confirm_msg(b, m); free(m); }
    sim(b, "{\"op\":\"ask_to_buy\",\"enabled\":false}", NULL, 0);

    /* Interrupted: a "pending" (no result yet, nothing to confirm); after a
     * restart it completes: the key's one result. */
    sim(b, "{\"op\":\"interrupt_next\"}", NULL, 0);
    CHECK_RC(iap_buy(b, "coins_100", 0, &k_interrupted), IAP_OK);
    m = expect_msg(b, "pending", key_field(k_interrupted));
    CHECK(m && strstr(m, "\"reason\":\"interrupted\""), "interrupted: %s", m ? m : "(null)");
    free(m);
    CHECK_RC(iap_confirm(b, k_interrupted), IAP_E_NOT_DELIVERED);
    CHECK_RC(iap_close(b), IAP_OK);
    b = open_lc();
    sim(b, "{\"op\":\"pending\"}", answer, sizeof answer);
    CHECK(iap_json_field(answer, "id", id, sizeof id) && strstr(answer, "interrupted"), "pending: %s", answer);
    snprintf(cmd, sizeof cmd, "{\"op\":\"resolve\",\"id\":\"%s\"}", id);
    sim(b, cmd, NULL, 0);
    m = expect_msg(b, "7", key_field(k_interrupted));
    CHECK(m && strstr(m, "\"result\":\"0\""), "resolved result: %s", m ? m : "(null)");
    if (m) { confirm_msg(b, m); free(m); }

    /* A subscription renews (store-initiated, negative key), then expires. */
    CHECK_RC(iap_buy(b, "vip_monthly", 0, &k_vip), IAP_OK);
    m = expect_msg(b, "7", key_field(k_vip));
    CHECK(m && strstr(m, "\"expiresDate\":1"), "subscription result: %s", m ? m : "(null)");
    if (m) { confirm_msg(b, m); free(m); }
    sim(b, "{\"op\":\"advance\",\"seconds\":2764800}", NULL, 0);
    m = expect_msg(b, "7", "\"origin\":\"store\"");
    CHECK(m && strstr(m, "\"key\":\"-") && strstr(m, "vip_monthly"), "renewal: %s", m ? m : "(null)");
    if (m) { confirm_msg(b, m); free(m); }
    sim(b, "{\"op\":\"auto_renew\",\"productID\":\"vip_monthly\",\"enabled\":false}", NULL, 0);
    sim(b, "{\"op\":\"advance\",\"seconds\":3456000}", NULL, 0);
    /* The renewal changed the entitlements first; the last change drops VIP. */
    char *last = NULL;
    while ((m = expect_msg(b, "entitlements", "\"reason\":\"change\"")) != NULL) { free(last); last = m; }
    CHECK(last && !strstr(last, "vip_monthly"), "VIP not expired: %s", last ? last : "(null)");
    free(last);

    /* A refund: "revoked", kept until confirmed, not delivered after. */
    snprintf(cmd, sizeof cmd, "{\"op\":\"refund\",\"transactionID\":\"%s\"}", txn_ads);
    sim(b, cmd, NULL, 0);
    m = expect_msg(b, "revoked", txn_ads);
    CHECK(m != NULL, "no revoked message for %s", txn_ads);
    CHECK_RC(iap_close(b), IAP_OK);
    free(m);
    b = open_lc();
    m = expect_msg(b, "revoked", txn_ads);
    CHECK(m != NULL, "revoked not redelivered before confirm");
    if (m) { confirm_msg(b, m); free(m); }
    CHECK_RC(iap_close(b), IAP_OK);
    b = open_lc();
    m = expect_msg(b, "revoked", NULL);
    CHECK(m == NULL, "revoked delivered after confirm: %s", m ? m : "");
    free(m);

    /* Store-initiated and forged transactions. */
    sim(b, "{\"op\":\"external_purchase\",\"productID\":\"coins_100\"}", NULL, 0);
    m = expect_msg(b, "7", "\"origin\":\"store\"");
    CHECK(m && strstr(m, "\"result\":\"0\"") && strstr(m, "\"key\":\"-"), "external purchase: %s", m ? m : "(null)");
    if (m) { confirm_msg(b, m); free(m); }
    sim(b, "{\"op\":\"forge\",\"productID\":\"coins_100\"}", NULL, 0);
    m = expect_msg(b, "7", "\"resultName\":\"unverified\"");
    CHECK(m && strstr(m, "\"result\":\"6\""), "forged: %s", m ? m : "(null)");
    if (m) { confirm_msg(b, m); free(m); }

    /* Restore: entitlements with reason "restore". */
    CHECK_RC(iap_restore(b), IAP_OK);
    m = expect_msg(b, "entitlements", "\"reason\":\"restore\"");
    CHECK(m != NULL, "no entitlements after restore");
    free(m);
    CHECK_RC(iap_close(b), IAP_OK);
}

static int count_substr(const char *s, const char *sub) {
    int n = 0;
    for (const char *p = s; (p = strstr(p, sub)) != NULL; p += strlen(sub)) n++;
    return n;
}

/* Owned products, non-renewing terms and a subscription upgrade, from C. */
static void test_ownership(void) {
    char cfg[8192], answer[16384];
    snprintf(cfg, sizeof cfg,
             "{\"store\":\"simulator\",\"dataDir\":\"%s/own-data\",\"catalog\":\"%s\",\"simulator\":{\"stateDir\":\"%s/own-appstore\",\"tickMs\":0},"
             "\"nonRenewingTerms\":{\"season_pass\":\"P1M\"}}", g_dir, g_catalog, g_dir);
    iap_bridge *b = NULL;
    CHECK_RC(iap_open(cfg, &b), IAP_OK);
    CHECK_RC(iap_buy(b, "remove_ads", WALL + 9101, NULL), IAP_OK);
    char *m = expect_msg(b, "7", key_field(WALL + 9101));
    CHECK(m && strstr(m, "\"alreadyOwned\":false"), "first purchase: %s", m ? m : "(null)");
    if (m) { confirm_msg(b, m); free(m); }
    CHECK_RC(iap_close(b), IAP_OK);
    CHECK_RC(iap_open(cfg, &b), IAP_OK);
    CHECK_RC(iap_buy(b, "remove_ads", WALL + 9102, NULL), IAP_OK);
    m = expect_msg(b, "7", key_field(WALL + 9102));
    CHECK(m && strstr(m, "\"alreadyOwned\":true") && strstr(m, "\"result\":\"0\""), "owned purchase: %s", m ? m : "(null)");
    if (m) { confirm_msg(b, m); free(m); }
    sim(b, "{\"op\":\"transactions\"}", answer, sizeof answer);
    CHECK(count_substr(answer, "remove_ads") == 1, "owned product charged twice: %s", answer);

    /* Non-renewing: bought twice, two transactions, each with an end date. */
    CHECK_RC(iap_buy(b, "season_pass", WALL + 9103, NULL), IAP_OK);
    CHECK_RC(iap_buy(b, "season_pass", WALL + 9104, NULL), IAP_OK);
    for (int64_t k = WALL + 9103; k <= WALL + 9104; k++) {
        m = expect_msg(b, "7", key_field(k));
        CHECK(m && strstr(m, "\"alreadyOwned\":false") && strstr(m, "\"expiresDate\":1"), "season pass: %s", m ? m : "(null)");
        if (m) { confirm_msg(b, m); free(m); }
    }
    sim(b, "{\"op\":\"transactions\"}", answer, sizeof answer);
    CHECK(count_substr(answer, "season_pass") == 2, "season pass purchases: %s", answer);

    /* Upgrade in a subscription group: at once, same original ID. */
    CHECK_RC(iap_buy(b, "vip_monthly", WALL + 9105, NULL), IAP_OK);
    m = expect_msg(b, "7", key_field(WALL + 9105));
    char orig[64] = "";
    if (m) { iap_json_field(m, "originalTransactionID", orig, sizeof orig); confirm_msg(b, m); free(m); }
    CHECK_RC(iap_buy(b, "vip_yearly", WALL + 9106, NULL), IAP_OK);
    m = expect_msg(b, "7", key_field(WALL + 9106));
    CHECK(m && strstr(m, "vip_yearly") && orig[0] && strstr(m, orig), "upgrade: %s (original %s)", m ? m : "(null)", orig);
    if (m) { confirm_msg(b, m); free(m); }
    CHECK_RC(iap_restore(b), IAP_OK);
    m = expect_msg(b, "entitlements", "\"reason\":\"restore\"");
    CHECK(m && strstr(m, "vip_yearly") && !strstr(m, "vip_monthly") && strstr(m, "remove_ads") && strstr(m, "season_pass"),
          "entitlements after upgrade: %s", m ? m : "(null)");
    free(m);
    CHECK_RC(iap_close(b), IAP_OK);
}

/* The game blocks SIGUSR2 everywhere and takes it with sigtimedwait (a game
 * that reads SIGTERM from a signalfd does the same): a bridge's threads must
 * keep it blocked, else the signal's default action ends the game. The
 * callback thread still unblocks what managed runtimes stop threads with. */
struct mask_seen { pthread_mutex_t mu; int seen, usr2_blocked, xcpu_blocked; };

static void on_mask(void *ctx, const char *json) {
    (void)json;
    struct mask_seen *s = ctx;
    sigset_t now;
    pthread_sigmask(SIG_BLOCK, NULL, &now);
    pthread_mutex_lock(&s->mu);
    if (!s->seen) { s->usr2_blocked = sigismember(&now, SIGUSR2); s->xcpu_blocked = sigismember(&now, SIGXCPU); }
    s->seen = 1;
    pthread_mutex_unlock(&s->mu);
}

/* A dataDir of their own for the tests below: their purchases stay out of
 * the others' counts. */
static char g_config_x[8192];

static iap_bridge *open_x(void) { return open_with(g_config_x); }

static void test_signal_mask(void) {
    sigset_t usr2, before;
    sigemptyset(&usr2);
    sigaddset(&usr2, SIGUSR2);
    pthread_sigmask(SIG_BLOCK, &usr2, &before);
    iap_bridge *b = open_x();
    struct mask_seen s = {PTHREAD_MUTEX_INITIALIZER, 0, 0, 0};
    CHECK_RC(iap_set_callback(b, on_mask, &s), IAP_OK);
    CHECK_RC(iap_buy(b, "coins_100", 0, NULL), IAP_OK);
    for (int i = 0; i < 400; i++) {
        pthread_mutex_lock(&s.mu);
        int seen = s.seen;
        pthread_mutex_unlock(&s.mu);
        if (seen) break;
        usleep(5000);
    }
    CHECK(s.seen && s.usr2_blocked == 1, "the callback thread unblocked a signal the opener blocked (seen %d)", s.seen);
    CHECK(s.seen && s.xcpu_blocked == 0, "the callback thread blocks SIGXCPU (a runtime's GC signal)");
    /* Sent to the process: only a thread that does not block it can take
     * it; with the bridge's threads keeping the mask, it waits for us. */
    kill(getpid(), SIGUSR2);
    struct timespec two = {2, 0};
    CHECK(sigtimedwait(&usr2, NULL, &two) == SIGUSR2, "SIGUSR2 did not reach the thread that waits for it");
    CHECK_RC(iap_set_callback(b, NULL, NULL), IAP_OK);
    count_results(b, NULL);
    CHECK_RC(iap_close(b), IAP_OK);
    pthread_sigmask(SIG_SETMASK, &before, NULL);
}

/* A helper process forked without exec while a bridge is open (a local
 * server, a worker) must not keep dataDir locked: the parent closes and
 * opens again while the child still lives. */
static void test_fork_keeps_no_lock(void) {
    iap_bridge *b = open_x();
    pid_t child = fork();
    if (child == 0) {  /* calls nothing of the SDK (the header's FORK rule) */
        sleep(5);
        _exit(0);
    }
    CHECK(child > 0, "fork failed");
    CHECK_RC(iap_close(b), IAP_OK);
    b = NULL;
    CHECK_RC(iap_open(g_config_x, &b), IAP_OK);
    if (b) CHECK_RC(iap_close(b), IAP_OK);
    if (child > 0) {
        kill(child, SIGKILL);
        waitpid(child, NULL, 0);
    }
}

/* Two closers of one bridge (a callback and the main thread, an engine's
 * unload hook and the game): whichever returns second, the bridge is closed
 * by then and dataDir opens again at once. */
static void *close_it(void *b) { return (void *)(intptr_t)iap_close(b); }

static void test_second_close_waits(void) {
    int reopened = 0, rounds = 30;
    for (int i = 0; i < rounds; i++) {
        iap_bridge *b = open_x();
        if (!b) return;
        CHECK_RC(iap_buy(b, "coins_100", 0, NULL), IAP_OK);  /* something for the close to do */
        pthread_t t;
        pthread_create(&t, NULL, close_it, b);
        usleep((useconds_t)(i % 5) * 50);
        int32_t rc = iap_close(b);
        CHECK(rc == IAP_OK || rc == IAP_E_CLOSED, "second close: %s", iap_error_name(rc));
        iap_bridge *again = NULL;
        int32_t rc2 = iap_open(g_config_x, &again);
        CHECK(rc2 == IAP_OK, "round %d: open right after a close returned: %s: %s", i, iap_error_name(rc2), iap_errmsg());
        if (rc2 == IAP_OK) reopened++;
        void *r;
        pthread_join(t, &r);
        if (again) {
            count_results(again, NULL);
            CHECK_RC(iap_close(again), IAP_OK);
        }
    }
    CHECK(reopened == rounds, "reopened %d of %d", reopened, rounds);
}

int main(int argc, char **argv) {
    for (int i = 1; i + 1 < argc; i++) {
        if (strcmp(argv[i], "--catalog") == 0) snprintf(g_catalog, sizeof g_catalog, "%s", argv[++i]);
        else if (strcmp(argv[i], "--dir") == 0) snprintf(g_dir, sizeof g_dir, "%s", argv[++i]);
    }
    if (!g_catalog[0] || !g_dir[0]) {
        fprintf(stderr, "usage: iap-c-harness --catalog FILE.storekit --dir EMPTYDIR\n");
        return 2;
    }
    mkdir(g_dir, 0700);
    char logpath[PATH_MAX + 32];
    snprintf(logpath, sizeof logpath, "%s/messages.jsonl", g_dir);
    g_log = fopen(logpath, "w");
    if (!g_log) { perror("messages.jsonl"); return 2; }
    snprintf(g_config, sizeof g_config,
             "{\"store\":\"simulator\",\"dataDir\":\"%s/data\",\"catalog\":\"%s\",\"simulator\":{\"stateDir\":\"%s/appstore\"}}",
             g_dir, g_catalog, g_dir);

    test_open_errors();
    test_invalid_handles();
    test_purchase_redelivery_confirm();
    test_confirm_all_then_nothing();
    test_callback();
    snprintf(g_config_x, sizeof g_config_x,
             "{\"store\":\"simulator\",\"dataDir\":\"%s/x-data\",\"catalog\":\"%s\",\"simulator\":{\"stateDir\":\"%s/x-appstore\",\"durable\":false}}",
             g_dir, g_catalog, g_dir);
    test_signal_mask();
    test_fork_keeps_no_lock();
    test_second_close_waits();
    test_simulator_ops();
    snprintf(g_config_lc, sizeof g_config_lc,
             "{\"store\":\"simulator\",\"dataDir\":\"%s/lc-data\",\"catalog\":\"%s\",\"simulator\":{\"stateDir\":\"%s/lc-appstore\",\"tickMs\":0}}",
             g_dir, g_catalog, g_dir);
    test_lifecycle();
    test_ownership();

    fclose(g_log);
    printf("c-harness: %d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
