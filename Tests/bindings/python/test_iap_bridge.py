"""Test of bindings/python/iap_bridge.py against the real library.

    IAP_LIB=/abs/libIAPBridge.so python3 -m pytest Tests/bindings/python
(Tests/bindings/python/run.sh sets IAP_LIB and the Swift runtime's path.)
"""
import ctypes
import json
import os
import re
import threading
import time

import pytest

import iap_bridge as iap

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
CATALOG = os.path.abspath(os.environ.get("IAP_CATALOG", os.path.join(REPO, "samples", "catalog", "Game.storekit")))


@pytest.fixture
def config(workdir):
    return iap.simulator_config(os.path.join(workdir, "data"), CATALOG, os.path.join(workdir, "state"))


@pytest.fixture
def bridge(lib, config):
    with iap.Bridge.open(config, lib=lib) as b:
        yield b


def wait_for(bridge, type_, timeout=5.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        m = bridge.poll()
        if m is None:
            time.sleep(0.01)
        elif iap.parse_message(m)["type"] == type_:
            return m
    return None


def test_signatures(lib):
    for name, (restype, argtypes) in iap._SIGNATURES.items():
        fn = getattr(lib.C, name)
        assert fn.restype is restype and fn.argtypes == argtypes, name
    # Owned strings come back as raw pointers, never c_char_p (which would leak them).
    assert lib.C.iap_poll.restype is ctypes.c_void_p
    assert lib.C.iap_simulator.argtypes[2] == ctypes.POINTER(ctypes.c_void_p)
    assert lib.version()
    n = lib.version_number()
    assert n is None or n >= 10000


def test_header_functions_bound():
    """Every function of include/iap_bridge.h has a signature here, with as many arguments."""
    header = open(os.path.join(REPO, "include", "iap_bridge.h"), encoding="utf-8").read()
    protos = re.findall(r"^[a-z][\w ]*?\*?\s*(iap_\w+)\(([^)]*)\);$", header, re.M)
    assert len(protos) >= 22 and ("iap_show_store_messages", "iap_bridge *b") in protos, protos
    bound = dict(iap._SIGNATURES, **iap._OPTIONAL)
    for name, params in protos:
        assert name in bound, "%s is in the header but not bound" % name
        count = 0 if params.strip() == "void" else params.count(",") + 1
        assert len(bound[name][1]) == count, name
    assert set(bound) == {name for name, _ in protos}, "bound functions the header does not declare"


def test_codes():
    assert iap.error_name(-17) == "IAP_E_NOT_DELIVERED"
    assert iap.error_name(-18) == "IAP_E_RESOURCE"
    assert iap.error_name(-19) == "IAP_E_STORE"
    assert iap.CODES["IAP_E_CLOSED"] == -8 and iap.error_name(-1000) == "IAP_E_UNKNOWN_CODE"
    assert len(iap.CODES) == 20


def test_keys_exact():
    big = "9007199254740993"  # 2**53 + 1
    assert iap.key_of('{"type":"7","key":"%s"}' % big) == 2 ** 53 + 1
    assert float(big) == 2 ** 53  # what a float-based reader would have made of it
    assert iap.key_of({"key": "-9223372036854775808"}) == iap.INT64_MIN
    assert iap.key_of({"key": "9223372036854775807"}) == iap.INT64_MAX
    with pytest.raises(ValueError):
        iap.key_of({"key": "9223372036854775808"})
    with pytest.raises(ValueError):
        iap.key_of({"key": "1.5"})
    with pytest.raises(TypeError):
        iap._key_arg(9007199254740993.0)
    with pytest.raises(TypeError):
        iap._key_arg(True)


def test_buy_poll_confirm(bridge):
    bridge.request_products(["coins_100", "remove_ads", "no_such_thing"])
    products = wait_for(bridge, "999")
    assert products is not None, 'no "999" within 5 s'
    info = iap.parse_message(products)
    assert "coins_100" in info["products"] and any(item["id"] == "coins_100" for item in info["items"])
    assert info["invalid"] == ["no_such_thing"]

    key = bridge.buy("coins_100", int(time.time() * 1000))
    assert isinstance(key, int) and key != 0
    m = wait_for(bridge, "7")
    assert m is not None, 'no "7" within 5 s'
    msg = iap.parse_message(m)
    assert msg["result"] == "0", m
    assert msg["productID"] == "coins_100"
    assert iap.key_of(msg) == key
    bridge.confirm(iap.key_of(msg))
    bridge.flush()
    with pytest.raises(iap.IAPError) as e:
        bridge.confirm(key)
    assert e.value.code == iap.IAP_E_UNKNOWN_KEY and e.value.name == "IAP_E_UNKNOWN_KEY" and e.value.message
    bridge.flush()

    # An SDK-chosen key, confirmed with the message's decimal string.
    k2 = bridge.buy("remove_ads")
    m2 = wait_for(bridge, "7")
    assert m2 is not None and iap.key_of(m2) == k2 and iap.parse_message(m2)["result"] == "0"
    bridge.confirm(iap.parse_message(m2)["key"])
    txns = json.loads(bridge.simulator({"op": "transactions"}))
    assert "coins_100" in json.dumps(txns)

    # Three units in one purchase: one "7" with quantity 3 and the price of three.
    k3 = bridge.buy_quantity("coins_100", 3)
    m3 = wait_for(bridge, "7")
    assert m3 is not None and iap.key_of(m3) == k3, m3
    msg3 = iap.parse_message(m3)
    assert msg3["result"] == "0" and msg3["quantity"] == 3 and msg3["price"] == "2.97", m3
    bridge.confirm(k3)


def test_subscriptions_sheets_app(lib, workdir):
    """Subscription status (none, subscribed; a billing issue's StoreKit message
    held, then shown), the refund and manage sheets, the app transaction."""
    config = iap.simulator_config(os.path.join(workdir, "data"), CATALOG, os.path.join(workdir, "state"),
                                  app_version="2.5", storeMessages="defer")
    assert json.loads(config)["simulator"] == {"stateDir": os.path.join(workdir, "state"), "appVersion": "2.5"}
    with iap.Bridge.open(config, lib=lib) as b:
        b.subscription_status(["vip_monthly", "coins_100"])
        status = iap.parse_message(wait_for(b, "subscription"))
        assert status["reason"] == "request" and status["invalid"] == ["coins_100"], status
        assert [(g["state"], g["active"]) for g in status["groups"]] == [("none", False)], status

        key = b.buy("vip_monthly")
        bought = iap.parse_message(wait_for(b, "7"))
        assert iap.key_of(bought) == key and bought["result"] == "0", bought
        b.confirm(key)
        change = iap.parse_message(wait_for(b, "subscription"))
        group = change["groups"][0]
        assert change["reason"] == "change" and group["state"] == "subscribed" and group["active"], change
        assert group["transactionID"] == bought["transactionID"] and group["renewalPrice"] == "2.99", change
        b.subscription_status()  # every group the player subscribed in
        every = iap.parse_message(wait_for(b, "subscription"))
        assert every["reason"] == "request" and [g["groupID"] for g in every["groups"]] == [group["groupID"]], every

        b.simulator({"op": "billing_issue", "productID": "vip_monthly"})
        held = iap.parse_message(wait_for(b, "storeMessage"))
        assert held["reason"] == "billingIssue" and held["state"] == "deferred", held
        b.show_store_messages()
        shown = iap.parse_message(wait_for(b, "storeMessage"))
        assert shown["id"] == held["id"] and shown["state"] == "shown", shown

        b.simulator({"op": "sheet_next", "sheet": "refund", "outcome": "cancel"})
        b.request_refund(bought["transactionID"])
        sheet = iap.parse_message(wait_for(b, "sheet"))
        assert sheet == {"type": "sheet", "sheet": "refund", "outcome": "userCancelled",
                         "transactionID": bought["transactionID"]}, sheet
        b.manage_subscriptions()
        sheet = iap.parse_message(wait_for(b, "sheet"))
        assert sheet["sheet"] == "manageSubscriptions" and sheet["outcome"] == "dismissed", sheet
        b.redeem_offer_code()
        sheet = iap.parse_message(wait_for(b, "sheet"))
        assert sheet["sheet"] == "offerCode" and sheet["outcome"] == "dismissed", sheet

        # One sheet at a time: the player keeps this one up until sheet_close.
        b.simulator({"op": "sheet_next", "sheet": "offerCode", "outcome": "hold"})
        b.redeem_offer_code()
        for call in (b.manage_subscriptions, b.redeem_offer_code, lambda: b.request_refund(bought["transactionID"])):
            with pytest.raises(iap.IAPError) as e:
                call()
            assert e.value.code == iap.IAP_E_BUSY, str(e.value)
        b.simulator({"op": "sheet_close"})
        sheet = iap.parse_message(wait_for(b, "sheet"))
        assert sheet["sheet"] == "offerCode" and sheet["outcome"] == "dismissed", sheet

        b.app_transaction()
        app = iap.parse_message(wait_for(b, "app"))
        assert app["originalAppVersion"] == "2.5" and app["appVersion"] == "2.5" and app["verified"], app
        b.simulator({"op": "app_transaction", "originalAppVersion": "1.2", "purchaseDate": 1500000000000})
        b.app_transaction()
        app = iap.parse_message(wait_for(b, "app"))
        assert app["originalAppVersion"] == "1.2" and app["originalPurchaseDate"] == 1500000000000, app

        for call, code in [(lambda: b.request_refund("12a"), iap.IAP_E_INVALID_ARG),
                           (lambda: b.request_refund("1\0"), iap.IAP_E_INVALID_ARG),
                           (lambda: b.subscription_status([""]), iap.IAP_E_INVALID_ARG),
                           (lambda: b.subscription_status("not json"), iap.IAP_E_BAD_JSON)]:
            with pytest.raises(iap.IAPError) as e:
                call()
            assert e.value.code == code, str(e.value)
        with pytest.raises(TypeError):
            b.request_refund(2000000000000001)


def test_offers(lib, workdir):
    """The sample catalog's free trial as the "offer" of the "7" and the
    entitlement; buy_offer with an offer the player cannot take (a "7" result
    "5") and with bad IDs; the manage sheet of one group; and, with a win-back
    offer added to the catalog, the offer listed once lapsed and bought."""
    with open(CATALOG, encoding="utf-8") as f:
        catalog = json.load(f)
    vip = [p for g in catalog["subscriptionGroups"] for p in g["subscriptions"] if p["productID"] == "vip_monthly"]
    assert len(vip) == 1
    vip[0]["winbackOffers"] = [{"offerID": "wb_half", "referenceName": "Half price", "displayPrice": "1.49",
                                "numberOfPeriods": 2, "paymentMode": "payAsYouGo", "subscriptionPeriod": "P1M"}]
    path = os.path.join(workdir, "WinBack.storekit")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(catalog, f)
    config = iap.simulator_config(os.path.join(workdir, "data"), path, os.path.join(workdir, "state"))
    with iap.Bridge.open(config, lib=lib) as b:
        b.request_products(["vip_monthly"])
        products = iap.parse_message(wait_for(b, "999"))
        assert products["items"][0]["winBackOffers"] == [], products  # never subscribed

        key = b.buy("vip_monthly")
        trial = iap.parse_message(wait_for(b, "7"))
        assert iap.key_of(trial) == key and trial["result"] == "0" and trial["price"] == "0", trial
        assert trial["offer"] == {"type": "introductory", "id": None, "paymentMode": "freeTrial", "period": "P1W"}, trial
        ent = iap.parse_message(wait_for(b, "entitlements"))
        while ent["reason"] != "change":  # the one sent at open may still be waiting
            ent = iap.parse_message(wait_for(b, "entitlements"))
        assert [(e["productID"], e["offer"]["type"]) for e in ent["items"]] == [("vip_monthly", "introductory")], ent
        b.confirm(key)

        unknown = b.buy_offer("vip_monthly", "no_such_offer")
        m = iap.parse_message(wait_for(b, "7"))
        assert iap.key_of(m) == unknown and m["result"] == "5", m
        b.confirm(unknown)
        for call, code in [(lambda: b.buy_offer("vip_monthly", ""), iap.IAP_E_INVALID_ARG),
                           (lambda: b.buy_offer("vip_monthly", "wb\0"), iap.IAP_E_INVALID_ARG),
                           (lambda: b.manage_subscription_group("no_such_group"), iap.IAP_E_INVALID_ARG),
                           (lambda: b.manage_subscription_group(""), iap.IAP_E_INVALID_ARG)]:
            with pytest.raises(iap.IAPError) as e:
                call()
            assert e.value.code == code, str(e.value)
        for call in (lambda: b.buy_offer("vip_monthly", None), lambda: b.manage_subscription_group(None)):
            with pytest.raises(TypeError):
                call()

        b.manage_subscription_group("6A0000A0")
        sheet = iap.parse_message(wait_for(b, "sheet"))
        assert sheet == {"type": "sheet", "sheet": "manageSubscriptions", "outcome": "dismissed",
                         "subscriptionGroupID": "6A0000A0"}, sheet

        # Lapsed: the win-back offer is listed, and buy_offer buys it.
        b.simulator({"op": "auto_renew", "productID": "vip_monthly", "enabled": False})
        b.simulator({"op": "advance", "seconds": 10 * 86400})
        b.request_products(["vip_monthly"])
        products = iap.parse_message(wait_for(b, "999"))
        assert products["items"][0]["winBackOffers"] == [{"id": "wb_half", "type": "winBack", "paymentMode": "payAsYouGo",
                                                          "period": "P1M", "periods": 2, "price": "1.49"}], products
        key = b.buy_offer("vip_monthly", "wb_half", "9007199254740993")
        won = iap.parse_message(wait_for(b, "7"))
        assert key == 9007199254740993 and iap.key_of(won) == key and won["result"] == "0" and won["price"] == "1.49", won
        assert won["offer"] == {"type": "winBack", "id": "wb_half", "paymentMode": "payAsYouGo", "period": "P1M"}, won
        b.confirm(key)


@pytest.mark.parametrize("call, code", [
    (lambda b: b.buy("no_such_product", 12345), iap.IAP_E_UNKNOWN_PRODUCT),
    (lambda b: b.buy(""), iap.IAP_E_INVALID_ARG),
    (lambda b: b.buy("coins\0_100"), iap.IAP_E_INVALID_ARG),
    (lambda b: b.buy("x" * 300), iap.IAP_E_INVALID_ARG),
    (lambda b: b.buy_quantity("coins_100", 0), iap.IAP_E_INVALID_ARG),
    (lambda b: b.buy_quantity("coins_100", 11), iap.IAP_E_INVALID_ARG),
    (lambda b: b.request_products("not json"), iap.IAP_E_BAD_JSON),
    (lambda b: b.confirm(424242), iap.IAP_E_UNKNOWN_KEY),
    (lambda b: b.simulator('{"op":"no_such_op"}'), iap.IAP_E_UNKNOWN_OP),
    (lambda b: b.simulator("{"), iap.IAP_E_BAD_JSON),
])
def test_bad_input(bridge, call, code):
    with pytest.raises(iap.IAPError) as e:
        call(bridge)
    assert e.value.code == code, str(e.value)
    assert e.value.name == iap.error_name(code) and e.value.message


def test_bad_types(bridge):
    with pytest.raises(TypeError):
        bridge.confirm(1.0)
    with pytest.raises(ValueError):
        bridge.confirm(2 ** 63)
    with pytest.raises(TypeError):
        bridge.buy(b"coins_100")


def test_open_errors(lib, workdir, config):
    for cfg, code in [
        ('{"store":"simulator","dataDir":"relative"}', iap.IAP_E_BAD_CONFIG),
        ("{", iap.IAP_E_BAD_JSON),
        ({"store": "simulator", "dataDir": os.path.join(workdir, "d"), "catalog": "/nonexistent.storekit"},
         iap.IAP_E_CATALOG),
        ({"store": "simulator", "dataDir": "/nonexistent/parent/d", "catalog": CATALOG}, iap.IAP_E_IO),
    ]:
        with pytest.raises(iap.IAPError) as e:
            iap.Bridge.open(cfg, lib=lib)
        assert e.value.code == code, (cfg, str(e.value))
    with iap.Bridge.open(config, lib=lib):
        with pytest.raises(iap.IAPError) as e:
            iap.Bridge.open(config, lib=lib)
        assert e.value.code == iap.IAP_E_BUSY


def test_closed_bridge(lib, config):
    b = iap.Bridge.open(config, lib=lib)
    b.close()
    assert b.closed
    for call in (b.close, lambda: b.buy("coins_100"), b.poll, lambda: b.confirm(1), b.flush, b.restore,
                 lambda: b.request_products(["coins_100"]), b.subscription_status, b.app_transaction,
                 b.manage_subscriptions, lambda: b.request_refund("1"), b.redeem_offer_code, b.show_store_messages,
                 lambda: b.buy_offer("vip_monthly", "wb"), lambda: b.manage_subscription_group("6A0000A0")):
        with pytest.raises(iap.IAPError) as e:
            call()
        assert e.value.code == iap.IAP_E_CLOSED and e.value.name == "IAP_E_CLOSED"

    # The library itself refuses the stale pointer with IAP_E_CLOSED.
    out = ctypes.c_void_p()
    assert lib.C.iap_open(config.encode(), ctypes.byref(out)) == 0
    assert lib.C.iap_close(out) == 0
    k = ctypes.c_int64(5)
    assert lib.C.iap_buy(out, b"coins_100", 0, ctypes.byref(k)) == iap.IAP_E_CLOSED and k.value == 0
    for rc in (lib.C.iap_subscription_status(out, None), lib.C.iap_app_transaction(out), lib.C.iap_manage_subscriptions(out),
               lib.C.iap_request_refund(out, b"1"), lib.C.iap_redeem_offer_code(out), lib.C.iap_show_store_messages(out),
               lib.C.iap_buy_offer(out, b"vip_monthly", b"wb", 0, ctypes.byref(k)),
               lib.C.iap_manage_subscription_group(out, b"6A0000A0")):
        assert rc == iap.IAP_E_CLOSED


def test_context_manager_closes(lib, config):
    with iap.Bridge.open(config, lib=lib) as b:
        key = b.buy("coins_100")
        assert wait_for(b, "7") is not None
    assert b.closed
    with pytest.raises(iap.IAPError) as e:
        b.poll()
    assert e.value.code == iap.IAP_E_CLOSED
    # Closed for real: the dataDir can be opened again, and the unconfirmed
    # result is delivered again with the same key.
    with iap.Bridge.open(config, lib=lib) as again:
        m = wait_for(again, "7")
        assert m is not None and iap.key_of(m) == key
        again.confirm(key)
    # An exception inside the block still closes.
    with pytest.raises(RuntimeError):
        with iap.Bridge.open(config, lib=lib) as b2:
            raise RuntimeError("boom")
    assert b2.closed
    with iap.Bridge.open(config, lib=lib) as b3:
        assert wait_for(b3, "7", timeout=1.0) is None  # confirmed: not delivered again


def test_callback(bridge):
    got = []
    arrived = threading.Event()

    def on_message(m):
        if iap.parse_message(m)["type"] == "7":
            got.append(m)
            arrived.set()

    bridge.set_callback(on_message)
    key = bridge.buy("coins_100")
    assert arrived.wait(5.0), 'the callback got no "7" within 5 s'
    msg = iap.parse_message(got[0])
    assert iap.key_of(msg) == key and msg["result"] == "0"
    bridge.confirm(key)
    bridge.set_callback(None)
    # Back to polling: the next message goes to poll(), not to the callback.
    bridge.request_products(["coins_100"])
    assert wait_for(bridge, "999") is not None
    assert len(got) == 1
