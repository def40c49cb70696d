-- The Lua examples developers copy, run as written against the simulator.
--   IAP_LIB=/abs/libIAPBridge.so IAP_CATALOG=/abs/Game.storekit luajit Tests/bindings/lua/examples.lua
-- (Tests/bindings/lua/run.sh sets both.) Exits non-zero on any failure.
--
-- Each example's per-frame loop (`for m in bridge:messages() do ... end`) is
-- cut out of the file it is documented in (the header comment of
-- bindings/lua/iap_bridge.lua, the Lua section of docs/INTEGRATION.md) and run
-- as the game's frame, with the game's own functions supplied here (grant,
-- take_back, save). The store then: cancels a purchase (nothing may be
-- granted, the "7" must be confirmed, its key not saved), sells one (granted
-- once), delivers one again after a crash between the save and the confirm
-- (not granted twice), and refunds one (a "revoked": the item is taken back
-- and the "revoked" confirmed). Nothing may be left to deliver at the end.
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local repo = here .. "../../../"
package.path = repo .. "bindings/lua/?.lua;" .. package.path

local ffi = require("ffi")
local iap = require("iap_bridge")
pcall(ffi.cdef, "int usleep(unsigned int usec);")

local passed, failed = 0, 0
local function check(ok, what)
  if ok then
    passed = passed + 1
  else
    failed = failed + 1
    io.stderr:write("lua examples: FAIL: " .. what .. "\n")
  end
end

