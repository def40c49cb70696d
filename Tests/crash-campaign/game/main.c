/*
 * iap-crash-game: the game the crash campaign kills (scripts/campaign.sh,
 * docs/DURABILITY.md). It plays the way a game on IAPBridge should, through
 * the C ABI only:
 *
 *   open -> handle every re-delivered result -> loop { click Buy, poll, grant
 *   into its own ledger (fsync'd), confirm } -> close
 *
 * The ledger (<work>/ledger.txt) is the game's save: it lives outside
 * dataDir, so a "reinstall" (the driver deleting dataDir) keeps it, as a
 * cloud save would. It is an append-only text file, one line per fact:
 *
 *   B <key> <product>                     a click, written (synced) before iap_buy
 *   S <key> <result>                      a "7" received (the game has seen it)
 *   G <key> <txn> <product> <origin>      a grant, written (synced) before iap_confirm
 *   C <key>                               iap_confirm about to be called
 *   Y <key>                               its confirm is durable (an iap_flush
 *                                         after it returned IAP_OK): no "7" may
 *                                         carry this key again (C4)
 *   R <key> <txn>                         a success for a key granted before: ignored
 *   F <key> <result>                      a result without a transaction, confirmed
 *   D <recovered>                         an "outbox_damaged" message
 *   E <text>                              an error message from the SDK
 *
 * The game's side of the contract: grant and save before confirming, and
 * ignore a key already granted. Non-consumables are bought only when the
 * ledger does not own them yet (a shop greys out what the player owns).
 *
 * usage: iap-crash-game --work DIR --catalog FILE --seed N --buys N [--drain]
 */
#include "iap_bridge.h"
#include "iap_json_field.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define MAX_KEYS (1 << 20)
#define LEVELS 12

static const char *CONSUMABLES[] = {"coins_100", "coins_500", "gems_10"};

static char g_ledger[4096];
static int g_ledger_fd = -1;
static int64_t *g_granted;        /* sorted keys granted so far */
static size_t g_granted_n;
static int g_owned[LEVELS + 1];   /* level packs owned */
static int64_t g_last_key;
/* Keys confirmed (IAP_OK) since the last iap_flush: its IAP_OK makes them
 * durable, and the game says so in "Y" lines the driver holds the SDK to. */
static int64_t g_unflushed[4096];
static size_t g_unflushed_n;
static uint64_t g_rng;

