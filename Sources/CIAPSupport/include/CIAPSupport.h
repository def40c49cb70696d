/* CIAPSupport: the few helpers IAPBridge's Swift code needs that are best
 * written in C: lock-free loads/stores for the per-frame poll path and a bridge's lifecycle, CRC32C
 * for outbox records, the per-thread last-error message, and the pin that
 * keeps the shared library mapped after a dlclose (support.c). Internal to the
 * SDK; not part of the public header include/iap_bridge.h. */
#ifndef CIAPSUPPORT_H
#define CIAPSUPPORT_H
#include <stdint.h>
#include <stddef.h>

static inline int64_t iapc_atomic_load_i64(const int64_t *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static inline void iapc_atomic_store_i64(int64_t *p, int64_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
static inline int64_t iapc_atomic_add_i64(int64_t *p, int64_t v) { return __atomic_add_fetch(p, v, __ATOMIC_ACQ_REL); }
/* Stores `desired` when *p == *expected and returns 1; otherwise loads *p into *expected and returns 0. */
static inline int iapc_atomic_cas_i64(int64_t *p, int64_t *expected, int64_t desired) {
    return __atomic_compare_exchange_n(p, expected, desired, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

/* The bridge registry's table (IAPBridge's Registry.swift): two int64 per
 * slot, the live handle's value and its queued-message count, read lock-free
 * by iap_poll. Static storage, zero at load: a Swift global would be
 * initialised lazily, and iap_poll's empty path would pay a swift_once call
 * on every frame. Hidden: internal to the library. */
#define IAPC_REGISTRY_SLOTS 4096
extern int64_t iapc_registry_storage[2 * IAPC_REGISTRY_SLOTS] __attribute__((visibility("hidden")));
static inline int64_t *iapc_registry_table(void) { return iapc_registry_storage; }

/* 1 in a process made by fork() (without exec) after the library was loaded,
 * on Linux; 0 otherwise. In such a child the thread that called fork() keeps
 * the thread ID the Swift runtime cached for it in the parent, and a lock of
 * the runtime (a swift_once, a metadata cache) that this thread and another
 * contend for can deadlock: an open there does not run its two reads on two
 * threads (Coordinator.open). */
int iapc_forked(void);

/* Notes (held 1) or forgets (held 0) a descriptor holding a directory lock:
 * a child forked without exec closes its copies at once (Linux), so it does
 * not keep the parent's dataDir locked for its whole life. */
void iapc_note_lock_fd(int fd, int held);
/* Tests: while set (non-zero) on a thread, opens made on that thread take
 * the forked child's path too (iapc_serial_open), so that path's outcomes,
 * failures included, are tested without forking. Per thread: tests running
 * beside it are not affected. Returns the value it replaces. */
int iapc_set_serial_open(int on);
/* iapc_forked(), or the calling thread asked for it (iapc_set_serial_open). */
int iapc_serial_open(void);

/* CRC32C (Castagnoli), as used by iSCSI/ext4/LevelDB. `crc` is the running
 * value (0 to start). */
uint32_t iapc_crc32c(uint32_t crc, const void *data, size_t len);
/* Tests: the same CRC from the tables alone, and whether iapc_crc32c runs
 * on the CPU's CRC32C instruction (1) or on the tables (0). */
uint32_t iapc_crc32c_tables(uint32_t crc, const void *data, size_t len);
int iapc_crc32c_uses_hardware(void);

/* The CRC32C of A||B from crc(A) and crc(B): crc(B) ^ iapc_crc32c_shift(crc(A), |B|).
 * iapc_crc32c_shift(c, n) multiplies c by x^(8n) modulo the polynomial, in
 * O(log n): how the outbox scanner checks a candidate frame after damage
 * from prefix CRCs without reading its payload again (a linear scan). */
uint32_t iapc_crc32c_shift(uint32_t crc, uint64_t nbytes);

/* This thread's last error message, set as `function`, ": ", `msg` (NUL
 * bytes in either dropped) in one allocation; out of memory, it becomes "".
 * The bytes are copied; the pointer returned by iapc_errmsg stays valid
 * until this thread sets another. A C ABI call's error is set with no Swift
 * string built for it (the first error after an idle second cost some 17 us
 * on a virtual machine through string interpolation, cold). */
void iapc_set_errmsg_parts(const void *function, size_t function_len, const void *msg, size_t msg_len);
const char *iapc_errmsg(void);

/* Names the calling thread as profilers, debuggers and crash reports show
 * it (Xcode, Instruments, Unity's profiler, gdb, /proc/<pid>/task/<tid>/comm).
 * At most 15 bytes (Linux's limit); a longer name is ignored there. Does
 * nothing where threads have no names. */
void iapc_name_this_thread(const char *name);

/* Unblocks, on the calling thread, only the signals managed runtimes stop
 * threads with (SIGPWR, SIGXCPU, the real-time signals that have a handler
 * installed): every other signal
 * the thread inherited blocked stays blocked, so a game that blocks SIGTERM
 * everywhere and takes it from sigwait or a signalfd still gets it there. */
void iapc_unblock_runtime_signals(void);

#endif
