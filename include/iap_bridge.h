/*
 * iap_bridge.h: IAPBridge, in-app purchases for games, through one C header.
 *
 * IAPBridge keeps every purchase result on disk until the game confirms it,
 * so a player who paid always gets the item, even if the app is killed at the
 * worst moment, and never gets it twice. Include only this file and link
 * the library scripts/build-lib.sh builds: out/lib/libIAPBridge.so (.dylib),
 * or out/lib/libIAPBridge.a with the flags in out/lib/link-flags.txt (the
 * Swift runtime inside). libIAPBridgeStatic.a is for Xcode, which adds the
 * Swift runtime itself (docs/INTEGRATION.md).
 *
 * THE FLOW
 *   1. iap_open()             open a bridge; unconfirmed results are re-emitted
 *   2. iap_request_products() product info arrives as a "999" message
 *   3. iap_buy()              the player taps Buy; *out_key is the purchase's
 *                             key (the click's wall-clock time when it can
 *                             be): save that key
 *   4. iap_poll() each frame  (or iap_set_callback) a "7" message: the result
 *   5. the game grants the item and SAVES its own state, then iap_confirm(key)
 *   6. next start: anything not confirmed is delivered again (step 1)
 *
 * THE GAME'S SIDE OF THE CONTRACT
 *   - Grant and save first, confirm after. A crash between the two delivers
 *     the result again at the next start.
 *   - Remember the keys of the successes you granted (never a failure's key)
 *     and do not grant a key you saved again: a crash between your save and
 *     your confirm re-delivers it. At-least-once delivery plus this check is
 *     exactly-once granting. A failure ("3" or "8"; with StoreKit any
 *     failure) can be followed, once confirmed, by the charge the store
 *     made anyway, under the same key: grant that success.
 *   - Confirm every "7" and every "revoked" message, whatever its result.
 *   - Messages carry keys as decimal strings: read them as int64, never as a
 *     double (keys pass 2^53).
 *
 * THREADS AND OWNERSHIP
 *   Every function is thread-safe and may be called from any thread. A
 *   message is delivered once: through iap_poll OR through the callback,
 *   never both. Each bridge has two threads of its own, started by iap_open
 *   and ended by iap_close: the SDK thread, which does every disk write and
 *   sync and every store call, and the callback thread. iap_buy,
 *   iap_confirm, iap_request_products, iap_restore, iap_poll and
 *   iap_set_callback never wait for the disk or the store (iap_set_callback
 *   waits only for a call of the previous callback under way): they check their
 *   arguments, hand the work to the SDK thread and return (results arrive
 *   later as messages). Only iap_open, iap_close, iap_flush and iap_simulator
 *   wait for the SDK thread.
 *   Both threads start with the signal mask of the thread that called
 *   iap_open: a signal the game blocks everywhere (SIGTERM read with sigwait
 *   or a signalfd) stays blocked on them. The callback thread unblocks only
 *   SIGPWR, SIGXCPU and the real-time signals that have a handler, which
 *   managed runtimes (Mono) stop the threads they attached with.
 *
 * UNLOADING
 *   Once every bridge is closed, nothing of the SDK runs any more (no thread,
 *   no timer, no task): the host may dlclose the library (a plugin reload, a
 *   Godot or LÖVE restart, Unity's domain reload) and load it again. The one
 *   exception: iap_close called from inside a callback returns into the
 *   callback thread, which ends right after the callback returns. With
 *   StoreKit, one more: a Transaction.finish() that StoreKit has not answered
 *   within its time limit is given up on (iap_close waits at most 2 s), and
 *   returns into the library whenever StoreKit answers; on macOS, keep the
 *   library loaded until the process ends (Unity's editor does). On Linux
 *   the library stays mapped after dlclose (it pins itself when loaded: the
 *   Swift runtime keeps pointers into it), and the next dlopen returns the
 *   same library with every bridge closed.
 *
 * FORK
 *   A process forked (without exec) after it called into the library: in
 *   the child, call the SDK only from a thread started after the fork. The
 *   thread that called fork() keeps the thread ID the Swift runtime cached
 *   for it in the parent, and a runtime lock it contends for with the SDK's
 *   threads can then wait forever. Bridges open at the fork are the
 *   parent's: the child has none of their threads and must not use them.
 *
 * STRINGS
 *   Strings passed in are UTF-8, NUL-terminated, and only read during the
 *   call. Strings returned by iap_poll and iap_simulator belong to the
 *   caller: free them with iap_free. Strings returned by iap_version,
 *   iap_errmsg and iap_error_name belong to the library.
 *
 * ERRORS
 *   Functions returning int32_t return IAP_OK (0) or a negative IAP_E_* code;
 *   iap_errmsg() then gives a sentence about it. Nothing the SDK stored is lost
 *   because a call failed.
 *
 * Messages (JSON, one object each, "type" says which) are documented with a
 * JSON Schema each in docs/PROTOCOL.md.
 */
