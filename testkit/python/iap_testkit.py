"""IAPBridge test kit for Python: run your game's purchase code against the
simulated App Store, kill it at a chosen point, restart it, and check that
every purchase was granted exactly once (docs/TESTKIT.md).

In your test (the parent process):

    import iap_testkit as tk

    with tk.TestKit(catalog="/abs/Game.storekit") as kit:
        run = kit.run_game([sys.executable, "my_game_child.py", "buy", "coins_100"],
                           kill_at="before_confirm")         # charged, granted, saved: killed
        assert run.killed_at == "before_confirm"
        kit.run_game([sys.executable, "my_game_child.py"])   # the restart
        kit.assert_granted_exactly_once(my_save()["grants"], my_save()["takebacks"])

In the game's purchase code, started by run_game (the child process):

    config = iap_testkit.child_config()     # the simulator config; arms the kill point
    with iap_bridge.Bridge.open(config) as bridge:
        ...your game's own code: buy, poll, grant, save, confirm...

Kill points (kill_at): "after_charge" (the SDK hands the game a successful
"7", through poll() or the callback of set_callback(): the store charged,
nothing is granted or saved), "before_confirm" (the
game calls confirm: it granted and saved), "after_confirm" (confirm returned,
not yet durable), or any name your code passes to checkpoint(). "name:N" dies
at the Nth time. The process dies by SIGKILL: no finally, no atexit, no
close. Store actions that last only one session (fail_next, cancel_next,
interrupt_next) are given to run_game(store_ops=[...]) and run in the game's
process right after its bridge opens; the others (approve, refund, lapse...)
are TestKit methods, run while the game is not running.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile

import iap_bridge as iap

__all__ = ["TestKit", "GameRun", "StoreLedger", "child_config", "checkpoint", "KILL_POINTS"]

KILL_POINTS = ("after_charge", "before_confirm", "after_confirm")

ENV_CONFIG = "IAP_TESTKIT_CONFIG"
ENV_KILL_AT = "IAP_TESTKIT_KILL_AT"
ENV_MARKER = "IAP_TESTKIT_MARKER"
ENV_STORE_OPS = "IAP_TESTKIT_STORE_OPS"


# ---- the parent: the test --------------------------------------------------------------

class GameRun:
    """How one run of the game's code ended."""

    def __init__(self, returncode, killed_at, stdout, stderr):
        self.returncode = returncode  # negative: the signal that ended it (-9: killed)
        self.killed_at = killed_at    # the kill point reached, or None
        self.stdout = stdout
        self.stderr = stderr

    def __repr__(self):
        return "GameRun(returncode=%r, killed_at=%r)" % (self.returncode, self.killed_at)


class StoreLedger:
    """What the store charged and refunded (its "transactions"), and what the
    SDK still holds unconfirmed (results it delivers again at the next open)."""

    def __init__(self, transactions, unconfirmed):
        self.transactions = [t for t in transactions if t.get("verified", True)]
        self.unconfirmed = unconfirmed  # parsed "7" / "revoked" messages

    def charged(self, product_id=None):
        return [t for t in self.transactions if product_id in (None, t["productID"])]

    def refunded(self, product_id=None):
        return [t for t in self.charged(product_id) if t.get("revoked")]

    def net(self, product_id):
        """Charged minus refunded: what the player should own of it."""
        return len(self.charged(product_id)) - len(self.refunded(product_id))


def _field(record, name):
    if isinstance(record, dict):
        return record.get(name)
    return getattr(record, name, None)


def _count(items):
    out = {}
    for i in items:
        out[i] = out.get(i, 0) + 1
    return out


def check_ledger(ledger, grants, takebacks=(), all_confirmed=True):
    """The problems (a list of sentences, empty when none) of the game's saved
    grants and takebacks against the store's ledger. grants / takebacks:
    records (dicts or objects) with "key" and "productID", and optionally
    "transactionID" (then each charge is matched to its own grant)."""
    problems = []
    for what, records, expected in (("granted", grants, ledger.charged()),
                                    ("taken back", takebacks, ledger.refunded())):
        records = list(records)
        for key, n in sorted(_count(str(_field(r, "key")) for r in records).items()):
            if n > 1:
                problems.append("key %s was %s %d times (each key once)" % (key, what, n))
        want = _count(t["productID"] for t in expected)
        have = _count(_field(r, "productID") for r in records)
        for pid in sorted(set(want) | set(have)):
            if want.get(pid, 0) != have.get(pid, 0):
                problems.append("%s: the store %s %d, the game's save has %d %s"
                                % (pid, "charged" if what == "granted" else "refunded",
                                   want.get(pid, 0), have.get(pid, 0), what))
        if records and all(_field(r, "transactionID") for r in records):
            ids = _count(str(_field(r, "transactionID")) for r in records)
            for t in expected:
                n = ids.get(t["transactionID"], 0)
                if n != 1:
                    problems.append("transaction %s (%s) was %s %d times" % (t["transactionID"], t["productID"], what, n))
            known = {t["transactionID"] for t in expected}
            for tid in sorted(set(ids) - known):
                problems.append("transaction %s was %s, but the store has no such %s"
                                % (tid, what, "charge" if what == "granted" else "refund"))
    if all_confirmed:
        for m in ledger.unconfirmed:
            problems.append('the game left a "%s" unconfirmed (key %s, %s): it comes again at every start'
                            % (m.get("type"), m.get("key"), m.get("productID")))
    return problems


