// Test of include/iap_bridge.hpp against the real library.
//
//   bash Tests/bindings/cpp/run.sh        (g++ and clang++, with and without exceptions)
//   or: c++ -std=c++17 -Wall -Wextra -pedantic -Werror -Iinclude Tests/bindings/cpp/test.cpp
//       -L<dir of libIAPBridge.so> -lIAPBridge -o test; ./test samples/catalog/Game.storekit
//
// Also builds with -fno-exceptions (the throwing parts are then left out).
#include "iap_bridge.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

int passed = 0, failed = 0;

void check(bool ok, const std::string &what) {
    if (ok) {
        passed++;
    } else {
        failed++;
        std::fprintf(stderr, "cpp: FAIL: %s\n", what.c_str());
    }
}

template <class R>
void check_code(const R &r, int32_t code, const std::string &what) {
    bool ok = r.code() == code;
    check(ok, what + ": expected " + iap::error_name(code) + ", got " + r.name() + " (" + r.message() + ")");
    if (code != iap::OK) check(!r.message().empty(), what + ": an error carries a message");
}

int64_t now_ms() {
    using namespace std::chrono;
    return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

// Polls (up to ~5 s) until a message of `type` arrives; other messages are dropped.
std::optional<std::string> wait_for(iap::Bridge &b, const std::string &type, int max_ms = 5000) {
    for (int i = 0; i < max_ms / 10; i++) {
        auto r = b.poll(std::nothrow);
        if (!r.ok()) return std::nullopt;
        if (auto &m = r.value()) {
            if (iap::field(*m, "type") == type) return m;
            continue;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return std::nullopt;
}

void test_helpers() {
    check(iap::parse_key("9007199254740993") == int64_t(9007199254740993LL), "parse_key above 2^53 is exact");
    check(iap::parse_key("-9223372036854775808") == INT64_MIN, "parse_key INT64_MIN");
    check(iap::parse_key("9223372036854775807") == INT64_MAX, "parse_key INT64_MAX");
    check(!iap::parse_key("9223372036854775808"), "parse_key refuses overflow");
    check(!iap::parse_key("12a") && !iap::parse_key("") && !iap::parse_key("+1") && !iap::parse_key("1.5"),
          "parse_key refuses non-integers");
    const std::string m =
        R"({"type":"7","message":"a \"key\":\"1\" inside","nested":{"key":"2"},"list":[{"key":"3"}],)"
        R"("key":"9007199254740993","productID":"caf\u00e9 \ud83d\ude00 \"q\" \\","quantity":1,"expiresDate":null})";
    check(iap::field(m, "key") == std::string("9007199254740993"), "field finds the top-level key only");
    check(iap::field(m, "productID") == std::string("caf\xc3\xa9 \xf0\x9f\x98\x80 \"q\" \\"), "field decodes escapes");
    check(iap::field(m, "quantity") == std::string("1"), "field reads a number");
    check(iap::field(m, "expiresDate") == std::string("null"), "field reads null");
    check(iap::field(m, "nested") == std::string(R"({"key":"2"})"), "field reads an object's text");
    check(!iap::field(m, "missing"), "field: absent");
    check(!iap::field("not json", "type"), "field: not an object");
    check(iap::json_quote("a\"b\\c\n\x01") == "\"a\\\"b\\\\c\\n\\u0001\"", "json_quote escapes");
    check(std::string(iap::error_name(-17)) == "IAP_E_NOT_DELIVERED" &&
              std::string(iap::error_name(-18)) == "IAP_E_RESOURCE" &&
              std::string(iap::error_name(-19)) == "IAP_E_STORE",
          "the codes announced for 1.1 are named");
    check(std::string(iap::error_name(iap::E_DUPLICATE_KEY)) == "IAP_E_DUPLICATE_KEY", "error_name");
    check(std::string(iap::error_name(-1000)) == "IAP_E_UNKNOWN_CODE", "error_name of an unknown code asks the library");
}

