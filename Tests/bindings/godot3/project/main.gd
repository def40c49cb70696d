# The headless test game, one phase per process (IAP_PHASE), driven by
# Tests/bindings/godot3/run.sh:
#   api       the wrapper's calls, errors and keys (Strings, exact)
#   examples  every example loop of the docs and the wrapper, run as written:
#             a cancel, a sale, a redelivery after a crash, a refund
#   buy       the game buys remove_ads and runs the docs' example loop each
#             frame; it grants, saves, and the process kills itself (SIGKILL)
#             before its confirm
#   restart   the game starts again: the "7" comes again, is confirmed and not
#             granted a second time
#   after     a third start: nothing comes back
# Prints "godot3 PHASE: N passed, N failed"; the exit code is the failures.
extends Node

const IAPBridge = preload("res://addons/iap_bridge/iap_bridge.gd")
const Harness = preload("res://harness.gd")

var h = Harness.new()
var repo = OS.get_environment("IAP_REPO")
var dir = OS.get_environment("IAP_DIR")
var catalog = OS.get_environment("IAP_CATALOG")
var phase = OS.get_environment("IAP_PHASE")


func config(name):
	return IAPBridge.simulator_config(dir + "/" + name + "-data", catalog, dir + "/" + name + "-state")


func _ready():
	match phase:
		"api":
			api()
		"examples":
			examples()
		"buy", "restart", "after":
			crash_game()
			return   # runs in _process
		_:
			h.check(false, "unknown IAP_PHASE " + phase)
	finish()


func finish():
	print("godot3 %s: %d passed, %d failed" % [phase, h.passed, h.failed])
	OS.exit_code = min(h.failed, 100)
	get_tree().quit()


func api():
	var b = IAPBridge.new()
	h.check(b.version().length() >= 5, "version(): " + b.version())
	# Why keys are Strings: Godot 3's to_int() clamps to 32 bits.
	h.check("1732406400123".to_int() == 2147483647, "Godot 3's to_int() clamps to 2147483647")
	h.check(b.open(IAPBridge.simulator_config("relative/dir", catalog)) == IAPBridge.E_BAD_CONFIG,
		"a relative dataDir is E_BAD_CONFIG: " + str(b.last_error))
	h.check(b.last_message.length() > 0, "the error has a sentence: " + b.last_message)
	# Godot's own paths are made absolute for the library.
	var godot_paths = IAPBridge.simulator_config("user://iap", "res://Game.storekit", "user://iap-state")
	h.check(godot_paths["dataDir"] == ProjectSettings.globalize_path("user://iap") and godot_paths["dataDir"].begins_with("/")
		and godot_paths["catalog"] == ProjectSettings.globalize_path("res://Game.storekit")
		and godot_paths["simulator"]["stateDir"] == ProjectSettings.globalize_path("user://iap-state"),
		"simulator_config makes user:// and res:// paths absolute: " + str(godot_paths))
	h.check(b.error_name(IAPBridge.E_UNKNOWN_KEY) == "IAP_E_UNKNOWN_KEY", "error_name")
	b = h.open(config("api"))
	h.check(b.buy("no_such_product") == "" and b.last_error == IAPBridge.E_UNKNOWN_PRODUCT,
		"an unknown product: \"\" and E_UNKNOWN_PRODUCT (" + str(b.last_error) + ")")
	var key = b.buy("coins_100", 1732406400123)
	h.check(typeof(key) == TYPE_STRING and key == "1732406400123", "buy returns the key as an exact String: " + key)
	var key2 = b.buy("coins_100", 1732406400123)
	h.check(key2 != "" and key2 != key, "a click time already used gets a fresh key: " + key2)
	h.check(b.confirm("12x") == IAPBridge.E_INVALID_ARG, "confirm(\"12x\") is E_INVALID_ARG")
	h.check(b.confirm("9223372036854775808") == IAPBridge.E_INVALID_ARG, "a key above int64 is E_INVALID_ARG")
	var low = b.confirm("-9223372036854775808")
	h.check(low == IAPBridge.E_UNKNOWN_KEY, "the lowest int64 key parses (E_UNKNOWN_KEY: " + str(low) + ")")
	var seen = {}
	var t = 0
	while t < 5000 and not (seen.has(key) and seen.has(key2)):
		for m in b.messages():
			if m.type == "7":
				seen[m.key] = m
		OS.delay_msec(10)
		t += 10
	h.check(seen.has(key) and typeof(seen[key].key) == TYPE_STRING, "the \"7\" carries the key as the same String")
	h.check(seen.has(key) and seen[key].result == "0", "the purchase succeeded")
	h.check(b.confirm(key) == OK and b.confirm(key2) == OK, "confirm(key String) is OK")
	h.check(b.confirm(key) == IAPBridge.E_UNKNOWN_KEY, "a second confirm is E_UNKNOWN_KEY")
	var answer = JSON.parse(b.simulator({"op": "transactions"}))
	h.check(answer.error == OK and typeof(answer.result) == TYPE_DICTIONARY, "simulator() answers JSON")
	h.check(b.request_products(["coins_100"]) == OK and b.restore() == OK and b.flush() == OK,
		"request_products, restore, flush")
	h.check(b.close() == OK, "close")
	h.check(b.buy("coins_100") == "" and b.last_error < 0, "buy after close fails: " + str(b.last_error))
	# After close(), every call says the bridge was closed (not "not a bridge handle from open()").
	for c in [["confirm", b.confirm(key)], ["flush", b.flush()], ["request_products", b.request_products(["coins_100"])],
			["close again", b.close()]]:
		h.check(c[1] == IAPBridge.E_CLOSED, c[0] + " after close is E_CLOSED: " + str(c[1]))
	h.check(b.last_message == "the bridge was closed; open a new one", "after close, last_message: " + b.last_message)
	var polled = b.poll()
	h.check(polled == "" and b.last_error == IAPBridge.E_CLOSED, "poll after close: \"\", E_CLOSED: " + str(b.last_error))
	var bought = b.buy("coins_100")
	h.check(bought == "" and b.last_error == IAPBridge.E_CLOSED, "buy after close: \"\", E_CLOSED: " + str(b.last_error))
	# error_name matches the C library's iap_error_name: a number outside int32 is no code.
	h.check(b.error_name(4294967295) == "IAP_E_UNKNOWN_CODE" and b.error_name(-4294967297) == "IAP_E_UNKNOWN_CODE"
		and b.error_name(-1000) == "IAP_E_UNKNOWN_CODE" and b.error_name(IAPBridge.E_CLOSED) == "IAP_E_CLOSED",
		"error_name of a code outside int32: IAP_E_UNKNOWN_CODE, not a wrapped code: " + b.error_name(4294967295))


