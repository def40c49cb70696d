/*
 * The lifecycle demo: subscriptions, Ask to Buy and refunds on the simulated
 * App Store, as a game sees them.
 *
 *   swift run iap-lifecycle-demo
 *
 *   1. VIP Monthly is bought, renews (a store-initiated "7"), goes through a
 *      billing issue (a StoreKit message the game shows from its menu, then
 *      billing retry: VIP off until the card is fixed), then expires once
 *      auto-renew is off: "subscription" and "entitlements" messages tell
 *      the game.
 *   2. On a child's device the purchase waits for a parent ("pending"); the
 *      game restarts; the parent approves; the result arrives with the key
 *      of the original click.
 *   3. The player asks for a refund from the game's help screen
 *      (iap_request_refund): a "sheet" message, then Apple's refund arrives
 *      as a "revoked" message, confirmed like a purchase.
 *   4. The app transaction: the version the player first installed.
 */
#include "iap_bridge.h"
#include "iap_demo_dir.h"
#include "iap_json_field.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char g_config[8192];

/* The game's save, kept in memory for this demo (a game writes it to disk
 * before confirming): the keys it granted or took back, each handled once. */
static char g_keys[64][32];
static int g_nkeys;

static int save_has_key(const char *key) {
    for (int i = 0; i < g_nkeys; i++) if (strcmp(g_keys[i], key) == 0) return 1;
    return 0;
}

static void save_key(const char *key) {
    if (g_nkeys < 64) snprintf(g_keys[g_nkeys++], sizeof g_keys[0], "%s", key);
}


static void check(int32_t rc, const char *what) {
    if (rc != IAP_OK) {
        fprintf(stderr, "lifecycle demo: %s failed: %s: %s\n", what, iap_error_name(rc), iap_errmsg());
        exit(1);
    }
}

static void sim(iap_bridge *b, const char *cmd, char *answer, size_t size) {
    char *out = NULL;
    check(iap_simulator(b, cmd, &out), cmd);
    if (answer) snprintf(answer, size, "%s", out);
    iap_free(out);
}

/* Messages handled so far, by type: a step waits for the one it started
 * (10 s at most), so that a slow disk cannot reorder the story. */
static int g_results, g_pending, g_revoked, g_remove_ads;

/* One game frame's worth of messages, handled the way a game would; the
 * transaction of a Remove Ads "7" goes to last_txn, when given. */
static int frame(iap_bridge *b, char *last_txn, size_t size) {
    int n = 0;
    for (int i = 0; i < 10; i++) {
        char *m;
        while ((m = iap_poll(b)) != NULL) {
            char type[32] = "", key[32] = "", product[64] = "", name[32] = "", origin[16] = "", reason[32] = "";
            iap_json_field(m, "type", type, sizeof type);
            iap_json_field(m, "key", key, sizeof key);
            iap_json_field(m, "productID", product, sizeof product);
            n++;
            if (strcmp(type, "7") == 0) {
                g_results++;
                if (strcmp(product, "remove_ads") == 0) g_remove_ads++;
                iap_json_field(m, "resultName", name, sizeof name);
                iap_json_field(m, "origin", origin, sizeof origin);
                if (last_txn && strcmp(product, "remove_ads") == 0) iap_json_field(m, "transactionID", last_txn, size);
                /* Grant a success only, once per key; confirm every "7". */
                int grant = strcmp(name, "success") == 0 && !save_has_key(key);
                if (grant) save_key(key);  /* grant the item and save with its key */
                printf("   \"7\" %s for %s, key %s (%s)%s\n", name, product, key,
                       strcmp(origin, "store") == 0 ? "the store started it: a renewal or a purchase made elsewhere" : "the game's own click",
                       grant ? " -> granted, saved, confirmed" : " -> confirmed");
                check(iap_confirm(b, strtoll(key, NULL, 10)), "iap_confirm");
            } else if (strcmp(type, "pending") == 0) {
                g_pending++;
                iap_json_field(m, "reason", reason, sizeof reason);
                printf("   \"pending\" %s, key %s: waiting (%s); the game shows \"Ask your parent\"\n", product, key, reason);
            } else if (strcmp(type, "revoked") == 0) {
                /* A refund: take the item back once per key; confirm it like a "7". */
                g_revoked++;
                if (!save_has_key(key)) {
                    save_key(key);  /* take the item back and save with the refund's key */
                    printf("   \"revoked\" %s: the game takes it back, saves, confirms key %s\n", product, key);
                } else {
                    printf("   \"revoked\" %s, key %s: taken back before; confirmed\n", product, key);
                }
                check(iap_confirm(b, strtoll(key, NULL, 10)), "iap_confirm");
            } else if (strcmp(type, "subscription") == 0) {
                char state[32] = "", active[8] = "", renew[8] = "";
                iap_json_field(m, "state", state, sizeof state);
                iap_json_field(m, "active", active, sizeof active);
                iap_json_field(m, "willAutoRenew", renew, sizeof renew);
                iap_json_field(m, "reason", reason, sizeof reason);
                printf("   \"subscription\" (%s): VIP group %s -> VIP %s%s\n", reason, state,
                       strcmp(active, "true") == 0 ? "on" : "off", strcmp(renew, "true") == 0 ? ", renews" : "");
            } else if (strcmp(type, "storeMessage") == 0) {
                char state[16] = "";
                iap_json_field(m, "reason", reason, sizeof reason);
                iap_json_field(m, "state", state, sizeof state);
                printf("   \"storeMessage\" %s: %s%s\n", reason, state,
                       strcmp(state, "deferred") == 0 ? " (not during play: the game shows it from its menu)" : "");
            } else if (strcmp(type, "sheet") == 0) {
                char sheet[32] = "", outcome[32] = "";
                iap_json_field(m, "sheet", sheet, sizeof sheet);
                iap_json_field(m, "outcome", outcome, sizeof outcome);
                printf("   \"sheet\" %s: %s\n", sheet, outcome);
            } else if (strcmp(type, "app") == 0) {
                char version[64] = "";
                iap_json_field(m, "originalAppVersion", version, sizeof version);
                printf("   \"app\": first installed as version %s\n", version);
            } else if (strcmp(type, "entitlements") == 0) {
                iap_json_field(m, "reason", reason, sizeof reason);
                printf("   \"entitlements\" (%s): VIP %s, Remove Ads %s\n", reason,
                       strstr(m, "vip_monthly") ? "ACTIVE" : "off", strstr(m, "remove_ads") ? "owned" : "not owned");
            }
            iap_free(m);
        }
        usleep(5000);
    }
    return n;
}

