// The C and C++ examples developers copy, compiled and run as written against
// the simulator. Tests/bindings/cpp/run.sh cuts each example's per-frame loop
// out of the file it is documented in and writes it where this file includes it:
//
//   example-hpp.inc     include/iap_bridge.hpp's header comment (throwing calls)
//   example-doc.inc     docs/INTEGRATION.md's C++ section (std::nothrow calls)
//   example-readme.inc  README.md's C example: its every_frame() function
//
// The game's own functions (grant, take_back, the save) are supplied here.
// The store then cancels a purchase (nothing may be granted, the "7" must be
// confirmed, its key not saved), sells one (granted once), delivers one again
// after a crash between the save and the confirm (not granted twice) and
// refunds one (a "revoked": the item is taken back and the "revoked"
// confirmed). Nothing may be left to deliver at the end, and a frame run after
// the bridge was closed must neither throw nor abort.
//
//   c++ -std=c++17 -Iinclude -I<dir of the .inc files> Tests/bindings/cpp/examples.cpp -lIAPBridge
//   ./examples samples/catalog/Game.storekit
#include "iap_bridge.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace {

int passed = 0, failed = 0;

void check(bool ok, const std::string &what) {
    if (ok) {
        passed++;
    } else {
        failed++;
        std::fprintf(stderr, "cpp examples: FAIL: %s\n", what.c_str());
    }
}

// ---- the game: what the player owns, and its save ---------------------------

std::map<std::string, int> owned;
std::vector<int64_t> granted_keys, taken_keys;

struct Save {
    std::set<int64_t> keys;
    int writes = 0;
    bool has(int64_t k) const { return keys.count(k) != 0; }
    void add(int64_t k) { keys.insert(k); writes++; }
} save;

int64_t key_in(const std::string &m) { return *iap::parse_key(*iap::field(m, "key")); }

void grant(const std::string &m) {
    owned[*iap::field(m, "productID")]++;
    granted_keys.push_back(key_in(m));
}

void take_back(const std::string &m) {
    owned[*iap::field(m, "productID")]--;
    taken_keys.push_back(key_in(m));
}

// README's C helpers.
bool is_type(const char *m, const char *type) { return iap::field(m, "type") == type; }
bool result_is(const char *m, const char *result) { return iap::field(m, "result") == result; }
int64_t key_of(const char *m) { return key_in(m); }
bool save_has_key(int64_t k) { return save.has(k); }
void save_key_and_state(int64_t k) { save.add(k); }

// ---- the bridge the examples see --------------------------------------------
// The real one, with every message and confirm recorded; crash_before_confirm
// plays a game that dies after its save and before its confirm (the confirm
// never reaches the SDK).

struct Recorder {
    iap::Bridge *real = nullptr;
    std::vector<std::string> seen;
    std::map<int64_t, int> confirms;
    bool crash_before_confirm = false;

    std::optional<std::string> poll() {
        auto m = real->poll();
        if (m) seen.push_back(*m);
        return m;
    }
    iap::Result<std::optional<std::string>> poll(std::nothrow_t) {
        auto r = real->poll(std::nothrow);
        if (r.ok() && r.value()) seen.push_back(*r.value());
        return r;
    }
    void confirm(int64_t k) { confirm(k, std::nothrow).value(); }
    iap::Result<void> confirm(int64_t k, std::nothrow_t) {
        confirms[k]++;
        if (crash_before_confirm) return iap::Result<void>::success();
        return real->confirm(k, std::nothrow);
    }
} bridge;

char *recorded_poll(iap_bridge *b) {
    char *m = ::iap_poll(b);
    if (m) bridge.seen.push_back(m);
    return m;
}

int32_t recorded_confirm(iap_bridge *, int64_t k) { return bridge.confirm(k, std::nothrow).code(); }

// ---- the examples, as written -------------------------------------------------

void frame_hpp() {
#include "example-hpp.inc"
}

void frame_doc() {
#include "example-doc.inc"
}

namespace readme {
iap_bridge *b = nullptr;
#define iap_poll(b) recorded_poll(b)
#define iap_confirm(b, k) recorded_confirm(b, k)
#include "example-readme.inc"
#undef iap_poll
#undef iap_confirm
} // namespace readme

void frame_readme() {
    readme::b = bridge.real->native_handle();
    readme::every_frame();
}

// ---- the scenario -------------------------------------------------------------

const std::string *message(const std::string &type, std::optional<int64_t> key = std::nullopt) {
    for (const auto &m : bridge.seen)
        if (iap::field(m, "type") == type && (!key || key_in(m) == *key)) return &m;
    return nullptr;
}

int count(const std::vector<int64_t> &v, int64_t k) {
    int n = 0;
    for (auto x : v) n += x == k;
    return n;
}