func examples():
	var list = []
	for path in ["bindings/godot/godot3/iap_bridge.gd", "docs/INTEGRATION.md"]:
		var found = h.extract(repo, path)
		h.check(found.size() >= 1, path + ": has a `for msg in bridge.messages():` example")
		list += found
	var n = 0
	for e in list:
		n += 1
		print("godot3 examples: running " + e.where)
		scenario(e, "ex" + str(n))


func count(list, key):
	var c = 0
	for k in list:
		if k == key:
			c += 1
	return c


# As Tests/bindings/lua/examples.lua: cancel, sale, redelivery, refund.
func scenario(e, name):
	var what = e.where
	var frame = h.compile(e)
	if frame == null:
		return
	var game = Harness.Game.new()
	var save = Harness.Save.new()
	var bridge = Harness.Recorded.new()
	frame.bridge = bridge
	frame.save = save
	frame.game = game
	bridge.real = h.open(config(name))
	var real = bridge.real

	# 1. The player cancels: nothing granted, the "7" confirmed, its key not saved.
	real.simulator({"op": "cancel_next"})
	var cancelled = real.buy("remove_ads")
	h.check(h.frames_until(frame, ConfirmedKey.new(bridge, cancelled, 1), "done"), what + ": the cancelled \"7\" is confirmed")
	var m1 = bridge.message("7", cancelled)
	h.check(m1 != null and m1.result == "1", what + ": the store answered \"1\" (cancelled)")
	h.check(game.granted_keys.empty() and game.owned.empty(), what + ": nothing is granted for a cancelled purchase")
	h.check(not save.granted.has(cancelled), what + ": a cancelled purchase's key is not saved")

	# 2. A purchase: granted once, saved, confirmed.
	var bought = real.buy("remove_ads")
	h.check(h.frames_until(frame, ConfirmedKey.new(bridge, bought, 1), "done"), what + ": the successful \"7\" is confirmed")
	var m2 = bridge.message("7", bought)
	h.check(m2 != null and m2.result == "0", what + ": the store answered \"0\"")
	h.check(game.owned.get("remove_ads") == 1 and count(game.granted_keys, bought) == 1 and save.granted.has(bought),
		what + ": remove_ads is granted once and its key saved")
	h.check(save.writes >= 1, what + ": the game saved before confirming")

	# 3. A crash between the save and the confirm: delivered again, not granted twice.
	var coins = real.buy("coins_100")
	bridge.crash_before_confirm = true
	h.check(h.frames_until(frame, ConfirmedKey.new(bridge, coins, 1), "done"), what + ": the coins \"7\" is handled")
	bridge.crash_before_confirm = false
	h.check(game.owned.get("coins_100") == 1, what + ": 100 coins granted")
	h.check(real.close() == OK, what + ": close")
	bridge.real = h.open(config(name))
	real = bridge.real
	h.check(h.frames_until(frame, ConfirmedKey.new(bridge, coins, 2), "done"), what + ": the coins \"7\" comes again and is confirmed")
	h.check(game.owned.get("coins_100") == 1 and count(game.granted_keys, coins) == 1,
		what + ": a result delivered again is not granted twice")

	# 4. A refund: the "revoked" takes the item back and is confirmed.
	real.simulator({"op": "refund", "transactionID": m2.transactionID if m2 != null else "0"})
	h.check(h.frames_until(frame, ConfirmedRevoked.new(bridge), "done"), what + ": the \"revoked\" is confirmed")
	var r = bridge.message("revoked")
	h.check(r != null and r.productID == "remove_ads" and r.key != bought, what + ": a \"revoked\" for remove_ads, under a key of its own")
	h.check(r != null and game.owned.get("remove_ads") == 0 and count(game.taken_keys, r.key) == 1 and save.granted.has(r.key),
		what + ": the refund took remove_ads back and saved its key")
	h.check(game.granted_keys.size() == 2 and game.taken_keys.size() == 1, what + ": in all 2 grants, 1 take-back")
	h.check(real.close() == OK, what + ": close")

	# 5. Next start: everything was confirmed, nothing comes back.
	bridge.real = h.open(config(name))
	var before = bridge.seen.size()
	h.frames_until(frame, Never.new(), "done", 300)
	var again = 0
	for i in range(before, bridge.seen.size()):
		if bridge.seen[i].type == "7" or bridge.seen[i].type == "revoked":
			again += 1
	h.check(again == 0, what + ": nothing is delivered again after the confirms (" + str(again) + ")")
	bridge.real.close()


