#!/usr/bin/env python3
"""The docs' claims about the C ABI's behaviour, tried on a real library
(issue 23, item 4). Each check prints one line; exits 1 on any failure.

  - every op of SIMULATOR.md's table is accepted (never IAP_E_UNKNOWN_OP),
    an invented one is IAP_E_UNKNOWN_OP; the `fail_next` error names and the
    `sheet_next` sheets and outcomes it lists are accepted, invented ones are
    IAP_E_INVALID_ARG; a held sheet makes another answer IAP_E_BUSY and
    `sheet_close` with none up is IAP_E_NOT_FOUND;
  - every config key the header and SIMULATOR.md document opens a bridge; an
    unknown key, a relative path are IAP_E_BAD_CONFIG; a missing catalog is
    IAP_E_CATALOG; "storekit" on Linux is IAP_E_NOT_SUPPORTED; a dataDir in
    use is IAP_E_BUSY;
  - the limits: 32 purchases in flight, quantity 1 to 10, product IDs up to
    256 bytes, clicks below 2^61;
  - the handle rules (NULL or forged: IAP_E_INVALID_HANDLE, closed:
    IAP_E_CLOSED) and the confirm rules (before delivery IAP_E_NOT_DELIVERED,
    twice IAP_E_UNKNOWN_KEY);
  - an iap_open sends "store" and "entitlements" with reason "open"; every
    message seen validates against docs/schemas.
Usage: check_runtime_claims.py LIBRARY WORKDIR CATALOG
"""
import ctypes
import glob
import json
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from schema_check import schema_errors  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
lib_path, work, catalog = sys.argv[1:4]
lib = ctypes.CDLL(lib_path)
P, S, I64 = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int64
for name, args in {"iap_open": [S, ctypes.POINTER(P)], "iap_close": [P], "iap_buy": [P, S, I64, ctypes.POINTER(I64)],
                   "iap_buy_quantity": [P, S, ctypes.c_int32, I64, ctypes.POINTER(I64)], "iap_confirm": [P, I64],
                   "iap_flush": [P], "iap_simulator": [P, S, ctypes.POINTER(P)], "iap_manage_subscriptions": [P],
                   "iap_redeem_offer_code": [P]}.items():
    getattr(lib, name).argtypes = args
lib.iap_poll.argtypes, lib.iap_poll.restype = [P], P
lib.iap_free.argtypes = [P]
C = {n: int(v) for n, v in re.findall(r"#define (IAP_\w+)\s+\(?(-?\d+)\)?", open(os.path.join(ROOT, "include/iap_bridge.h")).read())}
schemas = {}
for path in glob.glob(os.path.join(ROOT, "docs/schemas/*.schema.json")):
    s = json.load(open(path))
    schemas[s["properties"]["type"]["const"]] = s
sim_doc = open(os.path.join(ROOT, "docs/SIMULATOR.md"), encoding="utf-8").read()
failures, seen_messages = [], []


def check(what, ok, detail=""):
    print("runtime claims: %s: %s%s" % ("ok" if ok else "FAILED", what, "" if ok or not detail else " (" + detail + ")"))
    if not ok:
        failures.append(what)


def name(rc):
    return next((n for n, v in C.items() if v == rc and n.startswith("IAP_E") or (rc == 0 and n == "IAP_OK")), str(rc))


def config(d, **extra):
    c = {"store": "simulator", "dataDir": "%s/%s" % (work, d), "catalog": catalog,
         "simulator": {"tickMs": 0, "durable": False, "purchaseDelayMs": 0}}
    for k, v in extra.items():
        if k == "simulator":
            c["simulator"].update(v)
        else:
            c[k] = v
    return json.dumps(c).encode()


def open_rc(cfg):
    b = P()
    rc = lib.iap_open(cfg, ctypes.byref(b))
    if rc == 0:
        lib.iap_close(b)
    return rc


def open_bridge(cfg):
    b = P()
    rc = lib.iap_open(cfg, ctypes.byref(b))
    assert rc == 0, name(rc)
    return b


def drain(b, until=None, timeout=5.0):
    out, deadline = [], time.time() + timeout
    while time.time() < deadline:
        p = lib.iap_poll(b)
        if not p:
            if until is None or any(until(m) for m in out):
                break
            time.sleep(0.002)
            continue
        m = json.loads(ctypes.string_at(p).decode())
        lib.iap_free(p)
        out.append(m)
    seen_messages.extend(out)
    return out


def sim(b, cmd):
    out = P()
    rc = lib.iap_simulator(b, json.dumps(cmd).encode(), ctypes.byref(out))
    if out.value:
        lib.iap_free(out)
    return rc


def buy(b, pid, click=0):
    k = I64()
    return lib.iap_buy(b, pid, click, ctypes.byref(k)), k.value


# ------------------------------------------------------------ open and config
b = open_bridge(config("main"))
first = drain(b, until=lambda m: m["type"] == "entitlements")
check("an iap_open sends \"store\" and \"entitlements\" with reason \"open\" (README, PROTOCOL.md)",
      {(m["type"], m.get("reason")) for m in first} >= {("store", "open"), ("entitlements", "open")}, str(first))