// Subscription offers: the sample catalog's free trial on the "7" and the
// entitlement; buy_offer and manage_subscription_group (good, unknown, empty,
// and a NULL through the C API); with a win-back offer added to the catalog,
// the offer listed once lapsed and bought.
void test_offers(const std::string &dir, const std::string &catalog) {
    std::ifstream in(catalog);
    std::stringstream text;
    text << in.rdbuf();
    std::string edited = text.str();
    const std::string anchor = "\"productID\" : \"vip_monthly\",";
    size_t at = edited.find(anchor);
    check(at != std::string::npos && edited.find(anchor, at + 1) == std::string::npos, "the sample catalog has one " + anchor);
    if (at == std::string::npos) return;
    edited.insert(at, "\"winbackOffers\" : [ { \"offerID\" : \"wb_half\", \"referenceName\" : \"Half price\", \"displayPrice\" : \"1.49\", "
                      "\"numberOfPeriods\" : 2, \"paymentMode\" : \"payAsYouGo\", \"subscriptionPeriod\" : \"P1M\" } ],\n");
    const std::string path = dir + "/WinBack.storekit";
    std::ofstream(path) << edited;
    auto opened = iap::Bridge::open(iap::simulator_config(dir + "/offers-data", path, dir + "/offers-state"), std::nothrow);
    check_code(opened, iap::OK, "open for offers");
    if (!opened.ok()) return;
    iap::Bridge b = std::move(opened).value();

    auto trial = b.buy("vip_monthly", 0, std::nothrow);
    check_code(trial, iap::OK, "buy vip_monthly (its first subscription)");
    auto tm = wait_for(b, "7");
    std::string offer = tm ? iap::field(*tm, "offer").value_or("{}") : "{}";
    check(tm && trial.ok() && iap::parse_key(iap::field(*tm, "key").value_or("")) == trial.value() &&
              iap::field(*tm, "result") == std::string("0") && iap::field(*tm, "price") == std::string("0") &&
              iap::field(offer, "type") == std::string("introductory") && iap::field(offer, "id") == std::string("null") &&
              iap::field(offer, "paymentMode") == std::string("freeTrial") && iap::field(offer, "period") == std::string("P1W"),
          "the \"7\" of the free trial: price 0, offer introductory/freeTrial/P1W: " + tm.value_or("none"));
    auto ent = wait_for(b, "entitlements");
    while (ent && iap::field(*ent, "reason") != std::string("change")) ent = wait_for(b, "entitlements");
    check(ent && ent->find("\"offer\":{\"type\":\"introductory\"") != std::string::npos,
          "the entitlement carries the offer: " + ent.value_or("none"));
    if (trial.ok()) check_code(b.confirm(trial.value(), std::nothrow), iap::OK, "confirm the trial");

    auto unknown = b.buy_offer("vip_monthly", "no_such_offer", 0, std::nothrow);
    check_code(unknown, iap::OK, "buy_offer with an unknown offer");
    auto um = wait_for(b, "7");
    check(um && unknown.ok() && iap::parse_key(iap::field(*um, "key").value_or("")) == unknown.value() &&
              iap::field(*um, "result") == std::string("5"),
          "an unknown offer: a \"7\" result 5: " + um.value_or("none"));
    if (unknown.ok()) check_code(b.confirm(unknown.value(), std::nothrow), iap::OK, "confirm the refusal");
    check_code(b.buy_offer("vip_monthly", "", 0, std::nothrow), iap::E_INVALID_ARG, "buy_offer with an empty offer");
    check_code(b.buy_offer("vip_monthly", std::string("wb\0x", 4), 0, std::nothrow), iap::E_INVALID_ARG, "buy_offer with a NUL");
    int64_t k = 7;
    check(iap_buy_offer(b.native_handle(), "vip_monthly", nullptr, 0, &k) == IAP_E_NULL_ARG && k == 0,
          "iap_buy_offer with a NULL offer: IAP_E_NULL_ARG, key 0");
    check(iap_manage_subscription_group(b.native_handle(), nullptr) == IAP_E_NULL_ARG, "iap_manage_subscription_group(NULL): IAP_E_NULL_ARG");

    check_code(b.manage_subscription_group("6A0000A0", std::nothrow), iap::OK, "manage_subscription_group 6A0000A0");
    auto gs = wait_for(b, "sheet");
    check(gs && iap::field(*gs, "sheet") == std::string("manageSubscriptions") && iap::field(*gs, "outcome") == std::string("dismissed") &&
              iap::field(*gs, "subscriptionGroupID") == std::string("6A0000A0"),
          "the group's manage sheet: " + gs.value_or("none"));
    check_code(b.manage_subscription_group("no_such_group", std::nothrow), iap::E_INVALID_ARG, "manage_subscription_group of an unknown group");
    check_code(b.manage_subscription_group("", std::nothrow), iap::E_INVALID_ARG, "manage_subscription_group of an empty ID");
#if IAP_HPP_EXCEPTIONS
    try {
        b.manage_subscription_group("no_such_group");
        check(false, "manage_subscription_group(no_such_group) must throw");
    } catch (const iap::Error &e) {
        check(e.code() == iap::E_INVALID_ARG, std::string("manage_subscription_group throws IAP_E_INVALID_ARG, got ") + e.name());
    }
    try {
        b.buy_offer("vip_monthly", "");
        check(false, "buy_offer(\"\") must throw");
    } catch (const iap::Error &e) {
        check(e.code() == iap::E_INVALID_ARG, std::string("buy_offer(\"\") throws IAP_E_INVALID_ARG, got ") + e.name());
    }
#endif

    // Lapsed: the win-back offer is listed, and buy_offer buys it.
    check_code(b.simulator("{\"op\":\"auto_renew\",\"productID\":\"vip_monthly\",\"enabled\":false}", std::nothrow), iap::OK, "auto-renew off");
    check_code(b.simulator("{\"op\":\"advance\",\"seconds\":864000}", std::nothrow), iap::OK, "advance 10 days");
    check_code(b.request_products({"vip_monthly"}, std::nothrow), iap::OK, "request_products vip_monthly");
    auto pm = wait_for(b, "999");
    std::string items = pm ? iap::field(*pm, "items").value_or("[]") : "[]";
    // One item: its object is the array's text without the brackets.
    std::string item = items.size() > 2 ? items.substr(1, items.size() - 2) : "{}";
    std::string wbs = iap::field(item, "winBackOffers").value_or("[]");
    std::string wb = wbs.size() > 2 ? wbs.substr(1, wbs.size() - 2) : "{}";
    check(iap::field(wb, "id") == std::string("wb_half") && iap::field(wb, "type") == std::string("winBack") &&
              iap::field(wb, "paymentMode") == std::string("payAsYouGo") && iap::field(wb, "period") == std::string("P1M") &&
              iap::field(wb, "periods") == std::string("2") && iap::field(wb, "price") == std::string("1.49"),
          "lapsed: the \"999\" lists the win-back offer: " + pm.value_or("none"));
    auto won = b.buy_offer("vip_monthly", "wb_half", 9007199254740993LL, std::nothrow);
    check(won.ok() && won.value() == 9007199254740993LL, "buy_offer wb_half: the key is the click time 2^53 + 1, exact");
    auto wm = wait_for(b, "7");
    std::string wo = wm ? iap::field(*wm, "offer").value_or("{}") : "{}";
    check(wm && iap::field(*wm, "key") == std::string("9007199254740993") && iap::field(*wm, "result") == std::string("0") &&
              iap::field(*wm, "price") == std::string("1.49") && iap::field(wo, "type") == std::string("winBack") &&
              iap::field(wo, "id") == std::string("wb_half"),
          "the win-back \"7\": the offer's price, offer winBack wb_half: " + wm.value_or("none"));
    if (won.ok()) check_code(b.confirm(won.value(), std::nothrow), iap::OK, "confirm the win-back purchase");
    check_code(b.close(std::nothrow), iap::OK, "close the offers bridge");
    check_code(b.buy_offer("vip_monthly", "wb_half", 0, std::nothrow), iap::E_CLOSED, "buy_offer after close");
    check_code(b.manage_subscription_group("6A0000A0", std::nothrow), iap::E_CLOSED, "manage_subscription_group after close");
}

