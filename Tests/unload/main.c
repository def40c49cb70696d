/*
 * unload: the host unloads the library after iap_close and loads it again,
 * as Unity's domain reload, a Godot or LÖVE restart, or a plugin reload does
 * (C8, docs/CONTRACT.md). Loops N times: dlopen, iap_open, iap_buy, poll the
 * "7", iap_confirm, iap_close, dlclose. After every dlclose the process must
 * have exactly the threads it had before the first dlopen: nothing of the
 * SDK still runs. Every third round only loads the library, asks its
 * version and unloads it (the Swift runtime registers an image when it is
 * loaded, before any call).
 *
 * The library pins itself (Sources/CIAPSupport/support.c): dlclose
 * succeeds and leaves it mapped, because a Swift runtime that outlives it
 * would keep pointers into its pages. The loop checks that it stays mapped
 * and that the next dlopen works; before the pin, the second round's
 * iap_open crashed in a type lookup whenever the library came back at
 * another address.
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
typedef const char *(*version_f)(void);

/* Whether a file mapped in this process has the real path `path`. */
static int mapped(const char *path) {
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f) return -1;
    char line[8192];
    int found = 0;
    while (!found && fgets(line, sizeof line, f)) {
        char *slash = strchr(line, '/');
        if (!slash) continue;
        slash[strcspn(slash, "\n")] = 0;
        found = strcmp(slash, path) == 0;
    }
    fclose(f);
    return found;
}

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
    char real[4096];
    if (!realpath(argv[1], real)) { perror(argv[1]); return 2; }
    int before = threads(), versions = 0, lingered = 0;
    for (int i = 0; i < rounds; i++) {
        void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
        if (!h) { fprintf(stderr, "round %d: dlopen: %s\n", i, dlerror()); return 1; }
        if (i % 3 == 1) {  /* load, one call that opens nothing, unload */
            version_f v = (version_f)dlsym(h, "iap_version");
            int ok = v && v() && v()[0];
            if (!ok) fprintf(stderr, "round %d: iap_version gave nothing\n", i);
            if (dlclose(h) != 0) { fprintf(stderr, "round %d: dlclose: %s\n", i, dlerror()); ok = 0; }
            if (mapped(real) != 1) { fprintf(stderr, "round %d: the library was unmapped by dlclose (not pinned)\n", i); ok = 0; }
            if (ok) passed++, versions++; else failed++;
            continue;
        }
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
        if (mapped(real) != 1) { fprintf(stderr, "round %d: the library was unmapped by dlclose (not pinned)\n", i); ok = 0; }
        /* pthread_join returns once the kernel has cleared the thread's ID,
         * a moment before it drops the thread from /proc/self/task: a thread
         * that is ending is given up to 2 s to go (a slow runner). One still there is
         * named (its comm) in the failure. */
        int now = threads();
        for (int w = 0; now > before && w < 2000; w++) {
            struct timespec ts = {0, 1000000};
            nanosleep(&ts, NULL);
            now = threads();
            if (now == before) lingered++;
        }
        if (now != before) {
            DIR *d = opendir("/proc/self/task");
            for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
                if (e->d_name[0] == '.') continue;
                char path[300], comm[64] = "?";
                snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
                FILE *f = fopen(path, "r");
                if (f) { if (fgets(comm, sizeof comm, f)) comm[strcspn(comm, "\n")] = 0; fclose(f); }
                fprintf(stderr, "round %d: thread %s (%s)\n", i, e->d_name, comm);
            }
            if (d) closedir(d);
        }
        if (now != before) { fprintf(stderr, "round %d: %d threads after dlclose, %d before the first dlopen\n", i, now, before); ok = 0; }
        if (ok) passed++; else failed++;
    }
    printf("unload: %d passed, %d failed (%d of them load, iap_version, unload; the library stayed mapped after each dlclose;"
           " in %d rounds a joined thread was still listed for a moment after iap_close)\n",
           passed, failed, versions, lingered);
    return failed == 0 ? 0 : 1;
}