static uint64_t rnd(void) {       /* SplitMix64: deterministic given --seed */
    uint64_t z = (g_rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static int64_t now_ms(void) {
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

static void die(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "iap-crash-game: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(3);
}

/* ---- the ledger ---------------------------------------------------------- */

static void ledger_write(int sync, const char *fmt, ...) {
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    if (n < 0 || n >= (int)sizeof line - 1) die("ledger line too long");
    line[n++] = '\n';
    for (int off = 0; off < n;) {
        ssize_t w = write(g_ledger_fd, line + off, (size_t)(n - off));
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) die("ledger write failed: %s", strerror(errno));
        off += (int)w;
    }
    if (sync && fdatasync(g_ledger_fd) != 0) die("ledger sync failed: %s", strerror(errno));
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static int is_granted(int64_t key) {
    return bsearch(&key, g_granted, g_granted_n, sizeof key, cmp_i64) != NULL;
}

static void add_granted(int64_t key) {
    if (g_granted_n == MAX_KEYS) die("too many grants");
    size_t i = g_granted_n;
    while (i > 0 && g_granted[i - 1] > key) { g_granted[i] = g_granted[i - 1]; i--; }
    g_granted[i] = key;
    g_granted_n++;
}

static int level_of(const char *product) {
    if (strncmp(product, "level_", 6) != 0) return 0;
    int n = atoi(product + 6);
    return n >= 1 && n <= LEVELS ? n : 0;
}

/* Loads the ledger; a line a kill cut short is dropped (the game's own torn
 * write: it was never acted on, since every action follows a synced line). */
static void ledger_load(void) {
    int fd = open(g_ledger, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) die("cannot open %s: %s", g_ledger, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) die("fstat: %s", strerror(errno));
    size_t size = (size_t)st.st_size;
    char *buf = malloc(size + 1);
    if (!buf) die("out of memory");
    size_t got = 0;
    while (got < size) {
        ssize_t r = read(fd, buf + got, size - got);
        if (r <= 0) die("cannot read the ledger");
        got += (size_t)r;
    }
    size_t end = size;
    while (end > 0 && buf[end - 1] != '\n') end--;
    if (end != size && ftruncate(fd, (off_t)end) != 0) die("cannot repair the ledger");
    buf[end] = 0;
    for (char *line = buf; *line;) {
        char *nl = strchr(line, '\n');
        *nl = 0;
        long long key = 0;
        char a[128], b[128], c[32];
        if (line[0] == 'B' && sscanf(line, "B %lld", &key) == 1) {
            if (key > g_last_key) g_last_key = key;
        } else if (line[0] == 'G' && sscanf(line, "G %lld %127s %127s %31s", &key, a, b, c) == 4) {
            add_granted(key);
            g_owned[level_of(b)] = 1;
        }
        line = nl + 1;
    }
    free(buf);
    close(fd);
    g_ledger_fd = open(g_ledger, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (g_ledger_fd < 0) die("cannot open the ledger for append");
}

/* ---- messages ------------------------------------------------------------ */


static void frame_pause(void) {
    if (rnd() % 2) usleep((useconds_t)(rnd() % 2000));
}

static void handle(iap_bridge *b, const char *m) {
    char type[32] = "";
    iap_json_field(m, "type", type, sizeof type);
    if (strcmp(type, "7") == 0) {
        char key[32] = "", result[8] = "", txn[64] = "", product[128] = "", origin[16] = "";
        iap_json_field(m, "key", key, sizeof key);
        iap_json_field(m, "result", result, sizeof result);
        iap_json_field(m, "transactionID", txn, sizeof txn);
        iap_json_field(m, "productID", product, sizeof product);
        iap_json_field(m, "origin", origin, sizeof origin);
        int64_t k = strtoll(key, NULL, 10);
        ledger_write(0, "S %lld %s", (long long)k, result);
        /* A game grants on a later frame and confirms after saving: random
         * pauses here put kills between seeing, granting and confirming. */
        frame_pause();
        char owned_already[8] = "";
        iap_json_field(m, "alreadyOwned", owned_already, sizeof owned_already);
        if (strcmp(result, "0") == 0) {
            /* A second click on a non-consumable before the first one's
             * answer came gets the same transaction, "alreadyOwned": the
             * player owns it once; nothing new to grant. */
            if (is_granted(k) || strcmp(owned_already, "true") == 0) {
                ledger_write(0, "R %lld %s", (long long)k, txn);
            } else {
                ledger_write(1, "G %lld %s %s %s", (long long)k, txn, product, origin[0] ? origin : "-");
                add_granted(k);
                g_owned[level_of(product)] = 1;
            }
        } else {
            ledger_write(0, "F %lld %s", (long long)k, result);
        }
        frame_pause();
        /* Logged before the call: once iap_confirm starts, the SDK may make
         * the confirm durable at any moment, and owes no re-delivery. */
        ledger_write(0, "C %lld", (long long)k);
        int32_t rc = iap_confirm(b, k);
        if (rc != IAP_OK && rc != IAP_E_UNKNOWN_KEY) die("iap_confirm(%lld): %s: %s", (long long)k, iap_error_name(rc), iap_errmsg());
        if (rc == IAP_OK && g_unflushed_n < sizeof g_unflushed / sizeof g_unflushed[0]) g_unflushed[g_unflushed_n++] = k;
    } else if (strcmp(type, "outbox_damaged") == 0) {
        char rec[32] = "";
        iap_json_field(m, "recovered", rec, sizeof rec);
        ledger_write(0, "D %s", rec);
    } else if (strcmp(type, "error") == 0) {
        ledger_write(0, "E %.400s", m);
        fprintf(stderr, "iap-crash-game: SDK error message: %s\n", m);
    }
}

/* iap_flush: once it returns IAP_OK, every confirm made before it is
 * durable, and the SDK owes those keys nothing more (C4): "Y" lines. */
static void flush_confirms(iap_bridge *b) {
    int32_t rc = iap_flush(b);
    if (rc != IAP_OK) die("iap_flush: %s: %s", iap_error_name(rc), iap_errmsg());
    for (size_t i = 0; i < g_unflushed_n; i++) ledger_write(0, "Y %lld", (long long)g_unflushed[i]);
    g_unflushed_n = 0;
}

static int pump(iap_bridge *b) {
    int n = 0;
    char *m;
    while ((m = iap_poll(b)) != NULL) {
        handle(b, m);
        iap_free(m);
        n++;
    }
    return n;
}

static const char *choose_product(void) {
    if (rnd() % 100 < 15) {
        int free_levels[LEVELS], n = 0;
        for (int i = 1; i <= LEVELS; i++) if (!g_owned[i]) free_levels[n++] = i;
        if (n > 0) {
            static char name[16];
            snprintf(name, sizeof name, "level_%02d", free_levels[rnd() % (uint64_t)n]);
            return name;
        }
    }
    return CONSUMABLES[rnd() % 3];
}

int main(int argc, char **argv) {
    const char *work = NULL, *catalog = NULL;
    long buys = 10;
    int drain = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--work") == 0 && i + 1 < argc) work = argv[++i];
        else if (strcmp(argv[i], "--catalog") == 0 && i + 1 < argc) catalog = argv[++i];
        else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) g_rng = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--buys") == 0 && i + 1 < argc) buys = strtol(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--drain") == 0) drain = 1;
        else die("usage: iap-crash-game --work DIR --catalog FILE --seed N --buys N [--drain]");
    }
    if (!work || !catalog) die("--work and --catalog are required");
    g_granted = malloc(sizeof(int64_t) * MAX_KEYS);
    if (!g_granted) die("out of memory");
    snprintf(g_ledger, sizeof g_ledger, "%s/ledger.txt", work);
    ledger_load();

    char config[8192];
    snprintf(config, sizeof config,
             "{\"store\":\"simulator\",\"dataDir\":\"%s/data\",\"catalog\":\"%s\",\"entitlementsAtOpen\":false,\"purchasesInFlight\":1000,"
             "\"simulator\":{\"stateDir\":\"%s/appstore\",\"durable\":false,\"tickMs\":0}}",
             work, catalog, work);
    iap_bridge *b = NULL;
    int32_t rc = iap_open(config, &b);
    if (rc != IAP_OK) die("iap_open: %s: %s", iap_error_name(rc), iap_errmsg());

    /* Everything re-delivered at open is queued when iap_open returns. */
    pump(b);
    if (drain) {
        for (int frame = 0; frame < 5; frame++) {
            usleep(2000);
            pump(b);
        }
    } else {
        for (long i = 0; i < buys; i++) {
            if (rnd() % 100 < 4) {
                char *answer = NULL;
                rc = iap_simulator(b, "{\"op\":\"cancel_next\"}", &answer);
                if (rc != IAP_OK) die("cancel_next: %s", iap_errmsg());
                iap_free(answer);
            }
            const char *product = choose_product();
            int64_t key = now_ms();
            if (key <= g_last_key) key = g_last_key + 1;
            g_last_key = key;
            ledger_write(1, "B %lld %s", (long long)key, product);
            int64_t used = 0;
            rc = iap_buy(b, product, key, &used);
            if (rc != IAP_OK || used != key) die("iap_buy(%s, %lld): %s: %s", product, (long long)key, iap_error_name(rc), iap_errmsg());
            pump(b);
            /* Sometimes a frame passes before the next click: the group
             * commit runs alone instead of riding along with the next result. */
            frame_pause();
            pump(b);
            /* Now and then the game saves and makes its confirms durable. */
            if (rnd() % 100 < 15) flush_confirms(b);
        }
    }
    flush_confirms(b);
    rc = iap_close(b);
    if (rc != IAP_OK) die("iap_close: %s", iap_errmsg());
    return 0;
}
