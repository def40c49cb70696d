/*
 * unload: the host unloads the library after iap_close and loads it again,
 * as Unity's domain reload, a Godot or LÖVE restart, or a plugin reload does
 * (C8, docs/CONTRACT.md). Loops N times: dlopen, iap_open, iap_buy, poll the
 * "7", iap_confirm, iap_close, dlclose. After every dlclose the process must
 * have exactly the threads it had before the first dlopen: nothing of the
 * SDK still runs.
 *
 *   unload LIBRARY CATALOG DIR [N]
 *
 * Exit 0 and "unload: N passed, 0 failed" when every round passed.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int32_t (*open_f)(const char *, void **);
typedef int32_t (*close_f)(void *);
typedef int32_t (*buy_f)(void *, const char *, int64_t, int64_t *);
typedef int32_t (*confirm_f)(void *, int64_t);
typedef char *(*poll_f)(void *);
typedef void (*free_f)(void *);
typedef const char *(*errmsg_f)(void);

static int threads(void) {
    int n = 0;
    DIR *d = opendir("/proc/self/task");
    if (!d) return -1;
    for (struct dirent *e; (e = readdir(d)) != NULL;) if (e->d_name[0] != '.') n++;
    closedir(d);
    return n;
}

int main(int argc, char **argv) {
    if (argc < 4) { fprintf(stderr, "usage: unload LIBRARY CATALOG DIR [N]\n"); return 2; }
    int rounds = argc > 4 ? atoi(argv[4]) : 100, passed = 0, failed = 0;
    char cfg[4096];
    snprintf(cfg, sizeof cfg,
             "{\"store\":\"simulator\",\"dataDir\":\"%s/data\",\"catalog\":\"%s\","
             "\"simulator\":{\"stateDir\":\"%s/state\",\"durable\":false}}", argv[3], argv[2], argv[3]);
    int before = threads();
    for (int i = 0; i < rounds; i++) {
        void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
        if (!h) { fprintf(stderr, "round %d: dlopen: %s\n", i, dlerror()); return 1; }
        open_f o = (open_f)dlsym(h, "iap_open");
        close_f c = (close_f)dlsym(h, "iap_close");
        buy_f b = (buy_f)dlsym(h, "iap_buy");
        confirm_f cf = (confirm_f)dlsym(h, "iap_confirm");
        poll_f p = (poll_f)dlsym(h, "iap_poll");
        free_f fr = (free_f)dlsym(h, "iap_free");
        errmsg_f em = (errmsg_f)dlsym(h, "iap_errmsg");
        void *br = NULL;
        int ok = 1;
        if (o(cfg, &br) != 0) { fprintf(stderr, "round %d: iap_open: %s\n", i, em()); ok = 0; }
        int64_t key = 0;
        if (ok && b(br, "coins_100", 0, &key) != 0) { fprintf(stderr, "round %d: iap_buy: %s\n", i, em()); ok = 0; }
        int got = 0;
        for (int t = 0; ok && t < 2000 && !got; t++) {
            char *m;
            while ((m = p(br)) != NULL) {
                char want[64];
                snprintf(want, sizeof want, "\"key\":\"%lld\"", (long long)key);
                if (strstr(m, "\"type\":\"7\"") && strstr(m, want)) got = 1;
                else if (strstr(m, "\"type\":\"7\"")) {  /* an earlier round's, re-delivered */
                    const char *k = strstr(m, "\"key\":\"");
                    if (k) cf(br, strtoll(k + 7, NULL, 10));
                }
                fr(m);
            }
            if (!got) { struct timespec ts = {0, 1000000}; nanosleep(&ts, NULL); }
        }
        if (ok && !got) { fprintf(stderr, "round %d: no \"7\" for key %lld\n", i, (long long)key); ok = 0; }
        if (ok && cf(br, key) != 0) { fprintf(stderr, "round %d: iap_confirm: %s\n", i, em()); ok = 0; }
        if (br && c(br) != 0) { fprintf(stderr, "round %d: iap_close: %s\n", i, em()); ok = 0; }
        if (dlclose(h) != 0) { fprintf(stderr, "round %d: dlclose: %s\n", i, dlerror()); ok = 0; }
        int now = threads();
        if (now != before) { fprintf(stderr, "round %d: %d threads after dlclose, %d before the first dlopen\n", i, now, before); ok = 0; }
        if (ok) passed++; else failed++;
    }
    printf("unload: %d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
