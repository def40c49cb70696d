#if defined(__linux__) && !defined(__ANDROID__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE  /* dladdr, RTLD_NODELETE (the image pin at the end), pthread_setname_np */
#endif
#include "CIAPSupport.h"
#include <pthread.h>
#include <signal.h>
#if defined(__linux__) && !defined(__ANDROID__)
#include <dlfcn.h>
#endif
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int64_t iapc_registry_storage[2 * IAPC_REGISTRY_SLOTS];

/* ---- CRC32C, slicing-by-8 tables built once. ---- */
static uint32_t crc_table[8][256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#include <cpuid.h>
#include <nmmintrin.h>
#define IAPC_CRC_HW 1
static int crc_hw;  /* SSE 4.2, asked once through cpuid (crc_init) */
#elif defined(__aarch64__) && defined(__APPLE__)
#include <sys/sysctl.h>
#define IAPC_CRC_HW 1
static int crc_hw;  /* hw.optional.armv8_crc32, asked once (crc_init) */
#elif defined(__aarch64__) && defined(__ARM_FEATURE_CRC32)
#define IAPC_CRC_HW 1
static const int crc_hw = 1;
#endif

static void crc_init(void) {
#if defined(__x86_64__) && defined(IAPC_CRC_HW)
    unsigned a, b, c, d;
    crc_hw = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_SSE4_2);
#elif defined(__aarch64__) && defined(__APPLE__)
    /* Not every arm64 device iOS 15 runs on has the CRC instructions (the
     * compiler's iOS baseline, Apple A7, does not promise them): asked. */
    int has = 0;
    size_t n = sizeof has;
    crc_hw = sysctlbyname("hw.optional.armv8_crc32", &has, &n, NULL, 0) == 0 && has == 1;
#endif
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = n;
        for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
        crc_table[0][n] = c;
    }
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = crc_table[0][n];
        for (int t = 1; t < 8; t++) { c = crc_table[0][c & 0xff] ^ (c >> 8); crc_table[t][n] = c; }
    }
}

/* The CPU's own CRC32C instruction where it has one (x86-64 with SSE 4.2,
 * asked through cpuid; arm64 Apple CPUs that report armv8_crc32; other
 * arm64 builds whose target promises it), asked once: 8 bytes an
 * instruction, where the tables take about 4.5 instructions a byte (a
 * record's CRC at every store and every open). The same function of the
 * same bytes (CRC32C is what both instructions compute); a test compares
 * every path with a bit-by-bit reference. */
#if defined(__x86_64__) && defined(IAPC_CRC_HW)
__attribute__((target("sse4.2")))
static uint32_t crc_hw_update(uint32_t crc, const unsigned char *p, size_t len) {
    uint64_t c = crc;
    for (; len >= 8; p += 8, len -= 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        c = _mm_crc32_u64(c, v);
    }
    crc = (uint32_t)c;
    for (; len; p++, len--) crc = _mm_crc32_u8(crc, *p);
    return crc;
}
#elif defined(IAPC_CRC_HW)
__attribute__((target("crc")))
static uint32_t crc_hw_update(uint32_t crc, const unsigned char *p, size_t len) {
    for (; len >= 8; p += 8, len -= 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        crc = __builtin_arm_crc32cd(crc, v);
    }
    for (; len; p++, len--) crc = __builtin_arm_crc32cb(crc, *p);
    return crc;
}
#endif

/* Tests: 1 when the CRC below runs on the CPU's instruction. */
int iapc_crc32c_uses_hardware(void) {
#ifdef IAPC_CRC_HW
    pthread_once(&crc_once, crc_init);
    return crc_hw;
#else
    return 0;
#endif
}

/* The slicing-by-8 tables, for CPUs without the instruction (and tests). */
uint32_t iapc_crc32c_tables(uint32_t crc, const void *data, size_t len) {
    pthread_once(&crc_once, crc_init);
    const unsigned char *p = (const unsigned char *)data;
    crc = ~crc;
    while (len >= 8) {
        uint32_t lo, hi;
        memcpy(&lo, p, 4); memcpy(&hi, p + 4, 4);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        lo = __builtin_bswap32(lo); hi = __builtin_bswap32(hi);
#endif
        lo ^= crc;
        crc = crc_table[7][lo & 0xff] ^ crc_table[6][(lo >> 8) & 0xff] ^
              crc_table[5][(lo >> 16) & 0xff] ^ crc_table[4][lo >> 24] ^
              crc_table[3][hi & 0xff] ^ crc_table[2][(hi >> 8) & 0xff] ^
              crc_table[1][(hi >> 16) & 0xff] ^ crc_table[0][hi >> 24];
        p += 8; len -= 8;
    }
    while (len--) crc = crc_table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return ~crc;
}

