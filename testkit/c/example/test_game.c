/*
 * The example game's purchase code (game.c) under the C test kit: killed
 * between paying and granting at every point (polling, and taking messages
 * through iap_set_callback), restarted, granted exactly once;
 * Ask to Buy approved and declined while the game is closed; a refund; a
 * failed purchase; a lapsed subscription; a planted double grant the check
 * catches.
 *
 *   cc -Iinclude -Itestkit/c testkit/c/example/test_game.c -L<dir> -lIAPBridge -o test_game
 *   IAP_CATALOG=/abs/Game.storekit ./test_game
 */
#define IAPTK_INTERCEPT
#include "iap_testkit.h"
#include "game.c"

static int passed, failed;
static const char *catalog;

typedef struct { char save[400]; const char *buy; } play_args;

static void child(const char *config, void *ctx) {
    play_args *a = ctx;
    game_play(config, a->save, a->buy);
}

static iaptk_run play(iaptk_kit *kit, const char *buy, const char *kill_at, const char *store_ops) {
    play_args a;
    snprintf(a.save, sizeof a.save, "%s/save", kit->root);
    a.buy = buy;
    return iaptk_run_game(kit, child, &a, kill_at, store_ops);
}

static game_save *loaded(iaptk_kit *kit) {
    static game_save s;
    char path[400];
    snprintf(path, sizeof path, "%s/save", kit->root);
    game_load(path, &s);
    return &s;
}

/* The game's save as the kit's records; returns the problems found. */
static int check(iaptk_kit *kit, game_save *s) {
    iaptk_record g[GAME_MAX], t[GAME_MAX];
    for (int i = 0; i < s->ngrants; i++) g[i] = (iaptk_record){s->grants[i].key, s->grants[i].productID, s->grants[i].transactionID};
    for (int i = 0; i < s->ntakebacks; i++) t[i] = (iaptk_record){s->takebacks[i].key, s->takebacks[i].productID, s->takebacks[i].transactionID};
    return iaptk_expect_granted_exactly_once(kit, g, (size_t)s->ngrants, t, (size_t)s->ntakebacks);
}

#define REQUIRE(c) do { if (!(c)) { fprintf(stderr, "  %s:%d: %s\n", __FILE__, __LINE__, #c); return 0; } } while (0)

static int killed_then_restarted(iaptk_kit *kit, const char *point) {
    iaptk_run r = play(kit, "coins_100", point, NULL);
    REQUIRE(strcmp(r.killed_at, point) == 0 && r.signal == SIGKILL);
    REQUIRE(play(kit, NULL, NULL, NULL).exit_code == 0);
    game_save *s = loaded(kit);
    REQUIRE(check(kit, s) == 0);
    REQUIRE(s->coins == 100 && s->ngrants == 1);
    return 1;
}
static int t_after_charge(iaptk_kit *k) { return killed_then_restarted(k, "after_charge"); }
static int t_before_save(iaptk_kit *k) { return killed_then_restarted(k, "before_save"); }
static int t_before_confirm(iaptk_kit *k) { return killed_then_restarted(k, "before_confirm"); }
static int t_after_confirm(iaptk_kit *k) { return killed_then_restarted(k, "after_confirm"); }

/* The same with a game that takes its messages through iap_set_callback. */
static int killed_then_restarted_callback_mode(iaptk_kit *kit, const char *point) {
    game_use_callback = 1; /* inherited by the children (fork) */
    int ok = killed_then_restarted(kit, point);
    game_use_callback = 0;
    return ok;
}
static int t_cb_after_charge(iaptk_kit *k) { return killed_then_restarted_callback_mode(k, "after_charge"); }
static int t_cb_before_save(iaptk_kit *k) { return killed_then_restarted_callback_mode(k, "before_save"); }
static int t_cb_before_confirm(iaptk_kit *k) { return killed_then_restarted_callback_mode(k, "before_confirm"); }
static int t_cb_after_confirm(iaptk_kit *k) { return killed_then_restarted_callback_mode(k, "after_confirm"); }

static int t_ask_to_buy_approved(iaptk_kit *kit) {
    char id[64];
    REQUIRE(iaptk_ask_to_buy(kit, 1) == IAP_OK);
    REQUIRE(play(kit, "coins_100", NULL, NULL).exit_code == 0);
    REQUIRE(loaded(kit)->coins == 0);
    REQUIRE(iaptk_pending(kit, "coins_100", id, sizeof id) == 0);
    REQUIRE(iaptk_approve(kit, "coins_100") == IAP_OK);
    REQUIRE(strcmp(play(kit, NULL, "after_charge", NULL).killed_at, "after_charge") == 0);
    REQUIRE(play(kit, NULL, NULL, NULL).exit_code == 0);
    game_save *s = loaded(kit);
    REQUIRE(check(kit, s) == 0 && s->coins == 100);
    return 1;
}

static int t_ask_to_buy_declined(iaptk_kit *kit) {
    REQUIRE(iaptk_ask_to_buy(kit, 1) == IAP_OK);
    REQUIRE(play(kit, "remove_ads", NULL, NULL).exit_code == 0);
    REQUIRE(iaptk_decline(kit, "remove_ads") == IAP_OK);
    REQUIRE(play(kit, NULL, NULL, NULL).exit_code == 0);
    game_save *s = loaded(kit);
    REQUIRE(check(kit, s) == 0 && !s->remove_ads && s->ngrants == 0);
    return 1;
}