// Waits (up to 5 s) until done() holds, with mu locked.
template <class F>
bool wait_until(std::mutex &mu, std::condition_variable &cv, F done) {
    std::unique_lock<std::mutex> lock(mu);
    return cv.wait_for(lock, std::chrono::seconds(5), done);
}

#if IAP_HPP_EXCEPTIONS
std::mutex reported_mu;
std::condition_variable reported_cv;
std::vector<std::string> reported;

void record_callback_error(const char *what) {
    std::lock_guard<std::mutex> lock(reported_mu);
    reported.emplace_back(what);
    reported_cv.notify_all();
}

// A handler that throws (a failed save, a JSON library's parse error) must
// not take the game down: the exception is reported, the next message still
// comes to the handler, and the "7" it did not confirm comes again at the
// next open.
void test_callback_throws(const std::string &dir, const std::string &catalog) {
    const std::string config = iap::simulator_config(dir + "/throw-data", catalog, dir + "/throw-state");
    iap::set_callback_error_handler(record_callback_error);
    int64_t key = 0;
    {
        iap::Bridge b = iap::Bridge::open(config);
        b.set_callback([](std::string_view m) {
            auto type = iap::field(m, "type");
            if (type == std::string("7")) throw std::runtime_error("save failed: disk full");
            if (type == std::string("999")) throw 42;
        });
        key = b.buy("coins_100");
        b.request_products({"coins_100"});
        bool both = wait_until(reported_mu, reported_cv, [] { return reported.size() >= 2; });
        std::lock_guard<std::mutex> lock(reported_mu);
        auto has = [](const char *what) { return std::find(reported.begin(), reported.end(), what) != reported.end(); };
        check(both && reported.size() == 2 && has("save failed: disk full") && has("an exception not derived from std::exception"),
              "a throwing handler: both exceptions reported, and the game goes on (" + std::to_string(reported.size()) + " reported)");
        b.close();
    }
    iap::set_callback_error_handler(nullptr);
    iap::Bridge again = iap::Bridge::open(config);
    auto m = wait_for(again, "7");
    check(m && iap::parse_key(iap::field(*m, "key").value_or("")) == key && iap::field(*m, "result") == std::string("0"),
          "the \"7\" whose handler threw comes again at the next open: " + m.value_or("none"));
    check_code(again.confirm(key, std::nothrow), iap::OK, "confirm it after the reopen");
}
#endif