#ifndef IAP_BRIDGE_H
#define IAP_BRIDGE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Version of this header and of the library it belongs to. */
#define IAP_VERSION_MAJOR 1
#define IAP_VERSION_MINOR 1
#define IAP_VERSION_PATCH 0
#define IAP_VERSION_STRING "1.1.0"
/* IAP_VERSION_MAJOR * 10000 + IAP_VERSION_MINOR * 100 + IAP_VERSION_PATCH. */
#define IAP_VERSION_NUMBER 10100

/* ---- Result codes ---------------------------------------------------- */

/* The call succeeded. */
#define IAP_OK                 0
/* A pointer argument that must not be NULL was NULL. */
#define IAP_E_NULL_ARG        (-1)
/* An argument is malformed: a product ID that is empty, longer than 256 bytes
 * or not valid UTF-8; a string argument too long (JSON arguments: 64 KiB;
 * product lists: 256 KiB and 1000 IDs); a value out of range. */
#define IAP_E_INVALID_ARG     (-2)
/* A JSON argument does not parse (an empty string and invalid UTF-8 included),
 * or is not the shape the call expects. */
#define IAP_E_BAD_JSON        (-3)
/* The iap_open config has an unknown key, misses a required one, has a value
 * of the wrong type, or names a relative dataDir or stateDir. */
#define IAP_E_BAD_CONFIG      (-4)
/* The simulator's .storekit catalog is missing, unreadable or malformed. */
#define IAP_E_CATALOG         (-5)
/* A file operation failed: dataDir or stateDir cannot be created (its parent
 * is missing), is not a directory or is not writable, or a write or sync
 * failed. */
#define IAP_E_IO              (-6)
/* The bridge pointer is NULL or did not come from iap_open. */
#define IAP_E_INVALID_HANDLE  (-7)
/* The bridge was closed (by iap_close); the pointer must not be used again. */
#define IAP_E_CLOSED          (-8)
/* dataDir or stateDir is in use by another open bridge (this process or
 * another), or too many bridges are open (4096); a sheet is already up;
 * iap_buy with 32 purchases already waiting for the store's answer. */
#define IAP_E_BUSY            (-9)
/* iap_buy: the store does not sell this product ID. */
#define IAP_E_UNKNOWN_PRODUCT (-10)
/* No longer returned (version 1.0 returned it from iap_buy for a click key
 * already in use; since 1.1 such a key is replaced, see iap_buy). Kept so
 * that code naming it still compiles. */
#define IAP_E_DUPLICATE_KEY   (-11)
/* iap_confirm: no unconfirmed result has this key (already confirmed, or
 * never issued). Harmless after a double confirm. */
#define IAP_E_UNKNOWN_KEY     (-12)
/* The operation does not exist on this store: iap_simulator on a StoreKit
 * bridge, or "store": "storekit" where StoreKit does not exist (Linux). */
