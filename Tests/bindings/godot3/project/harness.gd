# The test's pieces: checks, the game (what the player owns, its save), the
# bridge the examples see (the real one, with messages and confirms recorded,
# and a confirm that can crash the process), and the examples developers copy,
# cut out of the files they are documented in and compiled as the game's frame.
extends Reference

const IAPBridge = preload("res://addons/iap_bridge/iap_bridge.gd")

var passed = 0
var failed = 0


func check(ok, what):
	if ok:
		passed += 1
	else:
		failed += 1
		printerr("godot3: FAIL: " + what)


# The game: what the player owns, and the keys granted / taken back.
class Game:
	extends Reference
	var owned = {}
	var granted_keys = []
	var taken_keys = []

	func grant(m):
		owned[m.productID] = owned.get(m.productID, 0) + 1
		granted_keys.append(m.key)

	func take_back(m):
		owned[m.productID] = owned.get(m.productID, 0) - 1
		taken_keys.append(m.key)


# The game's save: the keys it holds (Strings), written to `path` when set.
class Save:
	extends Reference
	var granted = {}
	var writes = 0
	var path = ""

	func write():
		writes += 1
		if path != "":
			var f = File.new()
			f.open(path, File.WRITE)
			f.store_string(to_json({"granted": granted.keys()}))
			f.close()

	func load_from(p):
		path = p
		var f = File.new()
		if f.file_exists(p):
			f.open(p, File.READ)
			var parsed = JSON.parse(f.get_as_text())
			f.close()
			for k in parsed.result["granted"]:
				granted[k] = true


# What the example calls `bridge`: the real bridge, recorded. kill_at_confirm:
# the process kills itself (SIGKILL) when the example confirms that key, i.e.
# after its save and before the confirm reaches the SDK.
class Recorded:
	extends Reference
	var real
	var seen = []
	var confirms = {}
	var crash_before_confirm = false
	var kill_at_confirm = ""

	func messages():
		var ms = real.messages()
		seen += ms
		return ms

	func confirm(key):
		confirms[key] = confirms.get(key, 0) + 1
		if key == kill_at_confirm:
			print("godot3: the game crashes before confirming " + key)
			OS.kill(OS.get_process_id())
			OS.delay_msec(5000)
		if crash_before_confirm:
			return OK
		return real.confirm(key)

	func message(type, key = null):
		for m in seen:
			if m.type == type and (key == null or m.key == key):
				return m
		return null


# Every `for msg in bridge.messages():` loop of a file (lines of a .gd file's
# header comment lose their "#"), up to the first line not indented deeper.
func extract(repo, path):
	var f = File.new()
	check(f.open(repo + "/" + path, File.READ) == OK, path + ": readable")
	var lines = f.get_as_text().split("\n")
	f.close()
	if path.ends_with(".gd"):
		for i in range(lines.size()):
			if lines[i].begins_with("#"):
				lines[i] = lines[i].substr(1, lines[i].length() - 1)
	var loops = []
	var i = 0
	while i < lines.size():
		var line = lines[i]
		var at = line.find("for msg in bridge.messages():")
		if at >= 0 and line.strip_edges().begins_with("for msg in bridge.messages():") and line.substr(0, at).strip_edges() == "":
			var body = [line.substr(at, line.length() - at)]
			var first = i + 1
			i += 1
			while i < lines.size() and lines[i].length() > at and lines[i].substr(0, at + 1).strip_edges() == "":
				body.append(lines[i].substr(at, lines[i].length() - at))
				i += 1
			loops.append({"where": path + ":" + str(first), "code": PoolStringArray(body).join("\n")})
		else:
			i += 1
	return loops


# The example compiled as a frame: an object with `bridge`, `save`, `game`
# and frame(); grant/take_back are the game's.
func compile(example):
	var src = "extends Reference\nvar bridge\nvar save\nvar game\n"
	src += "func grant(m):\n    game.grant(m)\nfunc take_back(m):\n    game.take_back(m)\n"
	src += "func frame():\n"
	for line in example.code.split("\n"):
		src += "    " + line + "\n"
	var script = GDScript.new()
	script.source_code = src
	var err = script.reload()
	check(err == OK, example.where + ": the example compiles (" + str(err) + ")")
	if err != OK:
		printerr(src)
		return null
	return script.new()


func frames_until(frame, done_obj, done_method, max_ms = 5000):
	var t = 0
	while t < max_ms:
		frame.frame()
		if done_obj.call(done_method):
			return true
		OS.delay_msec(10)
		t += 10
	return done_obj.call(done_method)


func open(config):
	var b = IAPBridge.new()
	var rc = b.open(config)
	check(rc == OK, "open: " + str(rc) + " " + b.last_message)
	return b
