# iap_bridge.gd: IAPBridge for Godot 3 (GDNative), one GDScript file over
# libiap_godot3.so. Put this folder in your project as res://addons/iap_bridge/
# (iap_bridge.gd, iap_bridge.gdnlib, libiap_godot3.so, libIAPBridge.so).
#
#   const IAPBridge = preload("res://addons/iap_bridge/iap_bridge.gd")
#   var bridge = IAPBridge.new()
#   if bridge.open(IAPBridge.simulator_config(data_dir, catalog, state_dir)) != OK:
#       push_error(bridge.last_message)
#   bridge.request_products(["coins_100", "remove_ads"])   # a "999" message answers
#   var key = bridge.buy("coins_100")                       # a String: the key used ("" on error)
#   # every frame, in _process (save.granted: the keys your save holds, as Strings):
#   for msg in bridge.messages():                # Dictionaries; msg.key is a String
#       if msg.type == "7" or msg.type == "revoked":
#           if not save.granted.has(msg.key):    # each key once, also when delivered again
#               if msg.type == "revoked":        # a refund: take the item back
#                   take_back(msg); save.granted[msg.key] = true; save.write()
#               elif msg.result == "0":          # grant a success only, never "1" (cancelled) etc.
#                   grant(msg); save.granted[msg.key] = true; save.write()
#           bridge.confirm(msg.key)              # then confirm every "7" and "revoked"
#   bridge.close()                               # e.g. in _exit_tree; also done when freed
#
# ERRORS: calls return OK (0) or a negative code (E_UNKNOWN_PRODUCT, ...);
# buy() and simulator() return "" on failure. Each call sets last_error (the
# code) and last_message (a sentence; error_name(code) names the code).
# After close(), every call on the bridge (and a second close()) answers
# E_CLOSED until open() opens a new one.
#
# KEYS are 64-bit integers carried as decimal Strings, and stay Strings here:
# buy() returns one, messages have one, confirm() takes one (only a String).
# Never turn a key into a number: Godot 3's String.to_int() clamps to 32 bits
# (to_int("1732406400123") is 2147483647) and JSON numbers are floats. Save
# keys as Strings. Click times are ints (OS.get_system_time_msecs()).
extends Reference

const E_NULL_ARG = -1
const E_INVALID_ARG = -2
const E_BAD_JSON = -3
const E_BAD_CONFIG = -4
const E_CATALOG = -5
const E_IO = -6
const E_INVALID_HANDLE = -7
const E_CLOSED = -8
const E_BUSY = -9
const E_UNKNOWN_PRODUCT = -10
const E_DUPLICATE_KEY = -11
const E_UNKNOWN_KEY = -12
const E_NOT_SUPPORTED = -13
const E_UNKNOWN_OP = -14
const E_NOT_FOUND = -15
const E_INTERNAL = -16
const E_NOT_DELIVERED = -17
const E_RESOURCE = -18
const E_STORE = -19

var last_error = OK
var last_message = ""
var _native = null
var _h = 0
var _closed = false   # close() was called: E_CLOSED until the next open()


func _init():
	_native = _load_native(get_script().resource_path.get_base_dir() + "/iap_bridge.gdnlib")
	if _native != null:
		Engine.set_meta("iap_bridge_users", Engine.get_meta("iap_bridge_users") + 1)


# One GDNative object per process for the library (Godot 3.2 unloads a
# load-once library when any of its GDNative objects terminates), kept while
# an IAPBridge object exists and terminated with the last one (Godot 3.2
# crashes at exit when a GDNative object is still initialized then).
static func _load_native(gdnlib_path):
	if Engine.has_meta("iap_bridge_gdnative"):
		return Engine.get_meta("iap_bridge_gdnative")
	var native = GDNative.new()
	native.library = load(gdnlib_path)
	if native.library == null or not native.initialize():
		push_error("IAPBridge: cannot load " + gdnlib_path)
		return null
	Engine.set_meta("iap_bridge_gdnative", native)
	Engine.set_meta("iap_bridge_users", 0)
	return native


# {"store": "simulator", ...} for open(). Paths must be absolute
# (ProjectSettings.globalize_path("user://iap")).
# Paths may be Godot's own ("res://", "user://"): the library reads files
# through the operating system, so they are made absolute here (a "res://"
# file exists on disk in the editor; an exported game's lives in its .pck:
# ship the catalog beside the executable and pass that path).
static func _os_path(path):
	if path.begins_with("res://") or path.begins_with("user://"):
		return ProjectSettings.globalize_path(path)
	return path