#define IAP_E_NOT_SUPPORTED   (-13)
/* iap_simulator: the "op" is not one the simulator knows. */
#define IAP_E_UNKNOWN_OP      (-14)
/* iap_simulator: the command names a transaction or pending purchase that
 * does not exist. */
#define IAP_E_NOT_FOUND       (-15)
/* A bug in IAPBridge. Please report it with iap_errmsg(). */
#define IAP_E_INTERNAL        (-16)
/* iap_confirm: a result with this key exists (or its purchase is still under
 * way) but has not been handed to the game in this session yet. Nothing was
 * confirmed: handle its "7" message when it arrives, then confirm. */
#define IAP_E_NOT_DELIVERED   (-17)
/* iap_open: the system refused a thread (or another resource the bridge
 * needs for its whole life). Nothing was opened; close other bridges or free
 * threads and try again. */
#define IAP_E_RESOURCE        (-18)
/* In an "error" message only: the store reported a failure (products could
 * not be loaded, a restore failed). */
#define IAP_E_STORE           (-19)

/* ---- Types ------------------------------------------------------------ */

/* An open bridge. Opaque; valid from iap_open until iap_close. A pointer
 * used after iap_close is detected and answered with IAP_E_CLOSED or
 * IAP_E_INVALID_HANDLE, never a crash. */
typedef struct iap_bridge iap_bridge;

/* Receives one message. `json` is valid only during the call: copy it to
 * keep it; do not free it. Called on the SDK's own delivery thread (one at a
 * time, in order), with no SDK lock held: it may call any iap_* function,
 * including iap_confirm and iap_close on its own bridge. It must not close,
 * or set the callback of, another bridge whose callback may do the same to
 * this one at the same time: each call waits for the other's callback to
 * return. */
typedef void (*iap_callback)(void *ctx, const char *json);

/* ---- Functions ---------------------------------------------------------- */

/* The library version, e.g. "1.1.0". Static storage: never free it. */
const char *iap_version(void);

/* The library version as a number: major * 10000 + minor * 100 + patch
 * (IAP_VERSION_NUMBER of the header it was built with). Compare it with
 * IAP_VERSION_NUMBER to detect a header and a library that do not match. */
int32_t iap_version_number(void);

/* Starts listening, for the life of the process, for purchases the player
 * starts on the App Store page ("promoted" in-app purchases: StoreKit's
 * PurchaseIntent, iOS 16.4+ and macOS 14.4+). Call it once, as early as the
 * app launches: the app delegate's application:didFinishLaunchingWithOptions:
 * (the Unity package calls it before the first scene loads on iOS and macOS
 * players). A player who taps a promoted purchase cold-starts the game, and
 * StoreKit hands the intent over at once, usually before the engine has
 * opened a bridge; without this call a bridge listens only from iap_open to
 * iap_close and such an intent can be missed.
 * What happens to an intent: it waits in the library until a "storekit"
 * bridge is open, which announces it as a "promoted" message; it is kept
 * until the game buys that product with iap_buy (bought with the offer the
 * App Store showed). One the game does not answer before iap_close is
 * announced again by the next bridge of the same process; when the process
 * ends it is gone (the player can tap it on the App Store again). A newer
 * intent for the same product replaces the older one.
 * Needs no bridge and no arguments; calling it again does nothing. Returns
 * IAP_OK when listening, IAP_E_NOT_SUPPORTED where there is nothing to listen
 * to (no StoreKit, as on Linux and Windows; tvOS; below iOS 16.4 or macOS
 * 14.4): harmless, the game goes on. After it the library keeps one StoreKit
 * task for the rest of the process: do not unload the library after calling
 * it (iOS links it statically and never unloads it). */
int32_t iap_launch(void);