rc = open_rc(config("main"))
check("a dataDir used by an open bridge: IAP_E_BUSY", rc == C["IAP_E_BUSY"], name(rc))
documented = {"simulator": {"stateDir": "%s/state-x" % work, "durable": True, "tickMs": 1000, "purchaseDelayMs": 10, "appVersion": "2.0"},
              "nonRenewingTerms": {"season_pass": "P3M", "*": "P1Y"}, "storeMessages": "defer",
              "entitlementsAtOpen": False, "purchasesInFlight": 64}
for key, value in documented.items():
    rc = open_rc(config("keys-" + key, **{key: value}))
    check("the documented config key \"%s\" (%s) opens a bridge" % (key, json.dumps(value)[:60]), rc == 0, name(rc))
rc = open_rc(config("unknown", frobnicate=1))
check("an unknown config key: IAP_E_BAD_CONFIG", rc == C["IAP_E_BAD_CONFIG"], name(rc))
rc = open_rc(json.dumps({"store": "simulator", "dataDir": "relative/dir", "catalog": catalog}).encode())
check("a relative dataDir: IAP_E_BAD_CONFIG", rc == C["IAP_E_BAD_CONFIG"], name(rc))
rc = open_rc(json.dumps({"store": "simulator", "dataDir": work + "/nocat", "catalog": work + "/missing.storekit"}).encode())
check("a missing catalog: IAP_E_CATALOG", rc == C["IAP_E_CATALOG"], name(rc))
rc = open_rc(json.dumps({"store": "storekit", "dataDir": work + "/sk"}).encode())
check("\"storekit\" where StoreKit does not exist (Linux): IAP_E_NOT_SUPPORTED", rc == C["IAP_E_NOT_SUPPORTED"], name(rc))

# ------------------------------------------------------------ simulator ops
ops = re.findall(r"^\| `(\w+)` \|", sim_doc, re.M)
args = {"productID": "vip_monthly", "id": "nope", "transactionID": "nope", "seconds": 0, "enabled": True,
        "countryCode": "USA", "price": "3.99", "originalAppVersion": "1.0", "sheet": "manageSubscriptions",
        "outcome": "dismiss", "error": "networkError"}
unknown_op = [op for op in ops if sim(b, dict({"op": op}, **{k: v for k, v in args.items()})) == C["IAP_E_UNKNOWN_OP"]]
check("every op of SIMULATOR.md's table (%d) is accepted by iap_simulator" % len(ops), not unknown_op and len(ops) > 20, ", ".join(unknown_op))
rc = sim(b, {"op": "frobnicate"})
check("an invented op: IAP_E_UNKNOWN_OP", rc == C["IAP_E_UNKNOWN_OP"], name(rc))
row = next(line for line in sim_doc.split("\n") if line.startswith("| `fail_next` |"))
errors = re.findall(r"`(\w+)`", row.split("|")[2].split("optional")[0])
bad = [e for e in errors if sim(b, {"op": "fail_next", "error": e}) != 0]
check("fail_next takes every error name SIMULATOR.md lists (%d)" % len(errors), len(errors) >= 8 and not bad, ", ".join(bad))
rc = sim(b, {"op": "fail_next", "error": "frobnicated"})
check("fail_next with an invented error: IAP_E_INVALID_ARG", rc == C["IAP_E_INVALID_ARG"], name(rc))
sim(b, {"op": "cancel_next"})  # the fail_next calls above armed the next purchase; a cancel is as harmless
row = next(line for line in sim_doc.split("\n") if line.startswith("| `sheet_next` |")).split("|")[3]
tried, bad = 0, []
for part in re.split(r"\. (?=`\w+`:|Any sheet:)", row):
    m = re.match(r"\s*`(\w+)`:", part)
    sheets = [m.group(1)] if m else (["manageSubscriptions", "refund", "offerCode"] if part.strip().startswith("Any sheet") else [])
    for outcome in re.findall(r"(?<!default)(?:: |, )`(\w+)`", part):
        for sheet in sheets:
            tried += 1
            cmd = {"op": "sheet_next", "sheet": sheet, "outcome": outcome}
            if "productID" in part.split("`%s`" % outcome, 1)[1][:20]:
                cmd["productID"] = "vip_monthly" if sheet == "manageSubscriptions" else "coins_100"
            if sim(b, cmd) != 0:
                bad.append("%s/%s" % (sheet, outcome))
check("sheet_next takes every sheet and outcome SIMULATOR.md lists (%d)" % tried, tried >= 9 and not bad, ", ".join(bad))
rc = sim(b, {"op": "sheet_next", "sheet": "refund", "outcome": "frobnicate"})
check("sheet_next with an invented outcome: IAP_E_INVALID_ARG", rc == C["IAP_E_INVALID_ARG"], name(rc))
sim(b, {"op": "sheet_next", "sheet": "manageSubscriptions", "outcome": "hold"})
rc1 = lib.iap_manage_subscriptions(b)
rc2 = lib.iap_redeem_offer_code(b)
lib.iap_flush(b)
rc3 = sim(b, {"op": "sheet_close"})
rc4 = sim(b, {"op": "sheet_close"})
check("a held sheet: another sheet is IAP_E_BUSY; sheet_close closes it; with none up IAP_E_NOT_FOUND",
      (rc1, rc2, rc3, rc4) == (0, C["IAP_E_BUSY"], 0, C["IAP_E_NOT_FOUND"]), "%s %s %s %s" % tuple(map(name, (rc1, rc2, rc3, rc4))))
