/*
 * The IAPBridge demo: a tiny console "game" buying on the simulated App Store.
 *
 *   swift run iap-demo                 (from the repository root)
 *   swift run iap-demo -- --catalog path/to/Your.storekit
 *
 * What it shows, in order:
 *   1. open a bridge on the simulator and print the "999" product list
 *   2. buy 100 coins (consumable) and Remove Ads (non-consumable)
 *   3. "crash" before confirming: the process exits without granting
 *   4. reopen: both results are delivered again; grant, save, confirm
 *   5. reopen: nothing is pending any more, Remove Ads is an entitlement
 *
 * The game's side of the contract is in grant() and take_back(): grant a
 * success (result "0") only, remember granted keys in the game's own save,
 * ignore a key seen before, confirm every "7" and "revoked" only after saving.
 */
#include "iap_bridge.h"
#include "iap_demo_dir.h"
#include "iap_json_field.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

static char g_config[8192];
static char g_save[PATH_MAX];   /* the game's own save: granted keys and coins */

static int64_t now_ms(void) {
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}


static void check(int32_t rc, const char *what) {
    if (rc != IAP_OK) {
        fprintf(stderr, "demo: %s failed: %s (%d): %s\n", what, iap_error_name(rc), rc, iap_errmsg());
        exit(1);
    }
}

static iap_bridge *open_bridge(void) {
    iap_bridge *b = NULL;
    check(iap_open(g_config, &b), "iap_open");
    return b;
}

/* ---- the game's save file: coins, remove-ads flag, granted keys ---- */
static int save_has_key(const char *key) {
    FILE *f = fopen(g_save, "r");
    if (!f) return 0;
    char line[256];
    int found = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        if (strncmp(line, "key ", 4) == 0 && strcmp(line + 4, key) == 0) found = 1;
    }
    fclose(f);
    return found;
}

static void save_append(const char *line) {
    FILE *f = fopen(g_save, "a");
    if (!f) { perror("demo: save"); exit(1); }
    fprintf(f, "%s\n", line);
    fflush(f);
    fsync(fileno(f));  /* the game's state is durable before it confirms */
    fclose(f);
}

static int coins_in_save(void) {
    FILE *f = fopen(g_save, "r");
    if (!f) return 0;
    char line[256];
    int coins = 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "coins ", 6) == 0) coins += atoi(line + 6);
    }
    fclose(f);
    return coins;
}

/* Grants a successful "7" once: idempotent by key, saved before confirming. */
static void grant(iap_bridge *b, const char *json) {
    char key[32] = "", product[128] = "", result[8] = "", txn[64] = "";
    iap_json_field(json, "key", key, sizeof key);
    iap_json_field(json, "productID", product, sizeof product);
    iap_json_field(json, "result", result, sizeof result);
    iap_json_field(json, "transactionID", txn, sizeof txn);
    if (strcmp(result, "0") != 0) {
        printf("   purchase of %s did not succeed (result %s); nothing to grant\n", product, result);
    } else if (save_has_key(key)) {
        printf("   key %s was granted before: ignoring it (this is the game's half of exactly-once)\n", key);
    } else {
        char line[256];
        if (strcmp(product, "coins_100") == 0) save_append("coins 100");
        if (strcmp(product, "remove_ads") == 0) save_append("remove_ads 1");
        snprintf(line, sizeof line, "key %s", key);
        save_append(line);
        printf("   granted %s (key %s, transaction %s) and saved the game\n", product, key, txn);
    }
    check(iap_confirm(b, strtoll(key, NULL, 10)), "iap_confirm");
    printf("   confirmed key %s: the SDK may now finish the store transaction\n", key);
}

/* Takes a refunded item back once: a "revoked" has a key of its own, saved
 * like a granted one, then confirmed like a "7". */
static void take_back(iap_bridge *b, const char *json) {
    char key[32] = "", product[128] = "", quantity[8] = "1";
    iap_json_field(json, "key", key, sizeof key);
    iap_json_field(json, "productID", product, sizeof product);
    iap_json_field(json, "quantity", quantity, sizeof quantity);
    if (save_has_key(key)) {
        printf("   refund %s was taken back before: ignoring it\n", key);
    } else {
        char line[256];
        if (strcmp(product, "coins_100") == 0) {
            snprintf(line, sizeof line, "coins %d", -100 * (atoi(quantity) > 0 ? atoi(quantity) : 1));
            save_append(line);
        }
        if (strcmp(product, "remove_ads") == 0) save_append("remove_ads 0");
        snprintf(line, sizeof line, "key %s", key);
        save_append(line);
        printf("   took %s back (refund key %s) and saved the game\n", product, key);
    }
    check(iap_confirm(b, strtoll(key, NULL, 10)), "iap_confirm");
}

/* Purchase results ("7") seen by pump, in this process. */
static int g_results;

/* Polls like a game loop would, for a few "frames". Returns messages seen. */
static int pump(iap_bridge *b, int handle_purchases, int quiet_types) {
    int seen = 0;
    for (int frame = 0; frame < 20; frame++) {
        char *m;
        while ((m = iap_poll(b)) != NULL) {
            char type[32] = "";
            iap_json_field(m, "type", type, sizeof type);
            seen++;
            if (strcmp(type, "7") == 0) {
                g_results++;
                char key[32] = "", product[128] = "", name[32] = "";
                iap_json_field(m, "key", key, sizeof key);
                iap_json_field(m, "productID", product, sizeof product);
                iap_json_field(m, "resultName", name, sizeof name);
                printf(" <- \"7\" purchase result: %s for %s, key %s\n", name, product, key);
                if (handle_purchases) grant(b, m);
                else printf("   (not granting yet)\n");
            } else if (strcmp(type, "revoked") == 0) {
                printf(" <- \"revoked\": %s\n", m);
                if (handle_purchases) take_back(b, m);
            } else if (strcmp(type, "entitlements") == 0) {
                if (!quiet_types) printf(" <- \"entitlements\": %s\n", m);
            } else {
                printf(" <- \"%s\": %s\n", type, m);
            }
            iap_free(m);
        }
        usleep(10 * 1000); /* one "frame" */
    }
    return seen;
}