static int t_refund(iaptk_kit *kit) {
    char tid[32];
    static iaptk_ledger l;
    REQUIRE(play(kit, "coins_100", NULL, NULL).exit_code == 0);
    REQUIRE(play(kit, "coins_100", NULL, NULL).exit_code == 0);
    REQUIRE(iaptk_refund(kit, "coins_100", tid) == IAP_OK);
    REQUIRE(strcmp(play(kit, NULL, "before_confirm", NULL).killed_at, "before_confirm") == 0);
    REQUIRE(play(kit, NULL, NULL, NULL).exit_code == 0);
    game_save *s = loaded(kit);
    REQUIRE(check(kit, s) == 0);
    REQUIRE(iaptk_read_ledger(kit, &l) == IAP_OK);
    REQUIRE(s->coins == 100 * iaptk_net(&l, "coins_100") && s->coins == 100 && s->ntakebacks == 1);
    REQUIRE(strcmp(s->takebacks[0].transactionID, tid) == 0);
    return 1;
}

static int t_failed_purchase(iaptk_kit *kit) {
    REQUIRE(play(kit, "coins_100", NULL, "[{\"op\":\"fail_next\",\"error\":\"networkError\"}]").exit_code == 0);
    static iaptk_ledger l;
    REQUIRE(iaptk_read_ledger(kit, &l) == IAP_OK && l.count == 0);
    game_save *s = loaded(kit);
    REQUIRE(check(kit, s) == 0 && s->coins == 0);
    return 1;
}

static int t_lapsed_subscription(iaptk_kit *kit) {
    REQUIRE(play(kit, "vip_monthly", NULL, NULL).exit_code == 0);
    REQUIRE(loaded(kit)->vip == 1);
    REQUIRE(iaptk_lapse_subscription(kit, "vip_monthly") == IAP_OK);
    REQUIRE(play(kit, NULL, NULL, NULL).exit_code == 0);
    game_save *s = loaded(kit);
    REQUIRE(check(kit, s) == 0 && s->vip == 0);
    return 1;
}

static int t_catches_double_grant(iaptk_kit *kit) {
    game_bug_no_dedup = 1; /* inherited by the children (fork) */
    play(kit, "coins_100", "before_confirm", NULL);
    play(kit, NULL, NULL, NULL);
    game_bug_no_dedup = 0;
    game_save *s = loaded(kit);
    REQUIRE(s->coins == 200); /* the planted bug happened */
    fprintf(stderr, "  (expected problems follow)\n");
    REQUIRE(check(kit, s) > 0);
    return 1;
}

static int t_catches_lost_grant(iaptk_kit *kit) {
    play(kit, "coins_100", "after_charge", NULL); /* never restarted: never granted */
    fprintf(stderr, "  (expected problems follow)\n");
    REQUIRE(iaptk_expect_granted_exactly_once(kit, NULL, 0, NULL, 0) == 2); /* not granted, left unconfirmed */
    return 1;
}

/* A store holding more charges than the ledger has room for: reading it
 * says so (it was cut at 256 silently, and a grant missing past the cut
 * passed the exactly-once check). */
static int t_ledger_overflow(iaptk_kit *kit) {
    (void)kit;
    static char json[(IAPTK_MAX_TX + 8) * 64];
    static iaptk_ledger l;
    size_t n = (size_t)snprintf(json, sizeof json, "{\"transactions\":[");
    for (int i = 0; i < IAPTK_MAX_TX + 1; i++)
        n += (size_t)snprintf(json + n, sizeof json - n, "%s{\"transactionID\":\"%d\",\"productID\":\"coins_100\"}", i ? "," : "", i);
    snprintf(json + n, sizeof json - n, "]}");
    iaptk__read_tx(json, &l);
    REQUIRE(l.overflow == 1 && l.count == IAPTK_MAX_TX);
    return 1;
}

static void test(const char *name, int (*fn)(iaptk_kit *)) {
    iaptk_kit kit;
    if (iaptk_init(&kit, catalog) != 0) { perror("iaptk_init"); exit(1); }
    int ok = fn(&kit);
    iaptk_cleanup(&kit);
    if (ok) passed++; else failed++;
    printf("%s %s\n", ok ? "ok  " : "FAIL", name);
    fflush(stdout);
}

int main(void) {
    catalog = getenv("IAP_CATALOG");
    if (!catalog) { fprintf(stderr, "set IAP_CATALOG to the .storekit file\n"); return 2; }
    test("killed at after_charge, restarted: granted exactly once", t_after_charge);
    test("killed at before_save, restarted: granted exactly once", t_before_save);
    test("killed at before_confirm, restarted: granted exactly once", t_before_confirm);
    test("killed at after_confirm, restarted: granted exactly once", t_after_confirm);
    test("callback mode: killed at after_charge, restarted: granted exactly once", t_cb_after_charge);
    test("callback mode: killed at before_save, restarted: granted exactly once", t_cb_before_save);
    test("callback mode: killed at before_confirm, restarted: granted exactly once", t_cb_before_confirm);
    test("callback mode: killed at after_confirm, restarted: granted exactly once", t_cb_after_confirm);
    test("Ask to Buy approved while the game is closed", t_ask_to_buy_approved);
    test("Ask to Buy declined", t_ask_to_buy_declined);
    test("a refund is taken back once", t_refund);
    test("a failed purchase grants nothing", t_failed_purchase);
    test("a lapsed subscription ends VIP", t_lapsed_subscription);
    test("the check catches a double grant", t_catches_double_grant);
    test("the check catches a lost grant and an unconfirmed result", t_catches_lost_grant);
    test("a ledger with more charges than it holds says so, never a truncated list", t_ledger_overflow);
    printf("c testkit: %d passed, %d failed\n", passed, failed);
    return failed == 0 && passed > 0 ? 0 : 1;
}