int main(void) {
    char catalog[PATH_MAX];
    if (!realpath("samples/catalog/Game.storekit", catalog)) {
        fprintf(stderr, "lifecycle demo: run from the repository root\n");
        return 1;
    }
    const char *work = iap_demo_dir_make("iap-lifecycle");  /* removed at exit */
    if (!work) { perror("lifecycle demo: mkdtemp"); return 1; }
    snprintf(g_config, sizeof g_config,
             "{\"store\":\"simulator\",\"dataDir\":\"%s/game-data\",\"catalog\":\"%s\","
             "\"simulator\":{\"stateDir\":\"%s/appstore\",\"tickMs\":0},\"storeMessages\":\"defer\"}", work, catalog, work);
    iap_bridge *b = NULL;
    char answer[4096], id[32], cmd[256], txn[64] = "";

    printf("IAPBridge %s: the store lifecycle on the simulated App Store (%s, removed at exit)\n", iap_version(), work);
    check(iap_open(g_config, &b), "iap_open");
    frame(b, NULL, 0);

    printf("\n1. VIP Monthly: bought, renewed by the store, a billing issue, then expired\n");
    check(iap_buy(b, "vip_monthly", 1000, NULL), "iap_buy");
    /* Bought before the clock moves: its "7" first. */
    for (int i = 0; i < 200 && g_results == 0; i++) frame(b, NULL, 0);
    printf("   ...32 days pass on the store's clock\n");
    sim(b, "{\"op\":\"advance\",\"seconds\":2764800}", NULL, 0);
    frame(b, NULL, 0);
    printf("   ...the player's card expires\n");
    sim(b, "{\"op\":\"billing_issue\",\"productID\":\"vip_monthly\"}", NULL, 0);
    frame(b, NULL, 0);
    printf("   ...the player opens the pause menu: the game shows StoreKit's message now\n");
    check(iap_show_store_messages(b), "iap_show_store_messages");
    frame(b, NULL, 0);
    printf("   ...30 days pass: the renewal cannot be charged\n");
    sim(b, "{\"op\":\"advance\",\"seconds\":2592000}", NULL, 0);
    frame(b, NULL, 0);
    printf("   ...the player fixes the card\n");
    sim(b, "{\"op\":\"billing_resolve\",\"productID\":\"vip_monthly\"}", NULL, 0);
    frame(b, NULL, 0);
    printf("   ...the player turns auto-renew off; 40 more days pass\n");
    sim(b, "{\"op\":\"auto_renew\",\"productID\":\"vip_monthly\",\"enabled\":false}", NULL, 0);
    sim(b, "{\"op\":\"advance\",\"seconds\":3456000}", NULL, 0);
    frame(b, NULL, 0);

    printf("\n2. Ask to Buy: a child taps Buy on Remove Ads\n");
    sim(b, "{\"op\":\"ask_to_buy\",\"enabled\":true}", NULL, 0);
    check(iap_buy(b, "remove_ads", 2000, NULL), "iap_buy");
    for (int i = 0; i < 200 && g_pending == 0; i++) frame(b, NULL, 0);
    printf("   ...the game is closed and started again\n");
    check(iap_close(b), "iap_close");
    check(iap_open(g_config, &b), "iap_open");
    frame(b, NULL, 0);
    sim(b, "{\"op\":\"pending\"}", answer, sizeof answer);
    iap_json_field(answer, "id", id, sizeof id);
    printf("   ...a parent approves request %s\n", id);
    snprintf(cmd, sizeof cmd, "{\"op\":\"approve\",\"id\":\"%s\"}", id);
    sim(b, cmd, NULL, 0);
    for (int i = 0; i < 200 && g_remove_ads == 0; i++) frame(b, txn, sizeof txn);

    printf("\n3. The player asks for a refund of Remove Ads from the game's help screen (transaction %s)\n", txn);
    check(iap_request_refund(b, txn), "iap_request_refund");
    for (int i = 0; i < 200 && g_revoked == 0; i++) frame(b, NULL, 0);

    printf("\n4. The game checks when the player first installed it (a paid game gone free)\n");
    check(iap_app_transaction(b), "iap_app_transaction");
    frame(b, NULL, 0);
    check(iap_close(b), "iap_close");

    printf("\n5. Next start: nothing left to deliver\n");
    check(iap_open(g_config, &b), "iap_open");
    int left = 0;
    for (int i = 0; i < 10; i++) {
        char *m;
        while ((m = iap_poll(b)) != NULL) {
            if (strstr(m, "\"type\":\"7\"") || strstr(m, "\"type\":\"revoked\"")) left++;
            iap_free(m);
        }
        usleep(5000);
    }
    check(iap_close(b), "iap_close");
    printf("   %d results waiting\n", left);
    return left == 0 ? 0 : 1;
}
