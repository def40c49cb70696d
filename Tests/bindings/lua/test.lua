-- Test of bindings/lua/iap_bridge.lua against the real library, under LuaJIT.
--   IAP_LIB=/abs/libIAPBridge.so IAP_CATALOG=/abs/Game.storekit luajit Tests/bindings/lua/test.lua
-- (Tests/bindings/lua/run.sh sets both.) Exits non-zero on any failure.
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
package.path = here .. "../../../bindings/lua/?.lua;" .. package.path

local ffi = require("ffi")
local iap = require("iap_bridge")
pcall(ffi.cdef, "int usleep(unsigned int usec);")

local passed, failed = 0, 0
local function check(ok, what)
  if ok then
    passed = passed + 1
  else
    failed = failed + 1
    io.stderr:write("lua: FAIL: " .. what .. "\n")
  end
end

-- A call that must fail with `code`: returns nil plus an error table.
local function check_err(code, what, value, err)
  local got = err and err.code
  check(value == nil and iap.is_error(err) and got == code,
    what .. ": expected " .. iap.error_name(code) .. ", got " .. tostring(err or value))
  if err then check(type(err.message) == "string" and #err.message > 0, what .. ": the error carries a message") end
end

local function check_ok(what, value, err)
  check(value ~= nil and err == nil, what .. ": " .. tostring(err))
  return value
end

local function raises(f, pattern, what)
  local ok, msg = pcall(f)
  check(not ok and tostring(msg):find(pattern) ~= nil, what .. ": " .. tostring(msg))
end

local function wait_for(bridge, type_, max_ms)
  for _ = 1, (max_ms or 5000) / 10 do
    local m = bridge:poll()
    if m then
      if iap.field(m, "type") == type_ then return m end
    else
      ffi.C.usleep(10000)
    end
  end
  return nil
end

------------------------------------------------------------------------
-- Keys: exact int64, never through a double
------------------------------------------------------------------------
do
  local big = "9007199254740993" -- 2^53 + 1: a double cannot hold it
  local k = iap.key(big)
  check(type(k) == "cdata" and ffi.istype("int64_t", k), "key() gives int64_t cdata")
  check(k == 9007199254740993LL, "key('9007199254740993') == 9007199254740993LL")
  check(iap.key_string(k) == big, "9007199254740993 survives string -> int64 -> string")
  check(k - 1 == 9007199254740992LL and k + 1 == 9007199254740994LL, "neighbours of 2^53+1 stay distinct")
  check(tonumber(big) == 9007199254740992, "(a Lua number would have lost the last digit)")
  check(iap.key_string(iap.key("9223372036854775807")) == "9223372036854775807", "INT64_MAX round trip")
  check(iap.key_string(iap.key("-9223372036854775808")) == "-9223372036854775808", "INT64_MIN round trip")
  check(iap.key_string(iap.key("-4127000000000000001")) == "-4127000000000000001", "negative store key round trip")
  check(iap.key_string(iap.key("0")) == "0", "zero")
  check(iap.key_from_string("9223372036854775808") == nil, "overflow refused")
  check(iap.key_from_string("-9223372036854775809") == nil, "underflow refused")
  check(iap.key_from_string("12a") == nil and iap.key_from_string("") == nil and iap.key_from_string("-") == nil
    and iap.key_from_string("1.5") == nil and iap.key_from_string("+1") == nil, "non-integers refused")
  check(iap.key(1700000000123) == 1700000000123LL, "a millisecond time as a Lua number is accepted")
  raises(function() iap.key(2 ^ 53 + 2) end, "lost digits", "a Lua number above 2^53 is refused")
  raises(function() iap.key(1.5) end, "whole number", "a fractional number is refused")
  raises(function() iap.key(0 / 0) end, "whole number", "NaN is refused")
  raises(function() iap.key(math.huge) end, "whole number", "infinity is refused")
end

------------------------------------------------------------------------
-- Lua numbers at the edge of exactness: 2^53 - 1 is the last one accepted
------------------------------------------------------------------------
do
  check(iap.key(2 ^ 53 - 1) == 9007199254740991LL, "2^53 - 1 as a Lua number is accepted, exact")
  check(iap.key(-(2 ^ 53 - 1)) == -9007199254740991LL, "-(2^53 - 1) as a Lua number is accepted, exact")
  check(iap.key_string(9007199254740991) == "9007199254740991", "key_string(2^53 - 1)")
  -- 2^53 is exact itself, but so is what 2^53 + 1 rounds to: a Lua number
  -- 9007199254740992 cannot say which key the game meant.
  raises(function() iap.key(2 ^ 53) end, "beyond 2%^53 %- 1", "2^53 as a Lua number is refused")
  raises(function() iap.key(-(2 ^ 53)) end, "beyond 2%^53 %- 1", "-2^53 as a Lua number is refused")
  -- The literal 9007199254740993 is read by Lua as 9007199254740992: refused, never rounded.
  local plus_one = 9007199254740993
  check(plus_one == 2 ^ 53, "(the Lua literal 9007199254740993 is the double 2^53)")
  raises(function() iap.key(plus_one) end, "beyond 2%^53 %- 1", "2^53 + 1 as a Lua number is refused")
  raises(function() iap.key(2 ^ 53 + 1) end, "decimal string or an int64_t cdata", "the error says what to pass instead")
  raises(function() iap.key_string(2 ^ 53) end, "beyond 2%^53 %- 1", "key_string refuses 2^53 as a Lua number")
  -- Beyond 2^53 - 1, int64 cdata and decimal strings pass, exact.
  check(iap.key(9007199254740993LL) == 9007199254740993LL and iap.key_string(9007199254740993LL) == "9007199254740993",
    "9007199254740993LL is accepted, exact")
  check(iap.key("9007199254740993") == 9007199254740993LL and iap.key_string("9007199254740993") == "9007199254740993",
    "\"9007199254740993\" is accepted, exact")
  check(iap.key(9007199254740993ULL) == 9007199254740993LL, "uint64_t cdata in int64 range is accepted")
  raises(function() iap.key(18446744073709551615ULL) end, "above INT64_MAX", "uint64_t cdata above INT64_MAX is refused")
  raises(function() iap.key(ffi.new("double", 2 ^ 53)) end, "beyond 2%^53 %- 1", "a double cdata of 2^53 is refused")
  check(iap.key(ffi.new("int32_t", -5)) == -5LL, "an int32_t cdata is accepted")
  raises(function() iap.key("abc") end, "not a decimal", "a non-decimal string is refused")
  check(iap.key(ffi.new("int64_t", 42)) == 42LL, "int64_t cdata passes through")
  -- Cdata that is no number: refused, not turned into one by tonumber().
  raises(function() iap.key(ffi.new("bool", true)) end, "must be an int64_t cdata", "a bool cdata is refused as a key")
  raises(function() iap.key(ffi.cast("void *", 0)) end, "must be an int64_t cdata", "a NULL pointer cdata is refused as a key")
  raises(function() iap.key(ffi.cast("char *", ffi.new("char[4]"))) end, "must be an int64_t cdata", "a pointer cdata is refused as a key")
  -- Lists of product IDs: strings in a sequence, nothing else.
  check(iap.json_array({ "a", "b" }) == '["a","b"]' and iap.json_array({}) == "[]", "json_array of strings")
  raises(function() iap.json_array({ coins_100 = true }) end, "test%.lua:%d+: iap_bridge: a list of strings must be a sequence",
    "json_array of a set-style table raises, naming the caller")
  raises(function() iap.json_array({ 1, 2 }) end, "test%.lua:%d+: iap_bridge: a list of strings must hold strings only; item 1 is a number",
    "json_array of numbers raises")
  raises(function() iap.json_array({ "a", {} }) end, "item 2 is a table", "json_array of a nested table raises")
  raises(function() iap.json_array({ "a", nil, "c" }) end, "must be a sequence", "json_array of a list with a hole raises")
  check(iap.key_string(ffi.new("int64_t", -7)) == "-7", "key_string of cdata has no LL suffix")
end

------------------------------------------------------------------------
-- The message field reader
------------------------------------------------------------------------
do
  local m = '{"type":"7","message":"a \\"key\\":\\"1\\" inside","nested":{"key":"2"},"list":[{"key":"3"}],'
    .. '"key":"9007199254740993","productID":"caf\\u00e9 \\ud83d\\ude00 \\"q\\" \\\\","quantity":1,"expiresDate":null}'
  check(iap.field(m, "key") == "9007199254740993", "field finds the top-level key only")
  check(iap.field(m, "productID") == 'caf\195\169 \240\159\152\128 "q" \\', "field decodes escapes")
  check(iap.field(m, "quantity") == "1", "field reads a number")
  check(iap.field(m, "expiresDate") == "null", "field reads null")
  check(iap.field(m, "nested") == '{"key":"2"}', "field reads an object's text")
  check(iap.field(m, "missing") == nil, "absent field")
  check(iap.field("not json", "type") == nil, "not an object")
  local msg = iap.read_message(m)
  check(msg.type == "7" and msg.key == "9007199254740993" and msg.result == nil, "read_message")
  check(iap.json_quote('a"b\\c\n\1') == '"a\\"b\\\\c\\n\\u0001"', "json_quote")
  check(iap.error_name(-17) == "IAP_E_NOT_DELIVERED" and iap.error_name(-18) == "IAP_E_RESOURCE"
    and iap.error_name(-19) == "IAP_E_STORE", "codes announced for 1.1 are named")
  check(iap.codes.IAP_E_CLOSED == -8 and iap.error_name(-1000) == "IAP_E_UNKNOWN_CODE", "codes table")
end

------------------------------------------------------------------------
-- The cdef list is the header's: every prototype, written the same way
------------------------------------------------------------------------
do
  local f = assert(io.open(here .. "../../../include/iap_bridge.h", "r"))
  local header = {}
  for line in f:lines() do
    if line:match("^typedef .*iap_") or line:match("^[%a][%w_ ]*%*?%s*iap_[%w_]+%(.*%);$") then header[line] = true end
  end
  f:close()
  local declared, n = {}, 0
  for _, d in ipairs(iap.declarations) do declared[d] = true end
  for line in pairs(header) do
    n = n + 1
    check(declared[line], "the header's \"" .. line .. "\" is declared in iap_bridge.lua, as written")
  end
  for d in pairs(declared) do check(header[d], "iap_bridge.lua's \"" .. d .. "\" is in the header") end
  check(n >= 24 and header["int32_t iap_show_store_messages(iap_bridge *b);"], n .. " prototypes and typedefs read from the header")
end

------------------------------------------------------------------------
-- Against the library
------------------------------------------------------------------------
local lib_path = assert(os.getenv("IAP_LIB"), "set IAP_LIB to the library's path")
local catalog = assert(os.getenv("IAP_CATALOG"), "set IAP_CATALOG to the .storekit catalog's absolute path")
local lib = iap.load(lib_path)
local dir = io.popen("mktemp -d /tmp/iap-lua-test.XXXXXX"):read("*l")
assert(dir and #dir > 0, "mktemp failed")
local config = iap.simulator_config(dir .. "/data", catalog, dir .. "/state")

local ok_run, run_err = pcall(function()
  print("lua: library " .. lib:version() .. (lib:version_number() and (" (" .. lib:version_number() .. ")") or ""))
  check(#lib:version() > 0, "version")
  check(lib:version_number() == nil or lib:version_number() >= 10000, "version_number is optional")

  check_err(iap.codes.IAP_E_BAD_CONFIG, "open relative dataDir", lib:open('{"store":"simulator","dataDir":"relative"}'))
  check_err(iap.codes.IAP_E_BAD_JSON, "open bad JSON", lib:open("{"))

  local bridge = check_ok("open", lib:open(config))
  assert(bridge, "open failed")
  check(bridge:is_open(), "is_open")

  check_ok("request_products", bridge:request_products({ "coins_100", "remove_ads", "no_such_thing" }))
  local products = wait_for(bridge, "999")
  check(products ~= nil and products:find("coins_100", 1, true) ~= nil, "the \"999\" arrives with coins_100")
  check_err(iap.codes.IAP_E_BAD_JSON, "request_products bad JSON", bridge:request_products("not json"))

  -- Buy, poll for the "7", confirm with the message's key.
  local key = check_ok("buy coins_100", bridge:buy("coins_100", os.time() * 1000))
  check(ffi.istype("int64_t", key) and key ~= 0, "buy returns an int64_t key")
  local m = wait_for(bridge, "7")
  check(m ~= nil, "the \"7\" arrives")
  if m then
    local msg = iap.read_message(m)
    check(msg.result == "0", "result is \"0\": " .. m)
    check(msg.productID == "coins_100", "productID")
    check(msg.key == iap.key_string(key), "the message's key is the key buy returned")
    check(iap.key(msg.key) == key, "key() of the message's key equals the cdata key")
    check_ok("confirm with the message's key string", bridge:confirm(msg.key))
    check_ok("flush after confirm", bridge:flush())
    check_err(iap.codes.IAP_E_UNKNOWN_KEY, "confirm twice", bridge:confirm(msg.key))
  end
  check_ok("flush", bridge:flush())

  -- An SDK-chosen key, confirmed as int64_t cdata.
  local k2 = check_ok("buy remove_ads with an SDK key", bridge:buy("remove_ads"))
  local m2 = wait_for(bridge, "7")
  check(m2 ~= nil and iap.field(m2, "key") == iap.key_string(k2) and iap.field(m2, "result") == "0",
    "the second \"7\" carries the SDK's key")
  check_ok("confirm with int64_t cdata", bridge:confirm(k2))

  -- Three units in one purchase: one "7" with quantity 3 and the price of three.
  local k3 = check_ok("buy_quantity coins_100 x3", bridge:buy_quantity("coins_100", 3))
  local m3 = wait_for(bridge, "7")
  check(m3 ~= nil and iap.field(m3, "key") == iap.key_string(k3) and iap.field(m3, "quantity") == "3"
    and iap.field(m3, "price") == "2.97", "the quantity \"7\": quantity 3, the price of three: " .. tostring(m3))
  check_ok("confirm the quantity purchase", bridge:confirm(k3))
  check_err(iap.codes.IAP_E_INVALID_ARG, "buy_quantity 11", bridge:buy_quantity("coins_100", 11))
  check_err(iap.codes.IAP_E_INVALID_ARG, "buy_quantity 1.5", bridge:buy_quantity("coins_100", 1.5))
  -- Wrong types raise (the module's promise), never reach the store as something else.
  raises(function() bridge:buy("coins_100", ffi.new("bool", true)) end, "must be an int64_t cdata", "buy with a bool cdata click time")
  raises(function() bridge:buy("coins_100", ffi.cast("void *", 0)) end, "must be an int64_t cdata", "buy with a NULL pointer click time")
  raises(function() bridge:request_products({ coins_100 = true }) end, "test%.lua:%d+: iap_bridge: a list of strings must be a sequence",
    "request_products with a set-style table")
  raises(function() bridge:request_products({ 1, 2 }) end, "test%.lua:%d+: iap_bridge: a list of strings must hold strings only",
    "request_products with numbers")
  raises(function() bridge:request_products({ {} }) end, "item 1 is a table", "request_products with a table in the list")
  raises(function() bridge:subscription_status({ coins_100 = true }) end, "test%.lua:%d+: iap_bridge: a list of strings must be a sequence",
    "subscription_status with a set-style table")
  raises(function() bridge:subscription_status(ffi.cast("void *", 0)) end, "must be a string",
    "subscription_status with a NULL pointer cdata (not taken for nil: every group)")
  -- An int64 cdata quantity, as int64 cdata is taken for keys and click times.
  local k2q = check_ok("buy_quantity coins_100 x 2LL", bridge:buy_quantity("coins_100", 2LL))
  local m2q = wait_for(bridge, "7")
  check(m2q ~= nil and iap.field(m2q, "key") == iap.key_string(k2q) and iap.field(m2q, "quantity") == "2",
    "the 2LL quantity \"7\": quantity 2: " .. tostring(m2q))
  check_ok("confirm the 2LL purchase", bridge:confirm(k2q))
  check_err(iap.codes.IAP_E_INVALID_ARG, "buy_quantity 11LL", bridge:buy_quantity("coins_100", 11LL))
  check_err(iap.codes.IAP_E_INVALID_ARG, "buy_quantity 2^40 as int64 cdata", bridge:buy_quantity("coins_100", 1099511627776LL))
  raises(function() bridge:buy_quantity("coins_100", "3") end, "test%.lua:%d+: iap_bridge: quantity must be a number",
    "buy_quantity with a string quantity")
  raises(function() bridge:buy_quantity("coins_100", ffi.new("bool", true)) end, "quantity must be a number",
    "buy_quantity with a bool cdata quantity")

  -- Bad input.
  check_err(iap.codes.IAP_E_UNKNOWN_PRODUCT, "buy unknown product", bridge:buy("no_such_product", os.time() * 1000 + 1))
  check_err(iap.codes.IAP_E_INVALID_ARG, "buy empty product", bridge:buy(""))
  check_err(iap.codes.IAP_E_INVALID_ARG, "buy with a NUL", bridge:buy("coins\0_100"))
  check_err(iap.codes.IAP_E_UNKNOWN_KEY, "confirm a key never issued", bridge:confirm("424242"))
  raises(function() bridge:confirm(2 ^ 60) end, "lost digits", "confirm with a lossy Lua number")
  raises(function() bridge:confirm(9007199254740993) end, "beyond 2%^53 %- 1", "confirm with the Lua number 2^53 + 1")
  raises(function() bridge:buy("coins_100", 2 ^ 53) end, "beyond 2%^53 %- 1", "buy with a click time of 2^53 as a Lua number")
  raises(function() bridge:buy_quantity("coins_100", 2, 9007199254740993) end, "beyond 2%^53 %- 1",
    "buy_quantity with a click time of 2^53 + 1 as a Lua number")
  check_err(iap.codes.IAP_E_UNKNOWN_OP, "simulator unknown op", bridge:simulator('{"op":"no_such_op"}'))
  local txns = check_ok("simulator transactions", bridge:simulator('{"op":"transactions"}'))
  check(txns and txns:find("coins_100", 1, true) ~= nil, "the store lists the purchase")
  local _, e = bridge:buy("no_such_product")
  check(tostring(e):find("IAP_E_UNKNOWN_PRODUCT (-10)", 1, true) ~= nil, "tostring(err): " .. tostring(e))

  -- Close; every call then answers IAP_E_CLOSED.
  check_ok("close", bridge:close())
  check(not bridge:is_open(), "not open after close")
  check_err(iap.codes.IAP_E_CLOSED, "close twice", bridge:close())
  check_err(iap.codes.IAP_E_CLOSED, "buy after close", bridge:buy("coins_100"))
  check_err(iap.codes.IAP_E_CLOSED, "poll after close", bridge:poll())
  check_err(iap.codes.IAP_E_CLOSED, "confirm after close", bridge:confirm("1"))

  -- The raw C functions: the library itself refuses a stale pointer.
  local out = ffi.new("iap_bridge *[1]")
  check(lib.C.iap_open(config, out) == 0, "raw open after close (dataDir released)")
  local raw = out[0]
  check(lib.C.iap_close(raw) == 0, "raw close")
  local k = ffi.new("int64_t[1]", 5)
  check(lib.C.iap_buy(raw, "coins_100", 0, k) == iap.codes.IAP_E_CLOSED and k[0] == 0, "the library answers IAP_E_CLOSED")

  -- Reopen: everything was confirmed, nothing comes back.
  local again = check_ok("reopen", lib:open(config))
  if again then
    check(wait_for(again, "7", 1000) == nil, "nothing confirmed is delivered again")
    check_ok("close again", again:close())
  end

  -- Keys beyond 2^53 go through the library exact: click times as int64_t cdata
  -- and as a decimal string become the purchases' keys, digit for digit.
  local big = check_ok("open for big keys", lib:open(iap.simulator_config(dir .. "/big-data", catalog, dir .. "/big-state")))
  if big then
    local bk = check_ok("buy with click 9007199254740993LL", big:buy("coins_100", 9007199254740993LL))
    check(bk == 9007199254740993LL, "the key is 9007199254740993, exact: " .. tostring(bk))
    local bm = wait_for(big, "7")
    check(bm and iap.field(bm, "key") == "9007199254740993", "the \"7\" carries key \"9007199254740993\": " .. tostring(bm))
    if bm then check_ok("confirm \"9007199254740993\"", big:confirm(iap.field(bm, "key"))) end
    local sk = check_ok("buy with click \"9007199254740995\"", big:buy("coins_100", "9007199254740995"))
    check(sk == 9007199254740995LL, "the key is 9007199254740995, exact: " .. tostring(sk))
    local sm = wait_for(big, "7")
    check(sm and iap.field(sm, "key") == "9007199254740995", "the \"7\" carries key \"9007199254740995\": " .. tostring(sm))
    if sm then check_ok("confirm 9007199254740995LL", big:confirm(9007199254740995LL)) end
    check_ok("close the big-key bridge", big:close())
  end

  -- Subscription status, a StoreKit message held then shown, sheets, the app transaction.
  local subs_config = iap.simulator_config(dir .. "/subs-data", catalog, dir .. "/subs-state",
    { store_messages = "defer", app_version = "2.5" })
  check(subs_config:find('"simulator":{"stateDir":', 1, true) and subs_config:find(',"appVersion":"2.5"},"storeMessages":"defer"}', 1, true),
    "simulator_config options: " .. subs_config)
  local sb = check_ok("open with store_messages defer", lib:open(subs_config))
  if sb then
    check_ok("subscription_status", sb:subscription_status({ "vip_monthly", "coins_100" }))
    local st = wait_for(sb, "subscription")
    check(st and iap.field(st, "reason") == "request" and st:find('"state":"none"', 1, true)
      and iap.field(st, "invalid") == '["coins_100"]', "\"subscription\": vip never subscribed, coins_100 invalid: " .. tostring(st))
    local vk = check_ok("buy vip_monthly", sb:buy("vip_monthly"))
    local vm = wait_for(sb, "7")
    check(vm and iap.field(vm, "result") == "0", "vip_monthly bought")
    if vm then check_ok("confirm vip_monthly", sb:confirm(iap.field(vm, "key"))) end
    local ch = wait_for(sb, "subscription")
    check(ch and iap.field(ch, "reason") == "change" and ch:find('"state":"subscribed"', 1, true) and ch:find('"active":true', 1, true),
      "a \"subscription\" change: subscribed, active: " .. tostring(ch))
    check_ok("subscription_status() for every group", sb:subscription_status())
    local every = wait_for(sb, "subscription")
    check(every and iap.field(every, "reason") == "request" and every:find('"state":"subscribed"', 1, true), "every group: " .. tostring(every))

    check_ok("billing_issue", sb:simulator('{"op":"billing_issue","productID":"vip_monthly"}'))
    local held = wait_for(sb, "storeMessage")
    local hm = held and iap.read_message(held) or {}
    check(hm.reason == "billingIssue" and hm.state == "deferred", "a deferred \"storeMessage\": " .. tostring(held))
    check_ok("show_store_messages", sb:show_store_messages())
    local shown = wait_for(sb, "storeMessage")
    check(shown and iap.read_message(shown).state == "shown" and iap.read_message(shown).id == hm.id, "shown: " .. tostring(shown))

    local txn = vm and iap.field(vm, "transactionID") or "1"
    check_ok("sheet_next refund cancel", sb:simulator('{"op":"sheet_next","sheet":"refund","outcome":"cancel"}'))
    check_ok("request_refund", sb:request_refund(txn))
    local rs = wait_for(sb, "sheet")
    local rm = rs and iap.read_message(rs) or {}
    check(rm.sheet == "refund" and rm.outcome == "userCancelled" and rm.transactionID == txn, "refund sheet: " .. tostring(rs))
    check_ok("manage_subscriptions", sb:manage_subscriptions())
    local ms = wait_for(sb, "sheet")
    check(ms and iap.read_message(ms).sheet == "manageSubscriptions" and iap.read_message(ms).outcome == "dismissed", "manage sheet: " .. tostring(ms))
    check_ok("redeem_offer_code", sb:redeem_offer_code())
    local os_ = wait_for(sb, "sheet")
    check(os_ and iap.read_message(os_).sheet == "offerCode", "offer code sheet: " .. tostring(os_))
    -- One sheet at a time: the player keeps this one up until sheet_close.
    check_ok("sheet_next refund hold", sb:simulator('{"op":"sheet_next","sheet":"refund","outcome":"hold"}'))
    check_ok("request_refund, held up", sb:request_refund(txn))
    check_err(iap.codes.IAP_E_BUSY, "manage_subscriptions while a sheet is up", sb:manage_subscriptions())
    check_err(iap.codes.IAP_E_BUSY, "redeem_offer_code while a sheet is up", sb:redeem_offer_code())
    check_ok("sheet_close", sb:simulator('{"op":"sheet_close"}'))
    local hs = wait_for(sb, "sheet")
    check(hs and iap.read_message(hs).sheet == "refund" and iap.read_message(hs).outcome == "userCancelled",
      "the held refund sheet, closed: userCancelled: " .. tostring(hs))

    check_ok("app_transaction", sb:app_transaction())
    local app = wait_for(sb, "app")
    check(app and iap.field(app, "originalAppVersion") == "2.5" and iap.field(app, "appVersion") == "2.5"
      and iap.field(app, "verified") == "true", "\"app\": first got 2.5, verified: " .. tostring(app))

    check_err(iap.codes.IAP_E_INVALID_ARG, "request_refund 12a", sb:request_refund("12a"))
    check_err(iap.codes.IAP_E_INVALID_ARG, "request_refund with a NUL", sb:request_refund("1\0"))
    check_err(iap.codes.IAP_E_BAD_JSON, "subscription_status bad JSON", sb:subscription_status("not json"))
    raises(function() sb:request_refund(2000000000000001) end, "must be a string", "request_refund with a number")

    check_ok("close the subscriptions bridge", sb:close())
    check_err(iap.codes.IAP_E_CLOSED, "subscription_status after close", sb:subscription_status())
    check_err(iap.codes.IAP_E_CLOSED, "app_transaction after close", sb:app_transaction())
    check_err(iap.codes.IAP_E_CLOSED, "manage_subscriptions after close", sb:manage_subscriptions())
    check_err(iap.codes.IAP_E_CLOSED, "request_refund after close", sb:request_refund(txn))
    check_err(iap.codes.IAP_E_CLOSED, "redeem_offer_code after close", sb:redeem_offer_code())
    check_err(iap.codes.IAP_E_CLOSED, "show_store_messages after close", sb:show_store_messages())
  end

  -- Subscription offers: the sample catalog's free trial on the "7" and the
  -- entitlement; buy_offer and manage_subscription_group; with a win-back
  -- offer added to the catalog, the offer listed once lapsed and bought.
  local cf = assert(io.open(catalog, "r"))
  local text = cf:read("*a")
  cf:close()
  local anchor = '"productID" : "vip_monthly",'
  local s0, s1 = text:find(anchor, 1, true)
  assert(s0 and not text:find(anchor, s1, true), "the sample catalog has one " .. anchor)
  local wb_catalog = dir .. "/WinBack.storekit"
  local wf = assert(io.open(wb_catalog, "w"))
  wf:write(text:sub(1, s0 - 1), '"winbackOffers" : [ { "offerID" : "wb_half", "referenceName" : "Half price", "displayPrice" : "1.49", '
    .. '"numberOfPeriods" : 2, "paymentMode" : "payAsYouGo", "subscriptionPeriod" : "P1M" } ],\n', text:sub(s0))
  wf:close()
  local ob = check_ok("open for offers", lib:open(iap.simulator_config(dir .. "/offers-data", wb_catalog, dir .. "/offers-state")))
  if ob then
    local tk = check_ok("buy vip_monthly (its first subscription)", ob:buy("vip_monthly"))
    local tm = wait_for(ob, "7")
    local offer = tm and iap.field(tm, "offer") or "{}"
    check(tm and iap.field(tm, "key") == iap.key_string(tk) and iap.field(tm, "result") == "0" and iap.field(tm, "price") == "0"
      and iap.field(offer, "type") == "introductory" and iap.field(offer, "id") == "null"
      and iap.field(offer, "paymentMode") == "freeTrial" and iap.field(offer, "period") == "P1W",
      "the \"7\" of the free trial: price 0, offer introductory/freeTrial/P1W: " .. tostring(tm))
    local ent = wait_for(ob, "entitlements")
    while ent and iap.field(ent, "reason") ~= "change" do ent = wait_for(ob, "entitlements") end
    check(ent and ent:find('"offer":{"type":"introductory"', 1, true), "the entitlement carries the offer: " .. tostring(ent))
    check_ok("confirm the trial", ob:confirm(tk))

    local uk = check_ok("buy_offer with an unknown offer", ob:buy_offer("vip_monthly", "no_such_offer"))
    local um = wait_for(ob, "7")
    check(um and iap.field(um, "key") == iap.key_string(uk) and iap.field(um, "result") == "5",
      "an unknown offer: a \"7\" result 5: " .. tostring(um))
    check_ok("confirm the refusal", ob:confirm(uk))
    check_err(iap.codes.IAP_E_INVALID_ARG, "buy_offer with an empty offer", ob:buy_offer("vip_monthly", ""))
    check_err(iap.codes.IAP_E_INVALID_ARG, "buy_offer with a NUL", ob:buy_offer("vip_monthly", "wb\0"))
    raises(function() ob:buy_offer("vip_monthly", nil) end, "must be a string", "buy_offer with a nil offer")
    raises(function() ob:buy_offer("vip_monthly", "wb_half", 9007199254740993) end, "beyond 2%^53 %- 1",
      "buy_offer with a click time of 2^53 + 1 as a Lua number")

    check_ok("manage_subscription_group 6A0000A0", ob:manage_subscription_group("6A0000A0"))
    local gs = wait_for(ob, "sheet")
    local gm = gs and iap.read_message(gs) or {}
    check(gm.sheet == "manageSubscriptions" and gm.outcome == "dismissed" and gm.subscriptionGroupID == "6A0000A0",
      "the group's manage sheet: " .. tostring(gs))
    check_err(iap.codes.IAP_E_INVALID_ARG, "manage_subscription_group of an unknown group", ob:manage_subscription_group("no_such_group"))
    check_err(iap.codes.IAP_E_INVALID_ARG, "manage_subscription_group of an empty ID", ob:manage_subscription_group(""))
    raises(function() ob:manage_subscription_group(nil) end, "must be a string", "manage_subscription_group(nil)")

    -- Lapsed: the win-back offer is listed, and buy_offer buys it.
    check_ok("auto-renew off", ob:simulator('{"op":"auto_renew","productID":"vip_monthly","enabled":false}'))
    check_ok("advance 10 days", ob:simulator('{"op":"advance","seconds":864000}'))
    check_ok("request_products vip_monthly", ob:request_products({ "vip_monthly" }))
    local pm = wait_for(ob, "999")
    local wbs = pm and pm:match('"winBackOffers":(%b[])') or "[]"
    local wb = wbs:match("^%[(%b{})%]$") or "{}" -- exactly one offer
    check(iap.field(wb, "id") == "wb_half" and iap.field(wb, "type") == "winBack" and iap.field(wb, "paymentMode") == "payAsYouGo"
      and iap.field(wb, "period") == "P1M" and iap.field(wb, "periods") == "2" and iap.field(wb, "price") == "1.49",
      "lapsed: the \"999\" lists the win-back offer: " .. tostring(pm))
    local wk = check_ok("buy_offer wb_half with click \"9007199254740993\"", ob:buy_offer("vip_monthly", "wb_half", "9007199254740993"))
    check(wk == 9007199254740993LL, "the key is 9007199254740993, exact: " .. tostring(wk))
    local wm = wait_for(ob, "7")
    local wo = wm and iap.field(wm, "offer") or "{}"
    check(wm and iap.field(wm, "key") == "9007199254740993" and iap.field(wm, "result") == "0" and iap.field(wm, "price") == "1.49"
      and iap.field(wo, "type") == "winBack" and iap.field(wo, "id") == "wb_half",
      "the win-back \"7\": the offer's price, offer winBack wb_half: " .. tostring(wm))
    check_ok("confirm the win-back purchase", ob:confirm(wk))
    check_ok("close the offers bridge", ob:close())
    check_err(iap.codes.IAP_E_CLOSED, "buy_offer after close", ob:buy_offer("vip_monthly", "wb_half"))
    check_err(iap.codes.IAP_E_CLOSED, "manage_subscription_group after close", ob:manage_subscription_group("6A0000A0"))
  end

  -- The library refuses the new calls on a closed pointer too.
  check(lib.C.iap_subscription_status(raw, nil) == iap.codes.IAP_E_CLOSED and lib.C.iap_app_transaction(raw) == iap.codes.IAP_E_CLOSED
    and lib.C.iap_manage_subscriptions(raw) == iap.codes.IAP_E_CLOSED and lib.C.iap_request_refund(raw, "1") == iap.codes.IAP_E_CLOSED
    and lib.C.iap_redeem_offer_code(raw) == iap.codes.IAP_E_CLOSED and lib.C.iap_show_store_messages(raw) == iap.codes.IAP_E_CLOSED
    and lib.C.iap_buy_offer(raw, "vip_monthly", "wb", 0, k) == iap.codes.IAP_E_CLOSED
    and lib.C.iap_manage_subscription_group(raw, "6A0000A0") == iap.codes.IAP_E_CLOSED,
    "the library answers IAP_E_CLOSED to the eight newer calls on a closed bridge")
end)
if not ok_run then
  failed = failed + 1
  io.stderr:write("lua: FAIL: the test raised: " .. tostring(run_err) .. "\n")
end

os.execute("rm -rf '" .. dir .. "'")
print(string.format("lua: %d passed, %d failed", passed, failed))
os.exit(failed == 0 and 0 or 1)
