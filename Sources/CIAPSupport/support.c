#include "CIAPSupport.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* ---- CRC32C, slicing-by-8 tables built once. ---- */
static uint32_t crc_table[8][256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_init(void) {
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

uint32_t iapc_crc32c(uint32_t crc, const void *data, size_t len) {
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

/* ---- Per-thread last error. ---- */
static pthread_key_t err_key;
static pthread_once_t err_once = PTHREAD_ONCE_INIT;
static void err_init(void) { pthread_key_create(&err_key, free); }

void iapc_set_errmsg(const char *msg, size_t len) {
    pthread_once(&err_once, err_init);
    char *old = (char *)pthread_getspecific(err_key);
    char *copy = (char *)malloc(len + 1);
    if (!copy) return; /* keep the old message rather than crash */
    if (len) memcpy(copy, msg, len);
    copy[len] = 0;
    pthread_setspecific(err_key, copy);
    free(old);
}

const char *iapc_errmsg(void) {
    pthread_once(&err_once, err_init);
    const char *m = (const char *)pthread_getspecific(err_key);
    return m ? m : "";
}