uint32_t iapc_crc32c(uint32_t crc, const void *data, size_t len) {
#ifdef IAPC_CRC_HW
    pthread_once(&crc_once, crc_init);
    if (crc_hw) return ~crc_hw_update(~crc, (const unsigned char *)data, len);
#endif
    return iapc_crc32c_tables(crc, data, len);
}

/* GF(2) polynomials in CRC32C's reflected bit order (x^0 is the top bit). */
#define CRC32C_POLY 0x82F63B78u

static uint32_t crc_mulmod(uint32_t a, uint32_t b) {
    uint32_t m = 1u << 31, p = 0;
    for (;;) {
        if (a & m) {
            p ^= b;
            if ((a & (m - 1)) == 0) break;
        }
        m >>= 1;
        b = (b & 1) ? (b >> 1) ^ CRC32C_POLY : b >> 1;
    }
    return p;
}

static uint32_t x2n_table[32];  /* x^(2^k) mod P */
static pthread_once_t x2n_once = PTHREAD_ONCE_INIT;

static void x2n_init(void) {
    uint32_t p = 1u << 30;  /* x^1 */
    x2n_table[0] = p;
    for (int k = 1; k < 32; k++) x2n_table[k] = p = crc_mulmod(p, p);
}

uint32_t iapc_crc32c_shift(uint32_t crc, uint64_t nbytes) {
    pthread_once(&x2n_once, x2n_init);
    uint32_t p = 1u << 31;  /* x^0 */
    unsigned k = 3;         /* x^(8n) = x^(n * 2^3) */
    while (nbytes) {
        if (nbytes & 1) p = crc_mulmod(x2n_table[k & 31], p);
        nbytes >>= 1;
        k++;
    }
    return crc_mulmod(p, crc);
}


/* ---- Per-thread last error. ---- */
static pthread_key_t err_key;
static pthread_once_t err_once = PTHREAD_ONCE_INIT;
static void err_init(void) { pthread_key_create(&err_key, free); }

void iapc_set_errmsg_parts(const void *function, size_t function_len, const void *msg, size_t msg_len) {
    pthread_once(&err_once, err_init);
    char *old = (char *)pthread_getspecific(err_key);
    char *copy = msg_len < SIZE_MAX / 2 && function_len < SIZE_MAX / 4 ? (char *)malloc(function_len + 2 + msg_len + 1) : NULL;
    if (!copy) {
        /* Out of memory: the message becomes "", never an earlier call's
         * text beside a new code. */
        pthread_setspecific(err_key, NULL);
        free(old);
        return;
    }
    size_t n = 0;
    const char *f = (const char *)function, *m = (const char *)msg;
    for (size_t i = 0; i < function_len; i++) if (f[i]) copy[n++] = f[i];
    copy[n++] = ':';
    copy[n++] = ' ';
    for (size_t i = 0; i < msg_len; i++) if (m[i]) copy[n++] = m[i];
    copy[n] = 0;
    pthread_setspecific(err_key, copy);
    free(old);
}

const char *iapc_errmsg(void) {
    pthread_once(&err_once, err_init);
    const char *m = (const char *)pthread_getspecific(err_key);
    return m ? m : "";
}

/* ---- The shared library pins itself in memory when it is loaded, so that a
 * host's dlclose leaves it mapped.
 *
 * Why: the Swift runtime records every image it sees at load time (its
 * protocol conformances, type metadata, and caches filled from them) and
 * never forgets one. When the Swift runtime is a separate library that
 * outlives ours (a debug build, or a host that links Swift itself), a
 * dlclose that really unmapped us would leave the runtime pointing into
 * freed pages, and the next type lookup after a dlopen crashes (seen in
 * CI's unload loop; swiftlang/swift#75889 is the compiler avoiding the same
 * dlclose). So the constructor below marks the image RTLD_NODELETE: dlclose
 * succeeds and does nothing, a later dlopen gets the same image back, with
 * every bridge closed and no SDK thread running (C8, docs/CONTRACT.md).
 *
 * Darwin's dyld never unloads an image with Swift metadata, so this is for
 * ELF systems only. In a static link (libIAPBridge.a in an executable) the
 * image is the executable, which is never unloaded: pinning it is harmless.
 * (It lives in this file, not one of its own: valgrind 3.19, which CI's
 * instruction counts use, cannot read the DWARF 5 of a second C unit.) */
