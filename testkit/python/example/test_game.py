"""The example game's purchase code under the test kit: killed between paying
and granting at every point (polling, and taking messages through
set_callback), restarted, granted exactly once; Ask to Buy
approved (and declined) while the game is closed; a refund; a failed purchase;
a lapsed subscription; and a planted double-grant bug the check must catch.

    IAP_LIB=/path/libIAPBridge.so IAP_CATALOG=/path/Game.storekit \
      PYTHONPATH=bindings/python:testkit/python python3 -m pytest testkit/python/example
"""
import json
import os
import sys

import pytest

import iap_testkit as tk

HERE = os.path.dirname(os.path.abspath(__file__))
GAME = os.path.join(HERE, "game.py")
CATALOG = os.environ.get("IAP_CATALOG") or os.path.join(HERE, "..", "..", "..", "samples", "catalog", "Game.storekit")


@pytest.fixture
def kit():
    with tk.TestKit(catalog=CATALOG) as k:
        yield k


def save_path(kit):
    return os.path.join(kit.root, "save.json")


def play(kit, buy=None, **kw):
    argv = [sys.executable, GAME, save_path(kit)] + (["buy", buy] if buy else [])
    return kit.run_game(argv, **kw)


def saved(kit):
    """The game's save (the empty one before its first write)."""
    if not os.path.exists(save_path(kit)):
        return {"coins": 0, "remove_ads": False, "vip": False, "grants": [], "takebacks": []}
    with open(save_path(kit)) as f:
        return json.load(f)


def check(kit):
    s = saved(kit)
    return kit.assert_granted_exactly_once(s["grants"], s["takebacks"]), s


@pytest.mark.parametrize("point", ["after_charge", "before_save", "before_confirm", "after_confirm"])
def test_killed_between_paying_and_granting(kit, point):
    run = play(kit, buy="coins_100", kill_at=point)
    assert run.killed_at == point and run.returncode == -9
    play(kit)  # the restart
    ledger, s = check(kit)
    assert len(ledger.charged("coins_100")) == 1
    assert s["coins"] == 100 and len(s["grants"]) == 1


@pytest.mark.parametrize("point", ["after_charge", "before_save", "before_confirm", "after_confirm"])
def test_killed_between_paying_and_granting_callback_mode(kit, point):
    """The same with a game that takes its messages through set_callback: the
    kit's after_charge sees the "7" the callback hands over."""
    env = dict(os.environ, GAME_CALLBACK="1")
    run = play(kit, buy="coins_100", kill_at=point, env=env)
    assert run.killed_at == point and run.returncode == -9
    play(kit, env=env)  # the restart
    ledger, s = check(kit)
    assert len(ledger.charged("coins_100")) == 1
    assert s["coins"] == 100 and len(s["grants"]) == 1


def test_killed_twice_on_the_same_purchase(kit):
    play(kit, buy="remove_ads", kill_at="before_confirm")
    play(kit, kill_at="before_confirm")  # delivered again, already saved: killed again at its confirm
    play(kit)
    ledger, s = check(kit)
    assert s["remove_ads"] is True and len(ledger.charged("remove_ads")) == 1


def test_ask_to_buy_approved_while_the_game_is_closed(kit):
    kit.ask_to_buy(True)
    play(kit, buy="coins_100")
    assert saved(kit)["coins"] == 0
    assert len(kit.pending("coins_100")) == 1
    kit.approve("coins_100")
    play(kit, kill_at="after_charge")  # the approval's "7" arrives; killed before granting
    play(kit)
    ledger, s = check(kit)
    assert s["coins"] == 100 and len(ledger.charged()) == 1


def test_ask_to_buy_declined(kit):
    kit.ask_to_buy(True)
    play(kit, buy="remove_ads")
    kit.decline("remove_ads")
    play(kit)
    ledger, s = check(kit)
    assert s["remove_ads"] is False and ledger.charged() == [] and s["grants"] == []


def test_refund_is_taken_back_once(kit):
    play(kit, buy="coins_100")
    play(kit, buy="coins_100")
    tid = kit.refund("coins_100")
    play(kit, kill_at="before_confirm")  # the "revoked": taken back and saved, killed before its confirm
    play(kit)
    ledger, s = check(kit)
    assert [t["transactionID"] for t in ledger.refunded()] == [tid]
    assert s["coins"] == 100 * ledger.net("coins_100") == 100
    assert len(s["takebacks"]) == 1


def test_failed_purchase_grants_nothing(kit):
    play(kit, buy="coins_100", store_ops=[{"op": "fail_next", "error": "networkError"}])
    ledger, s = check(kit)
    assert ledger.charged() == [] and s["coins"] == 0


def test_lapsed_subscription(kit):
    play(kit, buy="vip_monthly")
    assert saved(kit)["vip"] is True
    kit.lapse_subscription("vip_monthly")
    play(kit)
    ledger, s = check(kit)
    assert s["vip"] is False and len(ledger.charged("vip_monthly")) == 1


def test_the_check_catches_a_double_grant(kit):
    """A game that grants a key delivered again (no dedup) is caught."""
    env = dict(os.environ, GAME_BUG="no_dedup")
    play(kit, buy="coins_100", kill_at="before_confirm", env=env)
    play(kit, env=env)
    s = saved(kit)
    assert s["coins"] == 200  # the bug happened
    with pytest.raises(AssertionError) as e:
        kit.assert_granted_exactly_once(s["grants"], s["takebacks"])
    assert "granted 2 times" in str(e.value)


def test_the_check_catches_a_lost_grant_and_an_unconfirmed_result(kit):
    play(kit, buy="coins_100", kill_at="after_charge")  # no restart: never granted
    with pytest.raises(AssertionError) as e:
        kit.assert_granted_exactly_once([], [])
    assert "the store charged 1, the game's save has 0 granted" in str(e.value)
    assert "unconfirmed" in str(e.value)