void scenario(const std::string &what, const std::function<void()> &frame, const std::string &catalog,
              const std::string &dir) {
    owned.clear();
    granted_keys.clear();
    taken_keys.clear();
    save = Save();
    bridge.seen.clear();
    bridge.confirms.clear();
    bridge.crash_before_confirm = false;
    const std::string config = iap::simulator_config(dir + "-data", catalog, dir + "-state");
    auto frames_until = [&](const std::function<bool()> &done, int max_ms = 5000) {
        for (int i = 0; i < max_ms / 10; i++) {
            frame();
            if (done()) return true;
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        return done();
    };

    auto real = std::make_unique<iap::Bridge>(iap::Bridge::open(config));
    bridge.real = real.get();

    // 1. The player cancels: nothing granted, the "7" confirmed, its key not saved.
    real->simulator(R"({"op":"cancel_next"})");
    int64_t cancelled = real->buy("remove_ads");
    check(frames_until([&] { return bridge.confirms.count(cancelled) != 0; }), what + ": the cancelled \"7\" is confirmed");
    auto *m1 = message("7", cancelled);
    check(m1 && iap::field(*m1, "result") == "1", what + ": the store answered \"1\" (cancelled)");
    check(granted_keys.empty() && owned.empty(), what + ": nothing is granted for a cancelled purchase");
    check(!save.has(cancelled), what + ": a cancelled purchase's key is not saved as granted");

    // 2. A purchase: granted once, saved, confirmed.
    int64_t bought = real->buy("remove_ads");
    check(frames_until([&] { return bridge.confirms.count(bought) != 0; }), what + ": the successful \"7\" is confirmed");
    auto *m2 = message("7", bought);
    check(m2 && iap::field(*m2, "result") == "0", what + ": the store answered \"0\"");
    std::string txn = m2 ? iap::field(*m2, "transactionID").value_or("") : "";
    check(owned["remove_ads"] == 1 && count(granted_keys, bought) == 1 && save.has(bought),
          what + ": remove_ads is granted once and its key saved");
    check(save.writes >= 1, what + ": the game saved before confirming");

    // 3. A crash between the save and the confirm: delivered again, not granted twice.
    int64_t coins = real->buy("coins_100");
    bridge.crash_before_confirm = true;
    check(frames_until([&] { return bridge.confirms.count(coins) != 0; }), what + ": the coins \"7\" is handled");
    bridge.crash_before_confirm = false;
    check(owned["coins_100"] == 1, what + ": 100 coins granted");
    real->close();
    real = std::make_unique<iap::Bridge>(iap::Bridge::open(config));
    bridge.real = real.get();
    check(frames_until([&] { return bridge.confirms[coins] == 2; }), what + ": the coins \"7\" comes again and is confirmed");
    check(owned["coins_100"] == 1 && count(granted_keys, coins) == 1,
          what + ": a result delivered again is not granted twice");

    // 4. A refund: the "revoked" takes the item back and is confirmed.
    real->simulator(R"({"op":"refund","transactionID":")" + txn + "\"}");
    check(frames_until([&] {
              auto *r = message("revoked");
              return r && bridge.confirms.count(key_in(*r)) != 0;
          }),
          what + ": the \"revoked\" is confirmed");
    if (auto *r = message("revoked")) {
        int64_t rk = key_in(*r);
        check(iap::field(*r, "productID") == "remove_ads" && rk != bought,
              what + ": the refund is a \"revoked\" for remove_ads, under a key of its own");
        check(owned["remove_ads"] == 0 && count(taken_keys, rk) == 1, what + ": the refund took remove_ads back");
        check(save.has(rk), what + ": the \"revoked\"'s key is saved");
    }
    check(owned["coins_100"] == 1 && granted_keys.size() == 2 && taken_keys.size() == 1,
          what + ": in all: 2 grants (remove_ads, coins), 1 take-back");
    real->close();

    // 5. Next start: everything was confirmed, nothing comes back.
    real = std::make_unique<iap::Bridge>(iap::Bridge::open(config));
    bridge.real = real.get();
    size_t before = bridge.seen.size();
    frames_until([] { return false; }, 300);
    int again = 0;
    for (size_t i = before; i < bridge.seen.size(); i++) {
        auto type = iap::field(bridge.seen[i], "type");
        again += type == "7" || type == "revoked";
    }
    check(again == 0, what + ": nothing is delivered again after the confirms");
    real->close();

    // 6. A frame after the bridge was closed (on suspend, a level unload): the
    // loop finds nothing, and neither throws nor aborts.
    size_t seen = bridge.seen.size();
    frame();
    check(bridge.seen.size() == seen, what + ": a frame on the closed bridge takes nothing");
    bridge.real = nullptr;
}

} // namespace

int main(int argc, char **argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: examples CATALOG.storekit\n");
        return 2;
    }
    std::string catalog = std::filesystem::absolute(argv[1]).string();
    char tmpl[] = "/tmp/iap-cpp-examples.XXXXXX";
    if (!mkdtemp(tmpl)) {
        std::perror("mkdtemp");
        return 1;
    }
    std::string root = tmpl;
    struct Example { const char *where; void (*frame)(); };
    const Example examples[] = {
        {"include/iap_bridge.hpp (header comment)", frame_hpp},
        {"docs/INTEGRATION.md (C++)", frame_doc},
        {"README.md (C)", frame_readme},
    };
    int n = 0;
    for (const auto &e : examples) {
        std::printf("cpp examples: running %s\n", e.where);
        std::fflush(stdout);
        try {
            scenario(e.where, e.frame, catalog, root + "/" + std::to_string(n++));
        } catch (const std::exception &x) {
            check(false, std::string(e.where) + ": raised " + x.what());
        }
    }
    std::filesystem::remove_all(root);
    std::printf("cpp examples: %d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