static func simulator_config(data_dir, catalog, state_dir = "", options = {}):
	data_dir = _os_path(data_dir)
	catalog = _os_path(catalog)
	state_dir = _os_path(state_dir)
	var sim = {}
	if state_dir != "":
		sim["stateDir"] = state_dir
	for k in ["durable", "tickMs", "purchaseDelayMs", "appVersion"]:
		if options.has(k):
			sim[k] = options[k]
	var config = {"store": "simulator", "dataDir": data_dir, "catalog": catalog, "simulator": sim}
	if options.has("storeMessages"):
		config["storeMessages"] = options["storeMessages"]
	return config


static func storekit_config(data_dir):
	return {"store": "storekit", "dataDir": _os_path(data_dir)}


func _call(procedure, args):
	if _native == null:
		return _result(E_INTERNAL, "the IAPBridge GDNative library is not loaded")
	var r = _native.call_native("standard_varcall", "iap_gd_" + procedure, args)
	if typeof(r) == TYPE_INT and r < 0:
		return _result(r, _native.call_native("standard_varcall", "iap_gd_errmsg", []))
	_result(OK, "")
	return r


func _result(code, message):
	last_error = code
	last_message = message
	return code


# A call on this object's bridge. After close() it answers E_CLOSED here: the
# handle's slot may hold another bridge by now.
func _bridge_call(procedure, args = []):
	if _closed:
		return _result(E_CLOSED, "the bridge was closed; open a new one")
	return _call(procedure, [_h] + args)


# Opens the bridge: config is a Dictionary (simulator_config) or a JSON String.
func open(config):
	if _h > 0:
		return _result(E_BUSY, "this IAPBridge is already open: close() it first")
	var json = config if typeof(config) == TYPE_STRING else to_json(config)
	var r = _call("open", [json])
	if r < 0:
		return r
	_h = r
	_closed = false
	return OK


func close():
	var r = _bridge_call("close")
	if _h > 0:
		_h = 0
		_closed = true
	return r


# Starts a purchase; returns the key (a String), or "" with last_error set.
# click_ms 0: the SDK picks the key.
func buy(product_id: String, click_ms: int = 0, quantity: int = 1) -> String:
	var r = _bridge_call("buy", [product_id, click_ms, quantity])
	return r if typeof(r) == TYPE_STRING else ""


# Confirms a "7" or "revoked": pass its "key" String as received.
func confirm(key: String) -> int:
	return _bridge_call("confirm", [key])


# The next message as JSON text, "" when there is none.
func poll() -> String:
	var r = _bridge_call("poll")
	return r if typeof(r) == TYPE_STRING else ""


# Every message waiting now, each parsed into a Dictionary (keys stay Strings).
func messages() -> Array:
	var out = []
	while true:
		var text = poll()
		if text == "":
			break
		var parsed = JSON.parse(text)
		if parsed.error == OK and typeof(parsed.result) == TYPE_DICTIONARY:
			out.append(parsed.result)
		else:
			push_error("IAPBridge: a message does not parse: " + text)
	return out


func request_products(product_ids: Array) -> int:
	return _bridge_call("request_products", [to_json(product_ids)])


func restore() -> int:
	return _bridge_call("restore")


func flush() -> int:
	return _bridge_call("flush")


# Drives the simulated store (docs/SIMULATOR.md): command is a Dictionary or
# JSON String. Returns the answer's JSON text, "" on error.
func simulator(command) -> String:
	var json = command if typeof(command) == TYPE_STRING else to_json(command)
	var r = _bridge_call("simulator", [json])
	return r if typeof(r) == TYPE_STRING else ""


# product_ids: an Array of IDs, or null for every group the player subscribed in.
func subscription_status(product_ids = null) -> int:
	return _bridge_call("subscription_status", ["" if product_ids == null else to_json(product_ids)])


func app_transaction() -> int:
	return _bridge_call("app_transaction")


func manage_subscriptions() -> int:
	return _bridge_call("manage_subscriptions")


func request_refund(transaction_id: String) -> int:
	return _bridge_call("request_refund", [transaction_id])


func redeem_offer_code() -> int:
	return _bridge_call("redeem_offer_code")


func show_store_messages() -> int:
	return _bridge_call("show_store_messages")


func version() -> String:
	return _call("version", [])


func error_name(code: int) -> String:
	return _call("error_name", [code])


# A bridge still open when the object is freed is closed (without calling
# methods of self, which Godot 3 does not allow while it is being deleted).
# The last IAPBridge object terminates the GDNative object (the library's
# terminate closes any bridge still open; the library stays loaded).
func _notification(what):
	if what != NOTIFICATION_PREDELETE or _native == null:
		return
	if _h > 0:
		_native.call_native("standard_varcall", "iap_gd_close", [_h])
		_h = 0
	var users = Engine.get_meta("iap_bridge_users") - 1
	Engine.set_meta("iap_bridge_users", users)
	if users == 0:
		Engine.remove_meta("iap_bridge_gdnative")
		Engine.remove_meta("iap_bridge_users")
		_native.terminate()
	_native = null