/* Opens a bridge. `config_json` is a JSON object:
 *   "store":     "simulator" or "storekit"                       (required)
 *   "dataDir":   absolute path of the outbox directory; created,
 *                owner-only, when its parent exists               (required)
 *   "catalog":   path of an Xcode .storekit file          (simulator: required;
 *                a relative path is read from the process's working
 *                directory, which engines set differently in the editor
 *                and in a player: prefer an absolute one)
 *   "simulator": {"stateDir": absolute path (default "<dataDir>.appstore"),
 *                 "durable": true|false (sync the store's own state),
 *                 "tickMs": renewal timer period, 0 to disable,
 *                 "purchaseDelayMs": how long the simulated store takes to
 *                 answer a purchase (default 10; 0 answers at once, still
 *                 after iap_buy returned),
 *                 "appVersion": the game version the player runs (the
 *                 "app" message's; default "1.0")}
 *   "storekit":  {"finishTimeoutMs": time limit of a StoreKit finish(),
 *                 "promotedPurchases": "ask" (default) or "buy"}
 *   "nonRenewingTerms": {"<productID>" or "*": ISO 8601 duration, e.g. "P1M"}
 *                term of non-renewing subscriptions (default "P1Y")
 *   "entitlementsAtOpen": true|false (default true)
 *   "storeMessages": "show" (default: StoreKit messages such as a billing
 *                issue are shown at once) or "defer" (held until
 *                iap_show_store_messages)
 *   "purchasesInFlight": how many purchases may wait for the store's answer
 *                before iap_buy answers IAP_E_BUSY, 1 to 1000000 (default
 *                32: a game never needs more; load tests raise it)
 * Unknown keys are an error. Waits for the disk (the outbox is read and,
 * when damaged, repaired) and starts the bridge's two threads. On success
 * *out is the bridge and every result still waiting in the outbox is queued
 * again, followed by what the store reported at once (the simulator: its
 * re-delivered transactions and an "entitlements" message; StoreKit's come
 * later). Returns IAP_OK, IAP_E_NULL_ARG (config_json or out NULL),
 * IAP_E_INVALID_ARG, IAP_E_BAD_JSON, IAP_E_BAD_CONFIG, IAP_E_CATALOG,
 * IAP_E_IO, IAP_E_BUSY, IAP_E_RESOURCE (no thread) or IAP_E_NOT_SUPPORTED. On
 * error *out is set to NULL and nothing is left running. */
int32_t iap_open(const char *config_json, iap_bridge **out);

/* Closes a bridge. New calls on it are refused at once (IAP_E_CLOSED); the
 * SDK thread then handles everything handed to it before (purchases already
 * started are sent to the store; their results come at the next iap_open),
 * makes every confirm durable and finishes its store transaction, stops the
 * store (StoreKit: its tasks are cancelled and awaited, up to 2 s for one
 * StoreKit does not let go of, such as a payment sheet the player still has
 * open: that purchase's result comes, with its key, to the bridge open in
 * this process when the player pays, or to the next one; after a relaunch,
 * at its iap_open), and both of the bridge's threads end (a callback running on another thread finishes
 * first). Results not confirmed stay on disk for the next iap_open. After it,
 * `b` is invalid, and once every bridge is closed the library may be
 * unloaded. Returns IAP_OK, IAP_E_INVALID_HANDLE, IAP_E_CLOSED (twice: a
 * second iap_close while another thread's close of `b` is under way returns
 * once that close has finished, so the caller may open dataDir again, except
 * from `b`'s own callback, which that close waits for), or
 * IAP_E_IO when a confirm could not be made durable (the bridge is closed
 * all the same; that result is delivered again at the next iap_open). */
int32_t iap_close(iap_bridge *b);