/* The descriptors holding directory locks (fd + 1; 0 is a free entry). */
#define IAPC_LOCK_FDS 1024  /* 4 a bridge (dataDir, the simulator's stateDir: a file and a directory each) */
static int iapc_lock_fds[IAPC_LOCK_FDS];

void iapc_note_lock_fd(int fd, int held) {
    int want = held ? 0 : fd + 1, put = held ? fd + 1 : 0;
    for (int i = 0; i < IAPC_LOCK_FDS; i++) {
        int expected = want;
        if (__atomic_compare_exchange_n(&iapc_lock_fds[i], &expected, put, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) return;
    }
}

#if defined(__linux__) && !defined(__ANDROID__)
static int iapc_forked_flag = 0;
static void iapc_note_fork_child(void) {
    __atomic_store_n(&iapc_forked_flag, 1, __ATOMIC_RELEASE);
    /* A flock belongs to the open file description, which the child shares
     * until it execs or exits: a helper forked without exec kept the
     * parent's dataDir locked, and the parent's next iap_open answered
     * IAP_E_BUSY. The child's copies are closed (close, never LOCK_UN,
     * which would unlock the parent's description too); its bridges are
     * the parent's, never to be used there. */
    for (int i = 0; i < IAPC_LOCK_FDS; i++) {
        int v = __atomic_exchange_n(&iapc_lock_fds[i], 0, __ATOMIC_ACQ_REL);
        if (v > 0) (void)close(v - 1);
    }
}

__attribute__((constructor)) static void iapc_pin_image(void) {
    /* A forked child is noted (iapc_forked): the image stays mapped (below),
     * so the handler never dangles. */
    (void)pthread_atfork(NULL, NULL, iapc_note_fork_child);
    Dl_info info;
    if (dladdr((const void *)&iapc_pin_image, &info) == 0 || info.dli_fname == NULL) return;
    /* RTLD_NOLOAD: only the image already loaded (ourselves); RTLD_NODELETE
     * marks it never to be unmapped. The extra reference is given back at
     * once; the mark stays. */
    void *self = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
    if (self != NULL) dlclose(self);
}
#endif

int iapc_forked(void) {
#if defined(__linux__) && !defined(__ANDROID__)
    return __atomic_load_n(&iapc_forked_flag, __ATOMIC_ACQUIRE);
#else
    return 0;
#endif
}

static _Thread_local int iapc_serial_open_flag = 0;
int iapc_set_serial_open(int on) {
    int was = iapc_serial_open_flag;
    iapc_serial_open_flag = on;
    return was;
}
int iapc_serial_open(void) { return iapc_forked() || iapc_serial_open_flag; }

/* ---- Thread names. ---- */
void iapc_name_this_thread(const char *name) {
#if defined(__APPLE__)
    (void)pthread_setname_np(name);
#elif defined(__linux__)
    (void)pthread_setname_np(pthread_self(), name);
#else
    (void)name;
#endif
}

/* ---- The callback thread's signal mask. ---- */
void iapc_unblock_runtime_signals(void) {
    sigset_t set;
    sigemptyset(&set);
#if defined(SIGPWR)
    sigaddset(&set, SIGPWR);   /* Boehm and Mono stop the world with it on Linux */
#endif
    sigaddset(&set, SIGXCPU);  /* ... and restart it with this one */
#if defined(SIGRTMIN) && defined(SIGRTMAX)
    /* Newer Mono takes its suspend, restart and abort signals from the
     * real-time range (the first free ones), with handlers installed when
     * it starts. Only those with a handler: one a game reads with sigwait
     * has none, and would end the game here by its default action. */
    for (int s = SIGRTMIN; s <= SIGRTMAX; s++) {
        struct sigaction sa;
        if (sigaction(s, NULL, &sa) == 0 && sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN) sigaddset(&set, s);
    }
#endif
    (void)pthread_sigmask(SIG_UNBLOCK, &set, NULL);
}
