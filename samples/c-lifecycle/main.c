/*
 * The lifecycle demo: subscriptions, Ask to Buy and refunds on the simulated
 * App Store, as a game sees them.
 *
 *   swift run iap-lifecycle-demo
 *
 *   1. VIP Monthly is bought, renews (a store-initiated "7"), then expires
 *      once auto-renew is off: "entitlements" messages tell the game.
 *   2. On a child's device the purchase waits for a parent ("pending"); the
 *      game restarts; the parent approves; the result arrives with the key
 *      of the original click.
 *   3. The player gets a refund: a "revoked" message, confirmed like a purchase.
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

/* One game frame's worth of messages, handled the way a game would. */
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
                iap_json_field(m, "resultName", name, sizeof name);
                iap_json_field(m, "origin", origin, sizeof origin);
                if (last_txn) iap_json_field(m, "transactionID", last_txn, size);
                printf("   \"7\" %s for %s, key %s (%s)%s\n", name, product, key,
                       strcmp(origin, "store") == 0 ? "the store started it: a renewal or a purchase made elsewhere" : "the game's own click",
                       strcmp(name, "success") == 0 ? " -> granted, saved, confirmed" : " -> confirmed");
                check(iap_confirm(b, strtoll(key, NULL, 10)), "iap_confirm");
            } else if (strcmp(type, "pending") == 0) {
                iap_json_field(m, "reason", reason, sizeof reason);
                printf("   \"pending\" %s, key %s: waiting (%s); the game shows \"Ask your parent\"\n", product, key, reason);
            } else if (strcmp(type, "revoked") == 0) {
                printf("   \"revoked\" %s: the game takes it back, saves, confirms key %s\n", product, key);
                check(iap_confirm(b, strtoll(key, NULL, 10)), "iap_confirm");
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
             "\"simulator\":{\"stateDir\":\"%s/appstore\",\"tickMs\":0}}", work, catalog, work);
    iap_bridge *b = NULL;
    char answer[4096], id[32], cmd[256], txn[64] = "";

    printf("IAPBridge %s: the store lifecycle on the simulated App Store (%s, removed at exit)\n", iap_version(), work);
    check(iap_open(g_config, &b), "iap_open");
    frame(b, NULL, 0);

    printf("\n1. VIP Monthly: bought, renewed by the store, then expired\n");
    check(iap_buy(b, "vip_monthly", 1000, NULL), "iap_buy");
    frame(b, NULL, 0);
    printf("   ...32 days pass on the store's clock\n");
    sim(b, "{\"op\":\"advance\",\"seconds\":2764800}", NULL, 0);
    frame(b, NULL, 0);
    printf("   ...the player turns auto-renew off; 40 more days pass\n");
    sim(b, "{\"op\":\"auto_renew\",\"productID\":\"vip_monthly\",\"enabled\":false}", NULL, 0);
    sim(b, "{\"op\":\"advance\",\"seconds\":3456000}", NULL, 0);
    frame(b, NULL, 0);

    printf("\n2. Ask to Buy: a child taps Buy on Remove Ads\n");
    sim(b, "{\"op\":\"ask_to_buy\",\"enabled\":true}", NULL, 0);
    check(iap_buy(b, "remove_ads", 2000, NULL), "iap_buy");
    frame(b, NULL, 0);
    printf("   ...the game is closed and started again\n");
    check(iap_close(b), "iap_close");
    check(iap_open(g_config, &b), "iap_open");
    frame(b, NULL, 0);
    sim(b, "{\"op\":\"pending\"}", answer, sizeof answer);
    iap_json_field(answer, "id", id, sizeof id);
    printf("   ...a parent approves request %s\n", id);
    snprintf(cmd, sizeof cmd, "{\"op\":\"approve\",\"id\":\"%s\"}", id);
    sim(b, cmd, NULL, 0);
    frame(b, txn, sizeof txn);

    printf("\n3. The player asks Apple for a refund of Remove Ads (transaction %s)\n", txn);
    snprintf(cmd, sizeof cmd, "{\"op\":\"refund\",\"transactionID\":\"%s\"}", txn);
    sim(b, cmd, NULL, 0);
    frame(b, NULL, 0);
    check(iap_close(b), "iap_close");

    printf("\n4. Next start: nothing left to deliver\n");
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