class TestKit:
    """A fresh simulated store and data directory for one test.

    catalog: the game's .storekit file. lib: the library path (default
    $IAP_LIB, as iap_bridge finds it). The directories live under `root`
    (a new temporary directory unless given) and are deleted by cleanup()
    (or the with block) unless keep=True."""

    __test__ = False  # not a pytest test class

    def __init__(self, catalog, root=None, lib=None, keep=False, app_version=None):
        self.catalog = os.path.abspath(catalog)
        self.root = os.path.abspath(root) if root else tempfile.mkdtemp(prefix="iap-testkit.")
        os.makedirs(self.root, exist_ok=True)
        self.data_dir = os.path.join(self.root, "data")
        self.state_dir = os.path.join(self.root, "appstore")
        self.lib = lib
        self.keep = keep
        simulator = {"stateDir": self.state_dir, "tickMs": 0}
        if app_version:
            simulator["appVersion"] = app_version
        self.config = json.dumps({"store": "simulator", "dataDir": self.data_dir,
                                  "catalog": self.catalog, "simulator": simulator})
        self._marker = os.path.join(self.root, "killed-at")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.cleanup()
        return False

    def cleanup(self):
        if not self.keep:
            shutil.rmtree(self.root, ignore_errors=True)

    # -- the store, driven while the game is not running ---------------------------------

    def _session(self, fn):
        """Opens a bridge on the game's directories, runs fn(bridge) and closes
        it without confirming anything: results stay for the game's next start."""
        with iap.Bridge.open(self.config, lib=self.lib) as bridge:
            return fn(bridge)

    def store(self, op, **args):
        """One simulator command (docs/SIMULATOR.md), e.g. store("advance", seconds=60).
        Returns the answer as a dict. Raises iap_bridge.IAPError."""
        command = dict(args, op=op)
        return json.loads(self._session(lambda b: b.simulator(command)))

    def ask_to_buy(self, enabled=True):
        """Purchases wait for a parent (kept across restarts)."""
        return self.store("ask_to_buy", enabled=enabled)

    def pending(self, product_id=None):
        return [p for p in self.store("pending")["pending"] if product_id in (None, p["productID"])]

    def _one_pending(self, product_id):
        waiting = self.pending(product_id)
        if not waiting:
            raise AssertionError("no purchase of %s waits for approval" % (product_id or "any product"))
        return waiting[0]["id"]

    def approve(self, product_id=None):
        """A parent approves the oldest waiting purchase (of product_id): charged;
        the game gets its "7" at its next start."""
        return self.store("approve", id=self._one_pending(product_id))

    def decline(self, product_id=None):
        return self.store("decline", id=self._one_pending(product_id))

    def transactions(self):
        return self.store("transactions")["transactions"]

    def refund(self, product_id=None, transaction_id=None):
        """Refunds a transaction (the newest unrefunded one of product_id unless
        transaction_id is given); the game gets a "revoked" at its next start.
        Returns the transaction ID."""
        if transaction_id is None:
            candidates = [t for t in self.transactions()
                          if not t["revoked"] and t.get("verified", True) and product_id in (None, t["productID"])]
            if not candidates:
                raise AssertionError("no transaction of %s to refund" % (product_id or "any product"))
            transaction_id = candidates[-1]["transactionID"]
        self.store("refund", transactionID=transaction_id)
        return transaction_id

    def advance(self, seconds):
        return self.store("advance", seconds=seconds)

    def lapse_subscription(self, product_id):
        """The player turns auto-renew off and the period runs out: the
        subscription expires (the game sees it at its next start)."""
        def lapse(bridge):
            status = json.loads(bridge.simulator({"op": "auto_renew", "productID": product_id, "enabled": False}))
            expires = status["status"].get("expiresDate")
            if expires is None:
                raise AssertionError("%s has no running subscription to lapse" % product_id)
            now = json.loads(bridge.simulator({"op": "clock"}))["now"]
            return json.loads(bridge.simulator({"op": "advance", "seconds": max(0, (expires - now) // 1000) + 1}))
        return self._session(lapse)

    # -- the game, in a child process ---------------------------------------------------

    def run_game(self, argv, kill_at=None, store_ops=(), timeout=60, env=None, cwd=None, expect_kill=True):
        """Runs the game's purchase code (argv: a command; it calls child_config())
        in a child process. kill_at: a kill point (see the module doc); when given
        and expect_kill, the run must die there (AssertionError otherwise).
        store_ops: simulator commands run right after the game's bridge opens
        (e.g. [{"op": "fail_next", "error": "networkError"}])."""
        if os.path.exists(self._marker):
            os.remove(self._marker)
        child_env = dict(os.environ if env is None else env)
        child_env[ENV_CONFIG] = self.config
        child_env[ENV_MARKER] = self._marker
        child_env[ENV_STORE_OPS] = json.dumps(list(store_ops))
        child_env.setdefault("SWIFT_BACKTRACE", "enable=no")
        if self.lib:
            child_env["IAP_LIB"] = self.lib
        child_env.pop(ENV_KILL_AT, None)
        if kill_at:
            child_env[ENV_KILL_AT] = kill_at
        p = subprocess.run(argv, env=child_env, cwd=cwd, timeout=timeout,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
        killed_at = None
        if os.path.exists(self._marker):
            with open(self._marker) as f:
                killed_at = f.read().strip()
        run = GameRun(p.returncode, killed_at, p.stdout, p.stderr)
        if kill_at and expect_kill and (killed_at != kill_at or p.returncode != -signal.SIGKILL):
            raise AssertionError("the game was to be killed at %s, but %r\nstdout:\n%s\nstderr:\n%s"
                                 % (kill_at, run, p.stdout, p.stderr))
        if not kill_at and p.returncode != 0:
            raise AssertionError("the game failed: %r\nstdout:\n%s\nstderr:\n%s" % (run, p.stdout, p.stderr))
        return run

    # -- the check ----------------------------------------------------------------------

    def ledger(self):
        """The store's transactions, and the results the SDK would deliver again
        (the game left them unconfirmed). Run it while the game is not running."""
        def read(bridge):
            tx = json.loads(bridge.simulator({"op": "transactions"}))["transactions"]
            bridge.flush()
            again = [iap.parse_message(m) for m in bridge.messages()]
            return StoreLedger(tx, [m for m in again if m.get("type") in ("7", "revoked")])
        return self._session(read)

    def assert_granted_exactly_once(self, grants, takebacks=(), all_confirmed=True):
        """Each purchase the store charged was granted exactly once in the
        game's save (grants), each refund taken back exactly once (takebacks),
        no key twice, and (all_confirmed) nothing left unconfirmed. Returns the
        StoreLedger; raises AssertionError listing every problem."""
        ledger = self.ledger()
        problems = check_ledger(ledger, grants, takebacks, all_confirmed)
        if problems:
            raise AssertionError("not granted exactly once:\n  " + "\n  ".join(problems))
        return ledger


# ---- the child: the game's purchase code -------------------------------------------

_armed = {"point": None, "nth": 1, "seen": {}, "marker": None}


def _die(point):
    marker = _armed["marker"]
    if marker:
        fd = os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.write(fd, point.encode("utf-8"))
        os.fsync(fd)
        os.close(fd)
    sys.stdout.flush()
    sys.stderr.flush()
    os.kill(os.getpid(), signal.SIGKILL)


def checkpoint(name):
    """A kill point of your own (e.g. between granting and saving): the
    process dies here when the test asked for kill_at=name. Does nothing
    otherwise (also outside tests)."""
    if _armed["point"] != name:
        return
    n = _armed["seen"][name] = _armed["seen"].get(name, 0) + 1
    if n == _armed["nth"]:
        _die(name)


def child_config():
    """In the game's process started by TestKit.run_game: arms the kill point
    and returns the simulator config (a JSON str) to open the bridge with."""
    config = os.environ.get(ENV_CONFIG)
    if not config:
        raise RuntimeError("child_config(): not started by TestKit.run_game (%s is not set)" % ENV_CONFIG)
    kill_at = os.environ.get(ENV_KILL_AT) or None
    if kill_at and ":" in kill_at:
        kill_at, nth = kill_at.rsplit(":", 1)
        _armed["nth"] = int(nth)
    _armed["point"] = kill_at
    _armed["marker"] = os.environ.get(ENV_MARKER)
    _install(json.loads(os.environ.get(ENV_STORE_OPS) or "[]"))
    return config


def _handed_to_game(m):
    """A message the game takes, by poll() or its callback: a successful "7"
    is the after_charge point."""
    if m is not None and _armed["point"] == "after_charge":
        msg = json.loads(m)
        if msg.get("type") == "7" and msg.get("result") == "0":
            checkpoint("after_charge")


def _install(store_ops):
    if getattr(iap.Bridge, "_testkit_installed", False):
        return
    iap.Bridge._testkit_installed = True
    real_open, real_poll, real_confirm = iap.Bridge.open.__func__, iap.Bridge.poll, iap.Bridge.confirm
    real_set_callback = iap.Bridge.set_callback
    ops = list(store_ops)

    def open_(cls, config, lib=None):
        bridge = real_open(cls, config, lib)
        while ops:  # once, on the first bridge the game opens
            bridge.simulator(ops.pop(0))
        return bridge

    def poll(self):
        m = real_poll(self)
        _handed_to_game(m)
        return m

    def set_callback(self, fn):
        if fn is None:
            return real_set_callback(self, None)

        def checked(m):
            _handed_to_game(m)
            fn(m)
        return real_set_callback(self, checked)

    def confirm(self, key):
        checkpoint("before_confirm")
        real_confirm(self, key)
        checkpoint("after_confirm")

    iap.Bridge.open = classmethod(open_)
    iap.Bridge.poll = poll
    iap.Bridge.set_callback = set_callback
    iap.Bridge.confirm = confirm