class ConfirmedKey:
	extends Reference
	var bridge
	var key
	var times

	func _init(b, k, n):
		bridge = b
		key = k
		times = n

	func done():
		return bridge.confirms.get(key, 0) >= times


class ConfirmedRevoked:
	extends Reference
	var bridge

	func _init(b):
		bridge = b

	func done():
		var r = bridge.message("revoked")
		return r != null and bridge.confirms.get(r.key, 0) >= 1


class Never:
	extends Reference

	func done():
		return false


# ---- The crash test: a real game process, killed between save and confirm ----

var game_frame = null
var game_bridge = null
var game = null
var frames = 0
var bought_key = ""


func crash_game():
	var loops = h.extract(repo, "docs/INTEGRATION.md")
	h.check(loops.size() >= 1, "docs/INTEGRATION.md has a GDScript example loop")
	if loops.empty():
		finish()
		return
	game_frame = h.compile(loops[0])
	game = Harness.Game.new()
	var save = Harness.Save.new()
	save.load_from(dir + "/crash-save.json")
	game_bridge = Harness.Recorded.new()
	game_bridge.real = h.open(config("crash"))
	game_frame.bridge = game_bridge
	game_frame.save = save
	game_frame.game = game
	if phase == "buy":
		bought_key = game_bridge.real.buy("remove_ads")
		h.check(bought_key != "", "buy: " + game_bridge.real.last_message)
		game_bridge.kill_at_confirm = bought_key
		var f = File.new()
		f.open(dir + "/crash-key.txt", File.WRITE)
		f.store_string(bought_key)
		f.close()
	else:
		var f = File.new()
		f.open(dir + "/crash-key.txt", File.READ)
		bought_key = f.get_as_text()
		f.close()
		h.check(save.granted.has(bought_key), phase + ": the save holds the key " + bought_key + " (granted before the crash)")


func _process(_delta):
	if game_frame == null:
		return
	game_frame.frame()   # the docs' example loop, as the game's frame
	frames += 1
	if phase == "buy" and frames > 500:
		h.check(false, "buy: the game was not killed at its confirm")
		finish_crash()
	elif phase == "restart" and (game_bridge.confirms.get(bought_key, 0) >= 1 or frames > 500):
		var m = game_bridge.message("7", bought_key)
		h.check(m != null and m.result == "0", "restart: the \"7\" of " + bought_key + " is delivered again")
		h.check(game_bridge.confirms.get(bought_key, 0) == 1, "restart: and confirmed")
		h.check(game.granted_keys.empty() and game.owned.empty(), "restart: and not granted again (granted " + str(game.granted_keys) + ")")
		finish_crash()
	elif phase == "after" and frames > 30:
		var again = 0
		for m in game_bridge.seen:
			if m.type == "7" or m.type == "revoked":
				again += 1
		h.check(again == 0, "after: nothing is delivered again (" + str(again) + ")")
		finish_crash()


func finish_crash():
	game_frame = null
	h.check(game_bridge.real.close() == OK, phase + ": close")
	finish()
