"""A tiny game's purchase code, the way a game writes it (docs/TESTKIT.md):
grant, save, then confirm; ignore a key already in the save; take refunds back.
The test kit's test (test_game.py) runs it in a child process:

    python3 game.py SAVE.json [buy PRODUCT_ID]

opens the bridge with the kit's config, buys if asked, handles every message
until the store is quiet, and exits. GAME_BUG=no_dedup plants a bug (a key
delivered again is granted again) that the kit's check must catch.
GAME_CALLBACK=1 takes the messages through set_callback (the SDK's thread
hands them to the main loop) instead of polling.
"""
import json
import os
import queue
import sys
import time

import iap_bridge as iap
import iap_testkit

COINS_PER_PACK = 100


class Save:
    """The game's save: coins, remove_ads, and every grant and takeback (key,
    product, transaction), written atomically."""

    def __init__(self, path):
        self.path = path
        self.data = {"coins": 0, "remove_ads": False, "vip": False, "grants": [], "takebacks": []}
        if os.path.exists(path):
            with open(path) as f:
                self.data = json.load(f)

    def has(self, key):
        return any(r["key"] == key for r in self.data["grants"] + self.data["takebacks"])

    def write(self):
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.data, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)


def handle(bridge, save, msg):
    if msg["type"] == "entitlements":  # what the player owns now: VIP follows it
        vip = any(i["productID"].startswith("vip_") for i in msg["items"])
        if vip != save.data.get("vip", False):
            save.data["vip"] = vip
            save.write()
    if msg["type"] not in ("7", "revoked"):
        return
    key = msg["key"]  # a decimal string: exact
    if not save.has(key) or os.environ.get("GAME_BUG") == "no_dedup":
        record = {"key": key, "productID": msg["productID"], "transactionID": msg.get("transactionID")}
        if msg["type"] == "revoked":
            if msg["productID"] == "coins_100":
                save.data["coins"] -= COINS_PER_PACK * max(1, msg.get("quantity", 1))
            if msg["productID"] == "remove_ads":
                save.data["remove_ads"] = False
            save.data["takebacks"].append(record)
            iap_testkit.checkpoint("before_save")
            save.write()
        elif msg["result"] == "0":
            if msg["productID"] == "coins_100":
                save.data["coins"] += COINS_PER_PACK * max(1, msg.get("quantity", 1))
            if msg["productID"] == "remove_ads":
                save.data["remove_ads"] = True
            if msg["productID"].startswith("vip_"):
                save.data["vip"] = True
            save.data["grants"].append(record)
            iap_testkit.checkpoint("before_save")  # granted in memory, not saved yet
            save.write()
    bridge.confirm(key)


def received(inbox):
    """The messages the callback has handed over so far."""
    while True:
        try:
            yield inbox.get_nowait()
        except queue.Empty:
            return


def play(config, save_path, buy=None, callback=False):
    save = Save(save_path)
    with iap.Bridge.open(config) as bridge:
        inbox = queue.Queue()
        if callback:
            bridge.set_callback(inbox.put)
        if buy:
            bridge.buy(buy)
        # Until nothing came for 30 frames of 10 ms: frames counted, not the
        # clock, so a process stalled for longer does not quit unpolled.
        quiet = 0
        while quiet < 30:
            bridge.flush()
            got = False
            for m in received(inbox) if callback else bridge.messages():
                handle(bridge, save, iap.parse_message(m))
                got = True
            quiet = 0 if got else quiet + 1
            time.sleep(0.01)
    return save


if __name__ == "__main__":
    config = iap_testkit.child_config()
    args = sys.argv[1:]
    play(config, args[0], buy=args[2] if len(args) > 2 and args[1] == "buy" else None,
         callback=os.environ.get("GAME_CALLBACK") == "1")