/* Asks for product information. `product_ids_json` is a JSON array of
 * product ID strings, e.g. ["coins_100","remove_ads"]. The answer arrives as
 * a "999" message listing products and the IDs the store did not know.
 * Returns IAP_OK, IAP_E_NULL_ARG, IAP_E_INVALID_ARG, IAP_E_BAD_JSON,
 * IAP_E_BUSY, IAP_E_INVALID_HANDLE or IAP_E_CLOSED.
 * Requests (this one, iap_restore, iap_subscription_status,
 * iap_app_transaction) are bounded so a game calling them in a loop piles
 * up nothing: IAP_E_BUSY at once, nothing asked of the store, past 64
 * requests in one second or while 64 answers ("999", "subscription", "app",
 * "entitlements") wait unpolled. Ask once, poll, then ask again. */
int32_t iap_request_products(iap_bridge *b, const char *product_ids_json);

/* Starts a purchase. `click_ms` is the wall-clock time of the player's click
 * in milliseconds since 1970 and becomes the key of this purchase when it is
 * above every key this dataDir has handed out before (and at least 10^12, as
 * every wall clock's is); otherwise (two clicks in one millisecond, a clock
 * set back, an engine clock that restarts at launch or counts whole seconds)
 * the key is a fresh one: the current time in milliseconds, or the next key
 * above them if that is higher. An engine clock's click is never a key: it
 * repeats on the next install, where a save that outlived this one (a cloud
 * save, a second device) would take the new purchase for one it granted. Past the clock
 * too, so that a device restored from an older backup (an outbox that
 * remembers fewer keys) still never hands out a key again.
 * click_ms <= 0 asks the SDK for a key the same way. Either way *out_key
 * (if out_key is not NULL) receives the key used, which is never handed out
 * again on this dataDir: not after a confirm, a restart, with the clock set
 * back or after a restore. Save
 * that key, not click_ms. Does no I/O: the SDK thread records the key, then
 * starts the purchase. The result arrives later as a "7" message with this
 * key, also after a crash and restart if the store charged it; a "pending"
 * message may come first (Ask to Buy, an interrupted payment). A crash
 * before anyone paid (before the SDK thread started the purchase, or with
 * the payment sheet still up) leaves the key with no result: nothing was
 * charged. If the purchase cannot be started
 * (the disk refuses the key's record) an "error" message with op "buy" names
 * the key and product; nothing was charged. click_ms must be below 2^61
 * (2305843009213693952; no clock reaches it): a larger one is refused with
 * IAP_E_INVALID_ARG, so that every key handed out is one the outbox can
 * remember. At most 32 purchases of a bridge (the config's
 * "purchasesInFlight") may wait for the store's answer (a "7" or a
 * "pending"); the store shows one payment sheet at a time, so only a game
 * calling iap_buy in a loop gets there: past it
 * iap_buy answers IAP_E_BUSY at once, and nothing was stored, charged or
 * keyed (try again after the next "7"). Returns IAP_OK, IAP_E_NULL_ARG
 * (product_id), IAP_E_INVALID_ARG (a malformed product ID, click_ms at or
 * above 2^61, or no key left on this dataDir: an outbox edited to the highest
 * key mark), IAP_E_BUSY (32 purchases waiting), IAP_E_UNKNOWN_PRODUCT (the
 * simulator knows at once; StoreKit answers with a "7" result "5"),
 * IAP_E_INVALID_HANDLE or IAP_E_CLOSED. On error *out_key is set to 0. */
int32_t iap_buy(iap_bridge *b, const char *product_id, int64_t click_ms, int64_t *out_key);

/* iap_buy for `quantity` units of a consumable in one purchase (StoreKit's
 * quantity option): 1 to 10. The "7" carries "quantity" and, in "price",
 * what was paid for all of them; grant that many. Returns what iap_buy
 * returns, and IAP_E_INVALID_ARG for a quantity outside 1...10 or a product
 * the store knows is not a consumable (StoreKit knows it once the product
 * was requested; otherwise the answer is a "7" failure). */
int32_t iap_buy_quantity(iap_bridge *b, const char *product_id, int32_t quantity, int64_t click_ms, int64_t *out_key);

