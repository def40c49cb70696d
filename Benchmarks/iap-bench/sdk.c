/* Loads the release libIAPBridge.so the way an engine's native-plugin loader
 * does (dlopen + dlsym), and the baselines library built by scripts/bench.sh.
 * Calling every function through a pointer keeps the poll comparison fair:
 * iap_poll and the empty function are reached the same way, neither inlined. */
#define _GNU_SOURCE
#include "bench.h"

#include <dlfcn.h>

sdk_api SDK;
baseline_api BL;

static void *sym(void *h, const char *lib, const char *name) {
    void *p = dlsym(h, name);
    if (!p) die("%s does not export %s", lib, name);
    return p;
}

void load_sdk(const char *path) {
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) die("cannot load %s: %s", path, dlerror());
    SDK.open = sym(h, path, "iap_open");
    SDK.close = sym(h, path, "iap_close");
    SDK.buy = sym(h, path, "iap_buy");
    SDK.confirm = sym(h, path, "iap_confirm");
    SDK.poll = sym(h, path, "iap_poll");
    SDK.free = sym(h, path, "iap_free");
    SDK.flush = sym(h, path, "iap_flush");
    SDK.request_products = sym(h, path, "iap_request_products");
    SDK.restore = sym(h, path, "iap_restore");
    SDK.errmsg = sym(h, path, "iap_errmsg");
}

void load_baselines(const char *path) {
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) die("cannot load %s: %s (scripts/bench.sh builds it)", path, dlerror());
    BL.floor_open = sym(h, path, "bl_floor_open");
    BL.floor_commit = sym(h, path, "bl_floor_commit");
    BL.sqlite_open = sym(h, path, "bl_sqlite_open");
    BL.sqlite_insert = sym(h, path, "bl_sqlite_insert");
    BL.sqlite_close = sym(h, path, "bl_sqlite_close");
    BL.atomic_file_commit = sym(h, path, "bl_atomic_file_commit");
    BL.empty_call = sym(h, path, "bl_empty_call");
    BL.handoff_open = sym(h, path, "bl_handoff_open");
    BL.handoff_commit = sym(h, path, "bl_handoff_commit");
    BL.handoff_close = sym(h, path, "bl_handoff_close");
    BL.wake_open = sym(h, path, "bl_wake_open");
    BL.wake_post = sym(h, path, "bl_wake_post");
    BL.wake_close = sym(h, path, "bl_wake_close");
}