// The C API lets a callback close its own bridge; so does the wrapper: a
// handler that closes (or destroys) its Bridge, then reads what it captured.
// Before the wrapper deferred freeing its callbacks, this read freed memory
// (run.sh runs this test under AddressSanitizer too).
void test_close_from_callback(const std::string &dir, const std::string &catalog) {
    std::mutex mu;
    std::condition_variable cv;
    struct Who { char name[64] = "the shop screen"; };
    const Who who;  // captured by value: it lives in the handler's std::function, on the heap
    {
        auto opened = iap::Bridge::open(iap::simulator_config(dir + "/cbclose-data", catalog, dir + "/cbclose-state"), std::nothrow);
        check_code(opened, iap::OK, "open for the close-from-callback test");
        if (!opened.ok()) return;
        iap::Bridge b = std::move(opened).value();
        bool done = false;
        int32_t code = 1;
        std::string seen;
        check_code(b.set_callback([&, who](std::string_view m) {
                       if (iap::field(m, "type") != std::string("7")) return;
                       auto closed = b.close(std::nothrow);  // the player quit from the shop
                       std::string copy = who.name;          // the capture, after the close
                       std::lock_guard<std::mutex> lock(mu);
                       code = closed.code();
                       seen = copy;
                       done = true;
                       cv.notify_all();
                   }, std::nothrow),
                   iap::OK, "set_callback (a handler that closes its Bridge)");
        check_code(b.buy("coins_100", 0, std::nothrow), iap::OK, "buy (its \"7\" closes the bridge)");
        bool ok = wait_until(mu, cv, [&] { return done; });
        check(ok && code == iap::OK && seen == who.name, "close() from the handler: IAP_OK, and the handler's captures still valid after it");
        check(!b.is_open(), "the Bridge closed from its handler is closed");
        check_code(b.poll(std::nothrow), iap::E_CLOSED, "poll after the handler closed the Bridge");
    }
    {
        auto opened = iap::Bridge::open(iap::simulator_config(dir + "/cbdestroy-data", catalog, dir + "/cbdestroy-state"), std::nothrow);
        check_code(opened, iap::OK, "open for the destroy-from-callback test");
        if (!opened.ok()) return;
        auto owner = std::make_unique<iap::Bridge>(std::move(opened).value());
        bool done = false;
        std::string seen;
        check_code(owner->set_callback([&, who](std::string_view m) {
                       if (iap::field(m, "type") != std::string("7")) return;
                       owner.reset();           // the game frees the object that owns the Bridge
                       std::string copy = who.name;  // the capture, after ~Bridge
                       std::lock_guard<std::mutex> lock(mu);
                       seen = copy;
                       done = true;
                       cv.notify_all();
                   }, std::nothrow),
                   iap::OK, "set_callback (a handler that destroys its Bridge)");
        check_code(owner->buy("coins_100", 0, std::nothrow), iap::OK, "buy (its \"7\" destroys the Bridge)");
        bool ok = wait_until(mu, cv, [&] { return done; });
        check(ok && seen == who.name, "~Bridge from the handler: the handler's captures still valid after it");
    }
}

}  // namespace