/* iap_buy with a win-back offer (iOS 18+; StoreKit's winBackOffer purchase
 * option): `offer_id` is the "id" of one of the product's "winBackOffers" in
 * the "999" (the offers this player may take now: a lapsed subscriber).
 * One unit. The "7" carries "offer" {"type":"winBack","id":...} and the
 * offer's price. An offer the player may no longer take is a "7" failure
 * (result "5", productUnavailable, with a message); below iOS 18, or on a
 * store without win-back offers, a "7" result "4". Both strings are borrowed
 * for the call only. Returns what iap_buy returns, and IAP_E_NULL_ARG
 * (offer_id) or IAP_E_INVALID_ARG (an empty offer_id, one over 255 bytes or
 * with control characters). */
int32_t iap_buy_offer(iap_bridge *b, const char *product_id, const char *offer_id, int64_t click_ms, int64_t *out_key);

/* Confirms a "7" or "revoked" message: the game has granted (or taken back)
 * the item and saved. Every key has at most one such message at a time, and
 * one success ever (an interrupted payment or Ask to Buy is a "pending"
 * message, not a result; a store that charged after it reported a failure,
 * result "3" or "8" (with StoreKit any failure), delivers that charge under
 * the same key once the failure is confirmed: do not save a failure's key),
 * and a confirm takes that one only once it has been handed to the game (by
 * iap_poll or the callback) in this session: a result the game has not been
 * shown is never dropped. Does no I/O: the record is dropped on the SDK thread and
 * the store transaction finished once the confirm is durable (group commit:
 * many confirms share one disk sync; iap_flush waits for it). Returns IAP_OK,
 * IAP_E_NOT_DELIVERED (its result has not been handed to the game yet, e.g. a
 * key saved before a restart confirmed before polling: poll, then confirm),
 * IAP_E_UNKNOWN_KEY (already confirmed, or never issued: harmless after a
 * double confirm), IAP_E_INVALID_HANDLE or IAP_E_CLOSED. */
int32_t iap_confirm(iap_bridge *b, int64_t key);

/* Restores purchases (on a user's request: StoreKit may ask the player to
 * sign in). Unfinished transactions are delivered again as "7" messages and
 * an "entitlements" message with reason "restore" follows; a failure arrives
 * as an "error" message with op "restore". Returns IAP_OK, IAP_E_BUSY
 * (the request bound: see iap_request_products), IAP_E_INVALID_HANDLE or
 * IAP_E_CLOSED. */
int32_t iap_restore(iap_bridge *b);

/* The next message, or NULL when there is none, or when `b` is not an open
 * bridge (then iap_errmsg says so; an empty poll leaves iap_errmsg as the
 * last failing call set it, so a NULL with a text there is not proof of a
 * bad bridge: any call returning int32_t on `b`, such as iap_flush, answers
 * IAP_E_INVALID_HANDLE or IAP_E_CLOSED for one). Cheap on an empty queue:
 * call it every frame. The string is the caller's: free it with iap_free. */
char *iap_poll(iap_bridge *b);

/* Frees a string returned by iap_poll or iap_simulator. NULL is ignored. */
void iap_free(void *p);

/* Sets the callback that receives messages from now on, instead of iap_poll
 * (messages already queued go to it too). cb NULL switches back to polling.
 * `ctx` is passed back untouched. A call of the previous callback under way
 * on the delivery thread is waited for: once this returns, the previous cb
 * is never entered again and its ctx may be freed (called from inside that
 * callback, it returns at once; the call under way is the caller's). So do
 * not call it while holding a lock your callback takes. Returns IAP_OK,
 * IAP_E_INVALID_HANDLE or IAP_E_CLOSED. */
int32_t iap_set_callback(iap_bridge *b, iap_callback cb, void *ctx);