-- Every `for m in bridge:messages() do` loop of a file, up to the `end` at
-- its own indentation, with the indentation removed (comment markers too:
-- the header's example sits inside a --[[ ]] block, as plain lines).
local function extract(path)
  local f = assert(io.open(repo .. path, "r"))
  local lines = {}
  for line in f:lines() do lines[#lines + 1] = line end
  f:close()
  local loops = {}
  local i = 1
  while i <= #lines do
    local indent = lines[i]:match("^(%s*)for m in bridge:messages%(%) do%s*$")
    if indent then
      local body, first = {}, i
      repeat
        body[#body + 1] = lines[i]:sub(#indent + 1)
        i = i + 1
      until i > #lines or lines[i - 1] == indent .. "end"
      check(lines[i - 1] == indent .. "end", path .. ":" .. first .. ": the example's loop has its end")
      loops[#loops + 1] = { where = path .. ":" .. first, code = table.concat(body, "\n") }
    end
    i = i + 1
  end
  return loops
end

local lib = iap.load(assert(os.getenv("IAP_LIB"), "set IAP_LIB to the library's path"))
local catalog = assert(os.getenv("IAP_CATALOG"), "set IAP_CATALOG to the .storekit catalog's absolute path")
local root = io.popen("mktemp -d /tmp/iap-lua-examples.XXXXXX"):read("*l")
assert(root and #root > 0, "mktemp failed")

local function scenario(example, n)
  local dir = root .. "/" .. n
  local config = iap.simulator_config(dir .. "-data", catalog, dir .. "-state")
  local what = example.where

  -- The game: what the player owns, and its save (the keys it holds, as strings).
  local owned, granted_keys, taken_keys = {}, {}, {}
  local save = { granted = {}, writes = 0 }
  function save:write() self.writes = self.writes + 1 end
  local function grant(msg)
    owned[msg.productID] = (owned[msg.productID] or 0) + 1
    granted_keys[#granted_keys + 1] = msg.key
  end
  local function take_back(msg)
    owned[msg.productID] = (owned[msg.productID] or 0) - 1
    taken_keys[#taken_keys + 1] = msg.key
  end

  -- The bridge the example sees: the real one, with every message and
  -- confirm recorded; `crash_before_confirm` plays a game that dies after
  -- its save and before its confirm (the confirm never reaches the SDK).
  local real
  local seen, confirms = {}, {}
  local crash_before_confirm = false
  local bridge = {
    messages = function(_)
      local next_message = real:messages()
      return function()
        local m = next_message()
        if m then seen[#seen + 1] = iap.read_message(m) end
        return m
      end
    end,
    confirm = function(_, key)
      local k = iap.key_string(key)
      confirms[k] = (confirms[k] or 0) + 1
      if crash_before_confirm then return true end
      return real:confirm(key)
    end,
  }
  local env = setmetatable({ iap = iap, bridge = bridge, save = save, grant = grant, take_back = take_back },
    { __index = _G })
  local frame, err = loadstring(example.code, "=" .. what)
  check(frame ~= nil, what .. ": the example compiles: " .. tostring(err))
  if not frame then return end
  setfenv(frame, env)

  local function frames_until(done, max_ms)
    for _ = 1, (max_ms or 5000) / 10 do
      local ok, e = pcall(frame)
      if not ok then
        check(false, what .. ": the example raised: " .. tostring(e))
        return false
      end
      if done() then return true end
      ffi.C.usleep(10000)
    end
    return done()
  end
  local function message(type_, key)
    for _, m in ipairs(seen) do
      if m.type == type_ and (key == nil or m.key == key) then return m end
    end
  end
  local function count(list, key)
    local c = 0
    for _, k in ipairs(list) do if k == key then c = c + 1 end end
    return c
  end

  real = assert(lib:open(config))

  -- 1. The player cancels: nothing granted, the "7" confirmed, its key not saved.
  assert(real:simulator('{"op":"cancel_next"}'))
  local cancelled = iap.key_string(assert(real:buy("remove_ads")))
  check(frames_until(function() return confirms[cancelled] end), what .. ": the cancelled \"7\" is confirmed")
  local m1 = message("7", cancelled)
  check(m1 and m1.result == "1", what .. ": the store answered \"1\" (cancelled): " .. tostring(m1 and m1.result))
  check(#granted_keys == 0 and next(owned) == nil, what .. ": nothing is granted for a cancelled purchase")
  check(save.granted[cancelled] == nil, what .. ": a cancelled purchase's key is not saved as granted")

  -- 2. A purchase: granted once, saved, confirmed.
  local bought = iap.key_string(assert(real:buy("remove_ads")))
  check(frames_until(function() return confirms[bought] end), what .. ": the successful \"7\" is confirmed")
  local m2 = message("7", bought)
  check(m2 and m2.result == "0", what .. ": the store answered \"0\"")
  check(owned.remove_ads == 1 and count(granted_keys, bought) == 1 and save.granted[bought],
    what .. ": remove_ads is granted once and its key saved")
  check(save.writes >= 1, what .. ": the game saved before confirming")

  -- 3. A crash between the save and the confirm: delivered again, not granted twice.
  local coins = iap.key_string(assert(real:buy("coins_100")))
  crash_before_confirm = true
  check(frames_until(function() return confirms[coins] end), what .. ": the coins \"7\" is handled")
  crash_before_confirm = false
  check(owned.coins_100 == 1, what .. ": 100 coins granted")
  assert(real:close())
  real = assert(lib:open(config))
  check(frames_until(function() return confirms[coins] == 2 end), what .. ": the coins \"7\" comes again and is confirmed")
  check(owned.coins_100 == 1 and count(granted_keys, coins) == 1,
    what .. ": a result delivered again is not granted twice (coins granted " .. tostring(owned.coins_100) .. " times)")

  -- 4. A refund: the "revoked" takes the item back and is confirmed.
  assert(real:simulator('{"op":"refund","transactionID":"' .. m2.transactionID .. '"}'))
  check(frames_until(function()
    local r = message("revoked")
    return r and confirms[r.key]
  end), what .. ": the \"revoked\" is confirmed")
  local r = message("revoked") or {}
  check(r.productID == "remove_ads" and r.key ~= bought, what .. ": the refund is a \"revoked\" for remove_ads, under a key of its own")
  check(owned.remove_ads == 0 and count(taken_keys, r.key) == 1, what .. ": the refund took remove_ads back (owned: "
    .. tostring(owned.remove_ads) .. ")")
  check(r.key and save.granted[r.key], what .. ": the \"revoked\"'s key is saved")
  check(owned.coins_100 == 1 and #granted_keys == 2 and #taken_keys == 1,
    what .. ": in all: 2 grants (remove_ads, coins), 1 take-back")
  assert(real:close())

  -- 5. Next start: everything was confirmed, nothing comes back.
  real = assert(lib:open(config))
  local before = #seen
  frames_until(function() return false end, 300)
  local again = 0
  for i = before + 1, #seen do
    if seen[i].type == "7" or seen[i].type == "revoked" then again = again + 1 end
  end
  check(again == 0, what .. ": nothing is delivered again after the confirms (" .. again .. ")")
  assert(real:close())
end

local ok, err = pcall(function()
  local examples = {}
  for _, path in ipairs({ "bindings/lua/iap_bridge.lua", "docs/INTEGRATION.md" }) do
    local found = extract(path)
    check(#found >= 1, path .. ": has a `for m in bridge:messages() do` example")
    for _, e in ipairs(found) do examples[#examples + 1] = e end
  end
  for n, e in ipairs(examples) do
    print("lua examples: running " .. e.where)
    scenario(e, n)
  end
end)
if not ok then
  failed = failed + 1
  io.stderr:write("lua examples: FAIL: the test raised: " .. tostring(err) .. "\n")
end
os.execute("rm -rf '" .. root .. "'")
print(string.format("lua examples: %d passed, %d failed", passed, failed))
os.exit(failed == 0 and 0 or 1)