drain(b)
lib.iap_close(b)

# ------------------------------------------------------------ limits
b = open_bridge(config("limits", simulator={"purchaseDelayMs": 600000}))
drain(b)
rcs = [buy(b, b"coins_100")[0] for _ in range(33)]
check("README: iap_buy with 32 purchases waiting for the store's answer: IAP_E_BUSY",
      rcs[:32] == [0] * 32 and rcs[32] == C["IAP_E_BUSY"], " ".join(map(name, sorted(set(rcs)))))
lib.iap_close(b)
b = open_bridge(config("limits2", purchasesInFlight=100))
drain(b)
k = I64()
q = {n: lib.iap_buy_quantity(b, b"coins_100", n, 0, ctypes.byref(k)) for n in (0, 1, 10, 11)}
check("PROTOCOL.md: iap_buy_quantity takes 1 to 10, 0 and 11 are IAP_E_INVALID_ARG",
      q == {0: C["IAP_E_INVALID_ARG"], 1: 0, 10: 0, 11: C["IAP_E_INVALID_ARG"]}, str(q))
r256, r257 = buy(b, b"x" * 256)[0], buy(b, b"x" * 257)[0]
check("INTEGRATION.md: a product ID of 256 bytes is looked up (IAP_E_UNKNOWN_PRODUCT), 257 is IAP_E_INVALID_ARG",
      (r256, r257) == (C["IAP_E_UNKNOWN_PRODUCT"], C["IAP_E_INVALID_ARG"]), "%s %s" % (name(r256), name(r257)))
big, below = buy(b, b"coins_100", 1 << 61), buy(b, b"coins_100", (1 << 61) - 1)
check("CONTRACT.md: a click of 2^61 is IAP_E_INVALID_ARG, 2^61 - 1 is the key",
      big[0] == C["IAP_E_INVALID_ARG"] and below == (0, (1 << 61) - 1), "%s %s" % (big, below))
drain(b, timeout=0.5)
lib.iap_close(b)

# ------------------------------------------------------------ handles and confirms
b = open_bridge(config("confirm"))
drain(b)
rc, key = buy(b, b"coins_100")
lib.iap_flush(b)
early = lib.iap_confirm(b, key)
got = drain(b, until=lambda m: m["type"] == "7" and int(m["key"]) == key)
late, again = lib.iap_confirm(b, key), lib.iap_confirm(b, key)
check("README: a confirm before the result was handed to the game is IAP_E_NOT_DELIVERED; after it IAP_OK; twice IAP_E_UNKNOWN_KEY",
      (rc, early, late, again) == (0, C["IAP_E_NOT_DELIVERED"], 0, C["IAP_E_UNKNOWN_KEY"]), "%s %s %s %s" % tuple(map(name, (rc, early, late, again))))
lib.iap_close(b)
closed = buy(b, b"coins_100")[0]
null = lib.iap_buy(None, b"coins_100", 0, ctypes.byref(I64()))
forged = lib.iap_buy(P(0x1234), b"coins_100", 0, ctypes.byref(I64()))
check("README: a NULL or forged bridge is IAP_E_INVALID_HANDLE, a closed one IAP_E_CLOSED",
      (null, forged, closed) == (C["IAP_E_INVALID_HANDLE"], C["IAP_E_INVALID_HANDLE"], C["IAP_E_CLOSED"]),
      "%s %s %s" % tuple(map(name, (null, forged, closed))))

# ------------------------------------------------------------ messages and size
bad = ["%s: %s" % (m.get("type"), e) for m in seen_messages for e in schema_errors(m, schemas.get(m.get("type"), {"const": None}))]
check("every message seen here (%d, %d types) validates against docs/schemas" % (len(seen_messages), len({m["type"] for m in seen_messages})),
      not bad and len(seen_messages) > 5, "; ".join(bad[:3]))
so = os.path.join(ROOT, "unity/com.iapbridge.sdk/Runtime/Plugins/Linux/x86_64/libIAPBridge.so")
said = float(re.search(r"so it needs nothing else: ([\d.]+) MB stripped", open(os.path.join(ROOT, "docs/INTEGRATION.md")).read()).group(1))
size = os.path.getsize(so) / 1e6
check("INTEGRATION.md: the Linux library is about %.1f MB stripped (the committed plugin: %.2f MB)" % (said, size), abs(size - said) <= 0.5)
if failures:
    print("runtime claims: FAILED: %d: %s" % (len(failures), "; ".join(failures)))
    sys.exit(1)
print("runtime claims: every behaviour checked here is as the docs say")
