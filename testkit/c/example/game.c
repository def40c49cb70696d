/*
 * A tiny game's purchase code in C, the way a game writes it (docs/TESTKIT.md):
 * grant, save, then confirm; ignore a key already in the save; take refunds
 * back. It calls iap_open / iap_poll / iap_confirm as any game does;
 * test_game.c includes it after iap_testkit.h with IAPTK_INTERCEPT, so the
 * test kit can kill it at a chosen point. game_bug_no_dedup plants a bug (a key
 * delivered again is granted again) the kit's check must catch.
 * game_use_callback takes the messages through iap_set_callback instead of
 * iap_poll: the callback, on the SDK's thread, handles each one.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "iap_bridge.h"

#ifndef IAPTK_INTERCEPT
#define iaptk_checkpoint(name) ((void)0)
#endif

#define GAME_MAX 64

typedef struct { int64_t key; char productID[64], transactionID[32]; } game_record;

typedef struct {
    long coins;
    int remove_ads, vip;
    game_record grants[GAME_MAX], takebacks[GAME_MAX];
    int ngrants, ntakebacks;
} game_save;

static int game_bug_no_dedup;
static int game_use_callback;

static void game_load(const char *path, game_save *s) {
    char what[16];
    memset(s, 0, sizeof *s);
    FILE *f = fopen(path, "r");
    if (!f) return;
    while (fscanf(f, "%15s", what) == 1) {
        if (strcmp(what, "coins") == 0) { if (fscanf(f, "%ld", &s->coins) != 1) break; }
        else if (strcmp(what, "remove_ads") == 0) { if (fscanf(f, "%d", &s->remove_ads) != 1) break; }
        else if (strcmp(what, "vip") == 0) { if (fscanf(f, "%d", &s->vip) != 1) break; }
        else {
            game_record *r = strcmp(what, "grant") == 0 ? &s->grants[s->ngrants++] : &s->takebacks[s->ntakebacks++];
            long long key;
            if (fscanf(f, "%lld %63s %31s", &key, r->productID, r->transactionID) != 3) break;
            r->key = key;
        }
    }
    fclose(f);
}

/* A new file, synced, renamed over the old one. */
static void game_write(const char *path, const game_save *s) {
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) { perror("game: save"); exit(1); }
    fprintf(f, "coins %ld\nremove_ads %d\nvip %d\n", s->coins, s->remove_ads, s->vip);
    for (int i = 0; i < s->ngrants; i++)
        fprintf(f, "grant %lld %s %s\n", (long long)s->grants[i].key, s->grants[i].productID, s->grants[i].transactionID);
    for (int i = 0; i < s->ntakebacks; i++)
        fprintf(f, "takeback %lld %s %s\n", (long long)s->takebacks[i].key, s->takebacks[i].productID, s->takebacks[i].transactionID);
    fflush(f);
    fsync(fileno(f));
    fclose(f);
    rename(tmp, path);
}

static int game_has(const game_save *s, int64_t key) {
    for (int i = 0; i < s->ngrants; i++) if (s->grants[i].key == key) return 1;
    for (int i = 0; i < s->ntakebacks; i++) if (s->takebacks[i].key == key) return 1;
    return 0;
}

/* The string value of "name" in a message (flat fields only), into out. */
static void game_field(const char *m, const char *name, char *out, size_t len) {
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":\"", name);
    const char *p = strstr(m, pat);
    out[0] = 0;
    if (!p) return;
    p += strlen(pat);
    const char *q = strchr(p, '"');
    if (q && (size_t)(q - p) < len) { memcpy(out, p, (size_t)(q - p)); out[q - p] = 0; }
}

static void game_handle(iap_bridge *b, const char *path, game_save *s, const char *m) {
    char type[16], key[32], product[64], result[8], tid[32];
    game_field(m, "type", type, sizeof type);
    if (strcmp(type, "entitlements") == 0) { /* VIP follows what the player owns */
        int vip = strstr(m, "\"productID\":\"vip_") != NULL;
        if (vip != s->vip) { s->vip = vip; game_write(path, s); }
    }
    if (strcmp(type, "7") != 0 && strcmp(type, "revoked") != 0) return;
    game_field(m, "key", key, sizeof key);
    game_field(m, "productID", product, sizeof product);
    game_field(m, "result", result, sizeof result);
    game_field(m, "transactionID", tid, sizeof tid);
    int64_t k = strtoll(key, NULL, 10);
    if (!game_has(s, k) || game_bug_no_dedup) {
        int revoked = strcmp(type, "revoked") == 0;
        if (revoked || strcmp(result, "0") == 0) {
            game_record *r = revoked ? &s->takebacks[s->ntakebacks++] : &s->grants[s->ngrants++];
            r->key = k;
            snprintf(r->productID, sizeof r->productID, "%s", product);
            snprintf(r->transactionID, sizeof r->transactionID, "%s", tid[0] ? tid : "-");
            int sign = revoked ? -1 : 1;
            if (strcmp(product, "coins_100") == 0) s->coins += sign * 100;
            if (strcmp(product, "remove_ads") == 0) s->remove_ads = !revoked;
            if (strncmp(product, "vip_", 4) == 0 && !revoked) s->vip = 1;
            iaptk_checkpoint("before_save"); /* granted in memory, not saved yet */
            game_write(path, s);
        }
    }
    iap_confirm(b, k);
}

/* What the callback works on (game_use_callback). */
typedef struct {
    iap_bridge *b;
    const char *path;
    game_save *s;
    pthread_mutex_t lock;
    int got;
} game_inbox;

static void game_on_message(void *ctx, const char *m) {
    game_inbox *in = ctx;
    pthread_mutex_lock(&in->lock);
    game_handle(in->b, in->path, in->s, m);
    in->got = 1;
    pthread_mutex_unlock(&in->lock);
}

/* Opens the bridge, buys `buy` (NULL: nothing), handles every message until
 * nothing came for 300 ms, closes. */
static void game_play(const char *config, const char *save_path, const char *buy) {
    game_save *s = calloc(1, sizeof *s);
    iap_bridge *b = NULL;
    game_load(save_path, s);
    if (iap_open(config, &b) != IAP_OK) { fprintf(stderr, "game: iap_open: %s\n", iap_errmsg()); exit(1); }
    game_inbox in = { b, save_path, s, PTHREAD_MUTEX_INITIALIZER, 0 };
    if (game_use_callback && iap_set_callback(b, game_on_message, &in) != IAP_OK) {
        fprintf(stderr, "game: iap_set_callback: %s\n", iap_errmsg());
        exit(1);
    }
    if (buy && iap_buy(b, buy, 0, NULL) != IAP_OK) { fprintf(stderr, "game: iap_buy: %s\n", iap_errmsg()); exit(1); }
    for (int quiet = 0; quiet < 30;) {
        char *m;
        int got = 0;
        iap_flush(b);
        if (game_use_callback) {
            pthread_mutex_lock(&in.lock);
            got = in.got;
            in.got = 0;
            pthread_mutex_unlock(&in.lock);
        }
        while (!game_use_callback && (m = iap_poll(b)) != NULL) { game_handle(b, save_path, s, m); iap_free(m); got = 1; }
        quiet = got ? 0 : quiet + 1;
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    iap_close(b); /* waits for a callback under way */
    free(s);
}
