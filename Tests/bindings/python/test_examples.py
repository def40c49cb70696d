"""The Python examples developers copy, run as written against the simulator.

Each example's per-frame loop (`for m in bridge.messages(): ...`) is cut out of
the file it is documented in (the docstring of bindings/python/iap_bridge.py,
the Python section of docs/INTEGRATION.md) and run as the game's frame, with
the game's own functions supplied here (grant, take_back, save). The store
then cancels a purchase (nothing may be granted, the "7" must be confirmed, its
key not saved), sells one (granted once), delivers one again after a crash
between the save and the confirm (not granted twice) and refunds one (a
"revoked": the item is taken back and the "revoked" confirmed). Nothing may be
left to deliver at the end.
"""
import os
import re
import textwrap
import time

import pytest

import iap_bridge as iap

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
CATALOG = os.path.abspath(os.environ.get("IAP_CATALOG", os.path.join(REPO, "samples", "catalog", "Game.storekit")))
SOURCES = ["bindings/python/iap_bridge.py", "docs/INTEGRATION.md"]


def extract(path):
    """Every `for m in bridge.messages():` loop of a file: the line and the
    lines indented deeper than it, dedented. Returns [(where, code)]."""
    with open(os.path.join(REPO, path), encoding="utf-8") as f:
        lines = f.read().split("\n")
    loops = []
    i = 0
    while i < len(lines):
        match = re.match(r"^(\s*)for m in bridge\.messages\(\):", lines[i])
        if match:
            indent, first = len(match.group(1)), i
            body = [lines[i]]
            i += 1
            while i < len(lines) and (lines[i].strip() == "" or len(lines[i]) - len(lines[i].lstrip()) > indent):
                body.append(lines[i])
                i += 1
            loops.append(("%s:%d" % (path, first + 1), textwrap.dedent("\n".join(body)).strip() + "\n"))
        else:
            i += 1
    return loops


EXAMPLES = [example for path in SOURCES for example in extract(path)]


def test_every_source_has_an_example():
    for path in SOURCES:
        assert any(where.startswith(path + ":") for where, _ in EXAMPLES), path + " has no `for m in bridge.messages():` example"


class Save:
    """The game's save: the keys it granted (or took back), as the examples use it."""

    def __init__(self):
        self.granted = set()
        self.writes = 0

    def add(self, key):
        self.granted.add(key)
        self.writes += 1


class RecordingBridge:
    """The bridge the example sees: the real one, with every message and
    confirm recorded. crash_before_confirm plays a game that dies after its
    save and before its confirm (the confirm never reaches the SDK)."""

    def __init__(self):
        self.real = None
        self.seen = []
        self.confirms = {}
        self.crash_before_confirm = False

    def messages(self):
        for m in self.real.messages():
            self.seen.append(iap.parse_message(m))
            yield m

    def confirm(self, key):
        k = int(key)
        self.confirms[k] = self.confirms.get(k, 0) + 1
        if not self.crash_before_confirm:
            self.real.confirm(key)

    def message(self, type_, key=None):
        for m in self.seen:
            if m["type"] == type_ and (key is None or int(m["key"]) == key):
                return m
        return None


@pytest.mark.parametrize("where,code", EXAMPLES, ids=[where for where, _ in EXAMPLES])
def test_example_grants_only_successes_once_and_takes_refunds_back(lib, workdir, where, code):
    config = iap.simulator_config(os.path.join(workdir, "data"), CATALOG, os.path.join(workdir, "state"))
    owned, granted_keys, taken_keys = {}, [], []

    def grant(msg):
        owned[msg["productID"]] = owned.get(msg["productID"], 0) + 1
        granted_keys.append(int(msg["key"]))

    def take_back(msg):
        owned[msg["productID"]] = owned.get(msg["productID"], 0) - 1
        taken_keys.append(int(msg["key"]))

    save = Save()
    bridge = RecordingBridge()
    frame = compile(code, where, "exec")
    env = {"iap": iap, "bridge": bridge, "save": save, "grant": grant, "take_back": take_back}

    def frames_until(done, timeout=5.0):
        deadline = time.monotonic() + timeout
        while True:
            exec(frame, env)
            if done():
                return True
            if time.monotonic() > deadline:
                return False
            time.sleep(0.01)

    bridge.real = iap.Bridge.open(config, lib=lib)
    try:
        # 1. The player cancels: nothing granted, the "7" confirmed, its key not saved.
        bridge.real.simulator({"op": "cancel_next"})
        cancelled = bridge.real.buy("remove_ads")
        assert frames_until(lambda: cancelled in bridge.confirms), "the cancelled \"7\" is confirmed"
        assert bridge.message("7", cancelled)["result"] == "1"
        assert granted_keys == [] and owned == {}, "nothing is granted for a cancelled purchase"
        assert cancelled not in save.granted, "a cancelled purchase's key is not saved as granted"

        # 2. A purchase: granted once, saved, confirmed.
        bought = bridge.real.buy("remove_ads")
        assert frames_until(lambda: bought in bridge.confirms), "the successful \"7\" is confirmed"
        sold = bridge.message("7", bought)
        assert sold["result"] == "0"
        assert owned == {"remove_ads": 1} and granted_keys == [bought] and bought in save.granted
        assert save.writes >= 1

        # 3. A crash between the save and the confirm: delivered again, not granted twice.
        coins = bridge.real.buy("coins_100")
        bridge.crash_before_confirm = True
        assert frames_until(lambda: coins in bridge.confirms)
        bridge.crash_before_confirm = False
        assert owned["coins_100"] == 1
        bridge.real.close()
        bridge.real = iap.Bridge.open(config, lib=lib)
        assert frames_until(lambda: bridge.confirms.get(coins) == 2), "the coins \"7\" comes again and is confirmed"
        assert owned["coins_100"] == 1 and granted_keys.count(coins) == 1, "a result delivered again is not granted twice"

        # 4. A refund: the "revoked" takes the item back and is confirmed.
        bridge.real.simulator({"op": "refund", "transactionID": sold["transactionID"]})
        assert frames_until(lambda: bridge.message("revoked") is not None
                            and int(bridge.message("revoked")["key"]) in bridge.confirms), "the \"revoked\" is confirmed"
        revoked = bridge.message("revoked")
        rk = int(revoked["key"])
        assert revoked["productID"] == "remove_ads" and rk != bought
        assert owned["remove_ads"] == 0 and taken_keys == [rk], "the refund took remove_ads back"
        assert rk in save.granted, "the \"revoked\"'s key is saved"
        assert owned == {"remove_ads": 0, "coins_100": 1} and len(granted_keys) == 2
        bridge.real.close()

        # 5. Next start: everything was confirmed, nothing comes back.
        bridge.real = iap.Bridge.open(config, lib=lib)
        before = len(bridge.seen)
        frames_until(lambda: False, timeout=0.3)
        again = [m for m in bridge.seen[before:] if m["type"] in ("7", "revoked")]
        assert again == [], "nothing is delivered again after the confirms"
    finally:
        if not bridge.real.closed:
            bridge.real.close()
