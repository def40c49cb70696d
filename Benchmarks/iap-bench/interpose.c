/* Interposes the allocator and the sync calls for the whole process (the
 * executable's definitions win over libc's for every loaded library,
 * including libIAPBridge.so and the Swift runtime):
 * - malloc and friends forward to glibc's own entry points and count calls
 *   per thread, so the poll figure can show it allocates nothing;
 * - fsync/fdatasync are counted, and can be skipped while setting up state
 *   (never while a durability figure is measured). */
#define _GNU_SOURCE
#include "bench.h"

#include <errno.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

static __thread long thread_allocs;
static atomic_long sync_calls;
static atomic_int nosync;
static _Atomic long long last_data_sync_end_ns;
static atomic_long sync_delay_us;

void bench_set_sync_delay_us(long us) { atomic_store(&sync_delay_us, us); }

static void slow_disk(void) {
    long us = atomic_load(&sync_delay_us);
    if (us > 0) {
        struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
    }
}

long bench_thread_allocs(void) { return thread_allocs; }
long bench_sync_calls(void) { return atomic_load(&sync_calls); }
void bench_set_nosync(int on) { atomic_store(&nosync, on); }
double bench_last_data_sync_end_us(void) { return (double)atomic_load(&last_data_sync_end_ns) / 1e3; }

void *malloc(size_t n) {
    thread_allocs++;
    return __libc_malloc(n);
}

void *calloc(size_t a, size_t b) {
    thread_allocs++;
    return __libc_calloc(a, b);
}

void *realloc(void *p, size_t n) {
    thread_allocs++;
    return __libc_realloc(p, n);
}

void free(void *p) { __libc_free(p); }

int posix_memalign(void **out, size_t align, size_t n) {
    if (align < sizeof(void *) || (align & (align - 1)) != 0) return EINVAL;
    thread_allocs++;
    void *p = __libc_memalign(align, n);
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}

void *aligned_alloc(size_t align, size_t n) {
    thread_allocs++;
    return __libc_memalign(align, n);
}

void *memalign(size_t align, size_t n) {
    thread_allocs++;
    return __libc_memalign(align, n);
}

int fdatasync(int fd) {
    atomic_fetch_add(&sync_calls, 1);
    if (atomic_load(&nosync)) return 0;
    slow_disk();
    int rc = (int)syscall(SYS_fdatasync, fd);
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    atomic_store(&last_data_sync_end_ns, (long long)t.tv_sec * 1000000000LL + t.tv_nsec);
    return rc;
}

int fsync(int fd) {
    atomic_fetch_add(&sync_calls, 1);
    if (atomic_load(&nosync)) return 0;
    slow_disk();
    return (int)syscall(SYS_fsync, fd);
}