/* This thread's last error message: a sentence about the last call on this
 * thread that returned an error (or NULL from iap_poll with an invalid
 * bridge). "" if none yet. Owned by the library; valid until this thread's
 * next failing call. Never NULL. */
const char *iap_errmsg(void);

/* The name of a result code, e.g. "IAP_E_DUPLICATE_KEY"; "IAP_E_UNKNOWN_CODE"
 * for a number that is not one. Static storage. */
const char *iap_error_name(int32_t code);

/* Drives the simulated store: `command_json` is {"op": ...} (see
 * docs/SIMULATOR.md: transactions, fail_next, cancel_next, ask_to_buy,
 * pending, approve, decline, interrupt_next, resolve, refund, advance,
 * external_purchase, forge, auto_renew, clock, entitlements, promote,
 * payments_allowed, storefront, family_share, billing_issue, billing_resolve,
 * price_increase, sheet_next, sheet_close, app_transaction, status). Runs on the
 * SDK thread and waits until what the command made the store report has
 * been handled (its messages are queued when it returns). On IAP_OK
 * *out_json is a JSON answer the caller frees with iap_free; on error it is
 * NULL. Returns IAP_OK, IAP_E_NULL_ARG, IAP_E_INVALID_ARG, IAP_E_BAD_JSON,
 * IAP_E_UNKNOWN_OP, IAP_E_NOT_FOUND, IAP_E_UNKNOWN_PRODUCT, IAP_E_IO,
 * IAP_E_NOT_SUPPORTED (StoreKit bridge), IAP_E_INVALID_HANDLE or
 * IAP_E_CLOSED. */
int32_t iap_simulator(iap_bridge *b, const char *command_json, char **out_json);

/* Waits until the SDK thread has handled everything handed to it before
 * (and what the store answered at once), every confirm made so far is on
 * disk and its store transaction finished. Call it before the app suspends
 * if you like; iap_close does it too. Returns IAP_OK, IAP_E_INVALID_HANDLE,
 * IAP_E_CLOSED, or IAP_E_IO when a confirm could not be made durable (it is
 * retried; its result stays unconfirmed on disk meanwhile). */
int32_t iap_flush(iap_bridge *b);

/* ---- Subscriptions, the app transaction, sheets, StoreKit messages ----
 * Like iap_restore these check their arguments, hand the work to the SDK
 * thread and return at once (no I/O on the caller's thread); the answer is a
 * message (docs/PROTOCOL.md). None is stored or needs a confirm: each
 * describes the store's own state, which can be asked for again. Each returns
 * IAP_E_NOT_SUPPORTED when the store or the running OS lacks the feature (the
 * StoreKit API is newer than the device: iap_errmsg names the OS version it
 * needs), IAP_E_INVALID_HANDLE for a bridge that never was, and IAP_E_CLOSED
 * after iap_close. */

/* Asks for the status of the subscription groups of the auto-renewable
 * products in `product_ids_json` (a JSON array of product IDs; NULL asks for
 * every group the player ever subscribed in). Answered by one "subscription"
 * message with reason "request": per group its state ("subscribed",
 * "inGracePeriod", "inBillingRetryPeriod", "expired", "revoked", or "none"
 * when the player never subscribed), "active" (grant the content: subscribed
 * or in a billing grace period), willAutoRenew, expirationReason, renewal
 * date, product and price, priceIncreaseStatus; IDs that are unknown or not
 * auto-renewable are listed in "invalid". "subscription" messages also come
 * at open (reason "open", groups the player ever subscribed in) and when a
 * group's status changes (reason "change"). Returns IAP_OK, IAP_E_INVALID_ARG
 * (an empty or over-long ID, more than 1000 IDs), IAP_E_BAD_JSON,
 * IAP_E_NOT_SUPPORTED, IAP_E_BUSY (the request bound: see
 * iap_request_products), IAP_E_INVALID_HANDLE or IAP_E_CLOSED. */
int32_t iap_subscription_status(iap_bridge *b, const char *product_ids_json);