static void *phase_buy_then_crash(void *unused) {
    (void)unused;
    iap_bridge *b = open_bridge();
    printf("\n1. Asking the store for products (one ID is unknown on purpose)\n");
    check(iap_request_products(b, "[\"coins_100\",\"remove_ads\",\"vip_monthly\",\"season_pass\",\"unknown_sword\"]"),
          "iap_request_products");
    pump(b, 0, 1);

    printf("\n2. The player taps Buy on 100 Coins, then on Remove Ads\n");
    int64_t k1 = 0, k2 = 0;
    check(iap_buy(b, "coins_100", now_ms(), &k1), "iap_buy coins_100");
    printf(" -> iap_buy(coins_100): key %lld\n", (long long)k1);
    check(iap_buy(b, "remove_ads", now_ms() + 1, &k2), "iap_buy remove_ads");
    printf(" -> iap_buy(remove_ads): key %lld\n", (long long)k2);
    /* The store answers in milliseconds; a slow disk may take longer (10 s at most). */
    for (int i = 0; i < 50 && g_results < 2; i++) pump(b, 0, 1);

    printf("\n3. The game crashes before granting or confirming (the process exits here)\n");
    fflush(stdout);
    _exit(0); /* no iap_close: a crash */
}

int main(int argc, char **argv) {
    const char *catalog = "samples/catalog/Game.storekit";
    const char *dir = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--catalog") == 0 && i + 1 < argc) catalog = argv[++i];
        else if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc) dir = argv[++i];
        else if (strcmp(argv[i], "--") == 0) continue;
        else { fprintf(stderr, "usage: iap-demo [--catalog FILE.storekit] [--dir WORKDIR]\n"); return 2; }
    }
    char catalog_abs[PATH_MAX];
    if (!realpath(catalog, catalog_abs)) {
        fprintf(stderr, "demo: cannot find the catalog %s (run from the repository root, or pass --catalog)\n", catalog);
        return 1;
    }
    char work[PATH_MAX];
    if (dir) {
        snprintf(work, sizeof work, "%s", dir);
        mkdir(work, 0700);
    } else {
        const char *made = iap_demo_dir_make("iap-demo");  /* removed at exit */
        if (!made) { perror("demo: mkdtemp"); return 1; }
        snprintf(work, sizeof work, "%s", made);
    }
    snprintf(g_save, sizeof g_save, "%s/game-save.txt", work);
    snprintf(g_config, sizeof g_config,
             "{\"store\":\"simulator\",\"dataDir\":\"%s/game-data\",\"catalog\":\"%s\","
             "\"simulator\":{\"stateDir\":\"%s/appstore\"}}", work, catalog_abs, work);

    printf("IAPBridge %s demo, simulated App Store\n", iap_version());
    printf("catalog: %s\nwork directory: %s (game-data/ is the SDK's outbox, appstore/ the simulated store; %s)\n",
           catalog_abs, work, dir ? "kept" : "removed at exit, --dir DIR keeps one");
    fflush(stdout);

    pid_t pid = fork();
    if (pid < 0) { perror("demo: fork"); return 1; }
    if (pid == 0) {
        /* The child calls the SDK from a thread it starts: the thread that
         * forked keeps the thread ID the Swift runtime cached for it in the
         * parent (iap_version above), which can deadlock a runtime lock it
         * shares with the SDK's threads (INTEGRATION.md, "fork()"). */
        pthread_t thread;
        if (pthread_create(&thread, NULL, phase_buy_then_crash, NULL) != 0) { perror("demo: pthread_create"); _exit(1); }
        pthread_join(thread, NULL);
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) { fprintf(stderr, "demo: first run failed\n"); return 1; }

    printf("\n4. The game starts again: the SDK re-delivers both unconfirmed results\n");
    iap_bridge *b = open_bridge();
    g_results = 0;
    int seen = 0;
    for (int i = 0; i < 50 && g_results < 2; i++) seen += pump(b, 1, 1);
    check(iap_close(b), "iap_close");
    printf("   the game now has %d coins\n", coins_in_save());

    printf("\n5. The game starts once more: nothing is pending, Remove Ads is owned\n");
    b = open_bridge();
    int again = 0;
    for (int frame = 0; frame < 20; frame++) {
        char *m;
        while ((m = iap_poll(b)) != NULL) {
            char type[32] = "";
            iap_json_field(m, "type", type, sizeof type);
            if (strcmp(type, "7") == 0) again++;
            if (strcmp(type, "entitlements") == 0) printf(" <- \"entitlements\": %s\n", m);
            iap_free(m);
        }
        usleep(10 * 1000);
    }
    char *answer = NULL;
    check(iap_simulator(b, "{\"op\":\"transactions\"}", &answer), "iap_simulator transactions");
    printf("   the store's view: %s\n", answer);
    iap_free(answer);
    check(iap_close(b), "iap_close");

    if (seen < 2 || again != 0 || coins_in_save() != 100) {
        fprintf(stderr, "demo: unexpected outcome (results re-delivered: %d, delivered after confirm: %d, coins: %d)\n",
                seen, again, coins_in_save());
        return 1;
    }
    printf("\nDone: the player paid twice and got 100 coins and Remove Ads exactly once, despite the crash.\n");
    return 0;
}
