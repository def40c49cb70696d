/* LD_PRELOAD shim for scripts/docs/check_fsync_claims.py: counts fsync and
 * fdatasync calls (the only syncs the SDK issues on Linux) in a counter the
 * script reads through ctypes. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>

static atomic_long syncs;

long iap_docs_sync_count(void) { return atomic_load(&syncs); }

int fsync(int fd) {
    static int (*real)(int);
    if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
    atomic_fetch_add(&syncs, 1);
    return real(fd);
}

int fdatasync(int fd) {
    static int (*real)(int);
    if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
    atomic_fetch_add(&syncs, 1);
    return real(fd);
}