int main(int argc, char **argv) {
    const char *catalog_arg = argc > 1 ? argv[1] : "samples/catalog/Game.storekit";
    char catalog[PATH_MAX];
    if (!realpath(catalog_arg, catalog)) {
        std::fprintf(stderr, "cpp: cannot find the catalog %s\n", catalog_arg);
        return 2;
    }
    char tmpl[] = "/tmp/iap-cpp-test.XXXXXX";
    if (!mkdtemp(tmpl)) { std::perror("cpp: mkdtemp"); return 2; }
    const std::string dir = tmpl;
    const std::string config = iap::simulator_config(dir + "/data", catalog, dir + "/state");

    std::printf("cpp: library %s", iap::version().c_str());
    if (auto n = iap::version_number()) std::printf(" (version number %d)", *n);
    std::printf("\n");
    check(!iap::version().empty(), "version");

    test_helpers();

    // A bad config: nothrow result and exception carry the code.
    {
        auto r = iap::Bridge::open("{\"store\":\"simulator\",\"dataDir\":\"relative\"}", std::nothrow);
        check_code(r, iap::E_BAD_CONFIG, "open with a relative dataDir");
        auto bad_json = iap::Bridge::open("{", std::nothrow);
        check_code(bad_json, iap::E_BAD_JSON, "open with bad JSON");
        // Text after a NUL would be dropped by the C string: refused, not truncated.
        auto nul = iap::Bridge::open(iap::simulator_config(dir + "/nul-data", catalog) + std::string("\0x", 2), std::nothrow);
        check_code(nul, iap::E_INVALID_ARG, "open with a NUL in the config");
#if IAP_HPP_EXCEPTIONS
        try {
            iap::Bridge::open("[]");
            check(false, "open([]) must throw");
        } catch (const iap::Error &e) {
            check(e.code() == iap::E_BAD_CONFIG && std::string(e.name()) == "IAP_E_BAD_CONFIG" && *e.what(),
                  std::string("open([]) throws IAP_E_BAD_CONFIG, got ") + e.name());
        }
#endif
    }

    auto opened = iap::Bridge::open(config, std::nothrow);
    check_code(opened, iap::OK, "open");
    if (!opened.ok()) {
        std::printf("cpp: %d passed, %d failed\n", passed, failed + 1);
        return 1;
    }
    iap::Bridge bridge = std::move(opened).value();
    check(bridge.is_open() && bridge.native_handle() != nullptr, "open bridge");

    // Products.
    check_code(bridge.request_products({"coins_100", "remove_ads", "no_such_thing"}, std::nothrow), iap::OK,
               "request_products");
    auto products = wait_for(bridge, "999");
    check(products.has_value(), "a \"999\" message arrives");
    if (products) check(products->find("coins_100") != std::string::npos, "the \"999\" lists coins_100");
    check_code(bridge.request_products_json("not json", std::nothrow), iap::E_BAD_JSON, "request_products bad JSON");
    check_code(bridge.request_products_json(std::string("[\"coins_100\"]\0x", 15), std::nothrow), iap::E_INVALID_ARG,
               "request_products_json with a NUL");

    // Buy coins_100, poll for its "7", confirm with the message's key.
    auto bought = bridge.buy("coins_100", now_ms(), std::nothrow);
    check_code(bought, iap::OK, "buy coins_100");
    int64_t key = bought.ok() ? bought.value() : 0;
    check(key != 0, "buy reports a key");
    auto result = wait_for(bridge, "7");
    check(result.has_value(), "the \"7\" arrives");
    if (result) {
        check(iap::field(*result, "result") == std::string("0"), "result is \"0\" (success): " + *result);
        check(iap::field(*result, "productID") == std::string("coins_100"), "productID is coins_100");
        auto k = iap::parse_key(iap::field(*result, "key").value_or(""));
        check(k.has_value() && *k == key, "the message's key is the key buy reported");
        if (k) check_code(bridge.confirm(*k, std::nothrow), iap::OK, "confirm the message's key");
        check_code(bridge.flush(std::nothrow), iap::OK, "flush after confirm");
        if (k) check_code(bridge.confirm(*k, std::nothrow), iap::E_UNKNOWN_KEY, "confirm twice");
    }
    check_code(bridge.flush(std::nothrow), iap::OK, "flush");

    // Three units of a consumable in one purchase: one "7" with quantity 3 and the price of three.
    auto three = bridge.buy_quantity("coins_100", 3, 0, std::nothrow);
    check_code(three, iap::OK, "buy_quantity coins_100 x3");
    if (three.ok()) {
        auto m = wait_for(bridge, "7");
        check(m.has_value(), "the quantity \"7\" arrives");
        if (m) {
            check(iap::field(*m, "quantity") == std::string("3"), "quantity is 3: " + *m);
            check(iap::field(*m, "price") == std::string("2.97"), "price is three units: " + *m);
            auto k = iap::parse_key(iap::field(*m, "key").value_or(""));
            check(k.has_value() && *k == three.value(), "the quantity message's key is the key buy_quantity reported");
            if (k) check_code(bridge.confirm(*k, std::nothrow), iap::OK, "confirm the quantity purchase");
        }
    }
    check_code(bridge.buy_quantity("coins_100", 0, 0, std::nothrow), iap::E_INVALID_ARG, "buy_quantity 0");
    check_code(bridge.buy_quantity("coins_100", 11, 0, std::nothrow), iap::E_INVALID_ARG, "buy_quantity 11");

    // Subscription status, sheets, a StoreKit message, the app transaction.
    {
        check_code(bridge.subscription_status({"vip_monthly", "coins_100"}, std::nothrow), iap::OK, "subscription_status");
        auto none = wait_for(bridge, "subscription");
        check(none && iap::field(*none, "reason") == std::string("request") && none->find("\"state\":\"none\"") != std::string::npos &&
                  iap::field(*none, "invalid") == std::string("[\"coins_100\"]"),
              "\"subscription\": vip never subscribed, coins_100 invalid: " + none.value_or("none"));
        auto vip = bridge.buy("vip_monthly", 0, std::nothrow);
        check_code(vip, iap::OK, "buy vip_monthly");
        auto vm = wait_for(bridge, "7");
        std::string txn = vm ? iap::field(*vm, "transactionID").value_or("") : "";
        check(vm && iap::field(*vm, "result") == std::string("0") && !txn.empty(), "vip_monthly bought");
        if (vip.ok()) check_code(bridge.confirm(vip.value(), std::nothrow), iap::OK, "confirm vip_monthly");
        auto change = wait_for(bridge, "subscription");
        check(change && iap::field(*change, "reason") == std::string("change") &&
                  change->find("\"state\":\"subscribed\"") != std::string::npos && change->find("\"active\":true") != std::string::npos,
              "a \"subscription\" change: subscribed, active: " + change.value_or("none"));
        check_code(bridge.subscription_status(std::nothrow), iap::OK, "subscription_status for every group");
        auto every = wait_for(bridge, "subscription");
        check(every && every->find("\"state\":\"subscribed\"") != std::string::npos, "every group: " + every.value_or("none"));

        check_code(bridge.simulator("{\"op\":\"sheet_next\",\"sheet\":\"refund\",\"outcome\":\"cancel\"}", std::nothrow), iap::OK,
                   "sheet_next refund cancel");
        check_code(bridge.request_refund(txn, std::nothrow), iap::OK, "request_refund");
        auto refund = wait_for(bridge, "sheet");
        check(refund && iap::field(*refund, "sheet") == std::string("refund") && iap::field(*refund, "outcome") == std::string("userCancelled") &&
                  iap::field(*refund, "transactionID") == txn,
              "refund sheet, cancelled: " + refund.value_or("none"));
        check_code(bridge.manage_subscriptions(std::nothrow), iap::OK, "manage_subscriptions");
        auto manage = wait_for(bridge, "sheet");
        check(manage && iap::field(*manage, "sheet") == std::string("manageSubscriptions") &&
                  iap::field(*manage, "outcome") == std::string("dismissed"),
              "manage sheet: " + manage.value_or("none"));
        check_code(bridge.redeem_offer_code(std::nothrow), iap::OK, "redeem_offer_code");
        auto code = wait_for(bridge, "sheet");
        check(code && iap::field(*code, "sheet") == std::string("offerCode"), "offer code sheet: " + code.value_or("none"));
        // One sheet at a time: the player keeps this one up until sheet_close.
        check_code(bridge.simulator("{\"op\":\"sheet_next\",\"sheet\":\"manageSubscriptions\",\"outcome\":\"hold\"}", std::nothrow),
                   iap::OK, "sheet_next manageSubscriptions hold");
        check_code(bridge.manage_subscriptions(std::nothrow), iap::OK, "manage_subscriptions, held up");
        check_code(bridge.redeem_offer_code(std::nothrow), iap::E_BUSY, "redeem_offer_code while a sheet is up");
        check_code(bridge.request_refund(txn, std::nothrow), iap::E_BUSY, "request_refund while a sheet is up");
        check_code(bridge.simulator("{\"op\":\"sheet_close\"}", std::nothrow), iap::OK, "sheet_close");
        auto held = wait_for(bridge, "sheet");
        check(held && iap::field(*held, "sheet") == std::string("manageSubscriptions"), "the held sheet answers once closed: " + held.value_or("none"));

        check_code(bridge.simulator("{\"op\":\"billing_issue\",\"productID\":\"vip_monthly\"}", std::nothrow), iap::OK, "billing_issue");
        auto shown = wait_for(bridge, "storeMessage");
        check(shown && iap::field(*shown, "reason") == std::string("billingIssue") && iap::field(*shown, "state") == std::string("shown"),
              "storeMessages show (default): the billing issue's message is shown at once: " + shown.value_or("none"));
        check_code(bridge.show_store_messages(std::nothrow), iap::OK, "show_store_messages with nothing held");

        check_code(bridge.app_transaction(std::nothrow), iap::OK, "app_transaction");
        auto app = wait_for(bridge, "app");
        check(app && iap::field(*app, "originalAppVersion") == std::string("1.0") && iap::field(*app, "verified") == std::string("true"),
              "\"app\": first got 1.0 (the simulator's default), verified: " + app.value_or("none"));

        check_code(bridge.request_refund("12a", std::nothrow), iap::E_INVALID_ARG, "request_refund 12a");
        check_code(bridge.request_refund(std::string("1\0", 2), std::nothrow), iap::E_INVALID_ARG, "request_refund with a NUL");
        check_code(bridge.subscription_status({""}, std::nothrow), iap::E_INVALID_ARG, "subscription_status of an empty ID");
        check_code(bridge.subscription_status_json("not json", std::nothrow), iap::E_BAD_JSON, "subscription_status_json bad JSON");
#if IAP_HPP_EXCEPTIONS
        try {
            bridge.app_transaction();
            auto again = wait_for(bridge, "app");
            check(again.has_value(), "app_transaction() (throwing) is answered");
            bridge.request_refund("12a");
            check(false, "request_refund(12a) must throw");
        } catch (const iap::Error &e) {
            check(e.code() == iap::E_INVALID_ARG, std::string("request_refund(12a) throws IAP_E_INVALID_ARG, got ") + e.name());
        }
#endif
    }

    test_offers(dir, catalog);
#if IAP_HPP_EXCEPTIONS
    test_callback_throws(dir, catalog);
#endif
    test_close_from_callback(dir, catalog);

    // Bad calls.
    check_code(bridge.buy("no_such_product", now_ms() + 1, std::nothrow), iap::E_UNKNOWN_PRODUCT, "buy unknown product");
    check_code(bridge.buy("", 0, std::nothrow), iap::E_INVALID_ARG, "buy empty product");
    check_code(bridge.buy(std::string("coins\0_100", 10), 0, std::nothrow), iap::E_INVALID_ARG, "buy with a NUL");
    check_code(bridge.confirm(424242, std::nothrow), iap::E_UNKNOWN_KEY, "confirm a key never issued");
    check_code(bridge.simulator("{\"op\":\"no_such_op\"}", std::nothrow), iap::E_UNKNOWN_OP, "simulator unknown op");
    check_code(bridge.simulator(std::string("{\"op\":\"transactions\"}\0x", 24), std::nothrow), iap::E_INVALID_ARG,
               "simulator with a NUL");
    auto txns = bridge.simulator("{\"op\":\"transactions\"}", std::nothrow);
    check_code(txns, iap::OK, "simulator transactions");
    if (txns.ok()) check(txns.value().find("coins_100") != std::string::npos, "the store lists the purchase");
#if IAP_HPP_EXCEPTIONS
    try {
        bridge.buy("no_such_product");
        check(false, "buy(no_such_product) must throw");
    } catch (const iap::Error &e) {
        check(e.code() == iap::E_UNKNOWN_PRODUCT && std::string(e.name()) == "IAP_E_UNKNOWN_PRODUCT",
              std::string("buy throws IAP_E_UNKNOWN_PRODUCT, got ") + e.name());
    }
    // Throwing overloads on the happy path: SDK-chosen key.
    try {
        int64_t k2 = bridge.buy("coins_100");
        check(k2 != 0, "buy(click_ms = 0) reports the SDK's key");
        auto m2 = wait_for(bridge, "7");
        check(m2 && iap::parse_key(iap::field(*m2, "key").value_or("")) == k2, "the second \"7\" carries the SDK's key");
        bridge.confirm(k2);
        bridge.flush();
        check(true, "throwing overloads");
    } catch (const iap::Error &e) {
        check(false, std::string("throwing overloads: ") + e.name() + ": " + e.what());
    }
#endif

    // The callback: messages arrive on the SDK's thread; confirm on ours.
    {
        std::mutex mu;
        std::condition_variable cv;
        std::string got;
        auto rc = bridge.set_callback(
            [&](std::string_view json) {
                if (iap::field(json, "type") != std::string("7")) return;
                std::lock_guard<std::mutex> lock(mu);
                got.assign(json.data(), json.size());
                cv.notify_all();
            },
            std::nothrow);
        check_code(rc, iap::OK, "set_callback");
        auto k3 = bridge.buy("remove_ads", 0, std::nothrow);
        check_code(k3, iap::OK, "buy remove_ads");
        std::unique_lock<std::mutex> lock(mu);
        cv.wait_for(lock, std::chrono::seconds(5), [&] { return !got.empty(); });
        check(!got.empty(), "the callback receives the \"7\"");
        std::string msg = got;
        lock.unlock();
        if (!msg.empty() && k3.ok()) {
            check(iap::field(msg, "result") == std::string("0"), "remove_ads result is \"0\"");
            check(iap::parse_key(iap::field(msg, "key").value_or("")) == k3.value(), "callback key matches");
            check_code(bridge.confirm(k3.value(), std::nothrow), iap::OK, "confirm from the callback's message");
        }
        check_code(bridge.set_callback(nullptr, std::nothrow), iap::OK, "set_callback(nullptr) back to polling");
    }

    // Move: the moved-from Bridge holds nothing.
    iap::Bridge moved = std::move(bridge);
    check(!bridge.is_open() && moved.is_open(), "move transfers the bridge");
    check_code(bridge.buy("coins_100", 0, std::nothrow), iap::E_INVALID_HANDLE, "a moved-from Bridge");

    // Close, then every call answers IAP_E_CLOSED.
    check_code(moved.close(std::nothrow), iap::OK, "close");
    check_code(moved.close(std::nothrow), iap::E_CLOSED, "close twice");
    check_code(moved.buy("coins_100", 0, std::nothrow), iap::E_CLOSED, "buy after close");
    check_code(moved.poll(std::nothrow), iap::E_CLOSED, "poll after close");
    check_code(moved.confirm(1, std::nothrow), iap::E_CLOSED, "confirm after close");
    check_code(moved.subscription_status(std::nothrow), iap::E_CLOSED, "subscription_status after close");
    check_code(moved.app_transaction(std::nothrow), iap::E_CLOSED, "app_transaction after close");
    check_code(moved.manage_subscriptions(std::nothrow), iap::E_CLOSED, "manage_subscriptions after close");
    check_code(moved.request_refund("1", std::nothrow), iap::E_CLOSED, "request_refund after close");
    check_code(moved.redeem_offer_code(std::nothrow), iap::E_CLOSED, "redeem_offer_code after close");
    check_code(moved.show_store_messages(std::nothrow), iap::E_CLOSED, "show_store_messages after close");
    // The frame loop of the docs on a closed or moved-from Bridge: no message, no throw, no abort.
    int frames = 0;
    while (auto m = moved.poll(std::nothrow).value_or(std::nullopt)) frames++;
    while (auto m = bridge.poll(std::nothrow).value_or(std::nullopt)) frames++;
    check(frames == 0, "poll(std::nothrow).value_or(std::nullopt) after close or move: no message");
    check(iap::Result<int>::failure(iap::E_CLOSED, "x").value_or(7) == 7 && iap::Result<int>::success(3).value_or(7) == 3,
          "Result::value_or");
#if IAP_HPP_EXCEPTIONS
    try {
        moved.poll();
        check(false, "poll() after close must throw");
    } catch (const iap::Error &e) {
        check(e.code() == iap::E_CLOSED, std::string("poll() after close throws IAP_E_CLOSED, got ") + e.name());
    }
#endif

    // The library itself refuses a stale pointer with IAP_E_CLOSED.
    {
        iap_bridge *raw = nullptr;
        check(iap_open(config.c_str(), &raw) == IAP_OK, "raw open after close (the dataDir was released)");
        check(iap_close(raw) == IAP_OK, "raw close");
        int64_t k = 1;
        check(iap_buy(raw, "coins_100", 0, &k) == IAP_E_CLOSED && k == 0, "the library answers IAP_E_CLOSED");
        check(iap_subscription_status(raw, nullptr) == IAP_E_CLOSED && iap_app_transaction(raw) == IAP_E_CLOSED &&
                  iap_manage_subscriptions(raw) == IAP_E_CLOSED && iap_request_refund(raw, "1") == IAP_E_CLOSED &&
                  iap_redeem_offer_code(raw) == IAP_E_CLOSED && iap_show_store_messages(raw) == IAP_E_CLOSED &&
                  iap_buy_offer(raw, "vip_monthly", "wb", 0, &k) == IAP_E_CLOSED &&
                  iap_manage_subscription_group(raw, "6A0000A0") == IAP_E_CLOSED,
              "the library answers IAP_E_CLOSED to the eight newer calls on a closed bridge");
    }

    // The destructor closes: the dataDir can be opened again right after.
    {
        auto scoped = iap::Bridge::open(config, std::nothrow);
        check_code(scoped, iap::OK, "open in a scope");
        auto busy = iap::Bridge::open(config, std::nothrow);
        check_code(busy, iap::E_BUSY, "a second bridge on the same dataDir");
    }
    {
        auto again = iap::Bridge::open(config, std::nothrow);
        check_code(again, iap::OK, "reopen after the destructor closed");
        if (again.ok()) {
            auto b = std::move(again).value();
            // Everything was confirmed: no "7" is delivered again.
            auto stray = wait_for(b, "7", 1000);
            check(!stray.has_value(), "nothing confirmed is delivered again");
        }
    }

    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    check(!ec, "remove the temporary directory");

    std::printf("cpp: %d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