/* Asks for the app transaction: the version and date the player first got
 * the game (StoreKit's AppTransaction, iOS 16+). A game that went from paid
 * to free grants early buyers what they paid for. Answered by an "app"
 * message (with "error" when the store could not tell). Returns IAP_OK,
 * IAP_E_NOT_SUPPORTED (below iOS 16), IAP_E_BUSY (the request bound: see
 * iap_request_products), IAP_E_INVALID_HANDLE or IAP_E_CLOSED. */
int32_t iap_app_transaction(iap_bridge *b);

/* Opens the App Store's subscription management sheet (cancel, change
 * plan) over the game. A "sheet" message with sheet "manageSubscriptions"
 * follows when the player closes it; changes arrive as "subscription" and
 * "entitlements" messages. One sheet at a time: IAP_E_BUSY while a sheet
 * opened by iap_manage_subscriptions, iap_request_refund or
 * iap_redeem_offer_code has not answered yet. Returns IAP_OK, IAP_E_BUSY,
 * IAP_E_NOT_SUPPORTED, IAP_E_INVALID_HANDLE or IAP_E_CLOSED. */
int32_t iap_manage_subscriptions(iap_bridge *b);

/* iap_manage_subscriptions for one subscription group: the sheet shows that
 * group only (StoreKit's showManageSubscriptions(in:subscriptionGroupID:),
 * iOS 17+). `group_id` is a "subscriptionGroupID" from the "999" (borrowed
 * for the call). The "sheet" message that follows has sheet
 * "manageSubscriptions" and "subscriptionGroupID". Returns what
 * iap_manage_subscriptions returns, and IAP_E_NULL_ARG (group_id),
 * IAP_E_INVALID_ARG (empty, over 255 bytes, control characters; the
 * simulator also refuses a group its catalog does not have) and
 * IAP_E_NOT_SUPPORTED below iOS 17. */
int32_t iap_manage_subscription_group(iap_bridge *b, const char *group_id);

/* Opens the refund request sheet for the transaction `transaction_id` (the
 * "transactionID" of a "7", decimal digits). A "sheet" message with sheet
 * "refund" follows: outcome "success" (the request was submitted; if Apple
 * grants it, the refund arrives later as a "revoked" message),
 * "userCancelled", or "error" with a message (no such transaction, a refund
 * already requested). Returns IAP_OK, IAP_E_NULL_ARG, IAP_E_INVALID_ARG (not
 * a transaction ID), IAP_E_BUSY, IAP_E_NOT_SUPPORTED, IAP_E_INVALID_HANDLE
 * or IAP_E_CLOSED. */
int32_t iap_request_refund(iap_bridge *b, const char *transaction_id);

/* Opens the offer code redemption sheet (iOS 16+). A "sheet" message with
 * sheet "offerCode" follows when the player closes it; a redeemed code's
 * purchase arrives as a "7" with origin "store" (grant and confirm it like
 * any). Returns IAP_OK, IAP_E_BUSY, IAP_E_NOT_SUPPORTED, IAP_E_INVALID_HANDLE
 * or IAP_E_CLOSED. */
int32_t iap_redeem_offer_code(iap_bridge *b);

/* Shows the StoreKit messages held for the game: with "storeMessages":
 * "defer" in the config, a message StoreKit has for the player (a billing
 * issue, consent to a subscription price increase) is announced by a
 * "storeMessage" with state "deferred" and waits; call this at a moment that
 * does not interrupt play (a menu, between levels). Each shown message gets
 * a "storeMessage" with state "shown". With "show" (the default) they are
 * shown at once. Nothing held: nothing happens. Returns IAP_OK,
 * IAP_E_INVALID_HANDLE or IAP_E_CLOSED. */
int32_t iap_show_store_messages(iap_bridge *b);

#ifdef __cplusplus
}
#endif

#endif /* IAP_BRIDGE_H */
