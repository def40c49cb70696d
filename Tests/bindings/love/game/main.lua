-- A tiny LÖVE game using bindings/lua/iap_bridge.lua as a game would: the
-- runner (run.sh) copies iap_bridge.lua next to this file. It opens a bridge
-- on the simulated store, asks for products, buys 100 coins, and on the "7"
-- grants, "saves", confirms, closes and quits with status 0. Any failure, or
-- no "7" within 5 s, quits with status 1.
local iap = require("iap_bridge")

local passed, failed = 0, 0
local function check(ok, what)
  if ok then passed = passed + 1 else failed = failed + 1; io.stderr:write("love: FAIL: " .. what .. "\n") end
end

local bridge, key
local coins, granted = 0, {}
local got_products, elapsed = false, 0

local function finish()
  if bridge and bridge:is_open() then
    local ok, err = bridge:close()
    check(ok, "close: " .. tostring(err))
  end
  print(string.format("love: %d passed, %d failed", passed, failed))
  love.event.quit(failed == 0 and 0 or 1)
end

function love.load()
  print("love: " .. string.format("LOVE %d.%d.%d", love.getVersion()) .. ", " .. jit.version)
  -- A shipped game passes its bundled library's path (love.filesystem.getSourceBaseDirectory()).
  local lib = iap.load(os.getenv("IAP_LIB"))
  local dir = os.getenv("IAP_DIR")
  local err
  bridge, err = lib:open(iap.simulator_config(dir .. "/data", os.getenv("IAP_CATALOG"), dir .. "/state"))
  check(bridge ~= nil, "open: " .. tostring(err))
  if not bridge then return finish() end
  check(bridge:request_products({ "coins_100", "remove_ads" }) == true, "request_products")
  key, err = bridge:buy("coins_100", os.time() * 1000)
  check(key ~= nil, "buy: " .. tostring(err))
  local _, e2 = bridge:buy("no_such_product")
  check(e2 and e2.code == iap.codes.IAP_E_UNKNOWN_PRODUCT, "buy unknown product: " .. tostring(e2))
  if not key then return finish() end
end

function love.update(dt)
  if not bridge or not bridge:is_open() then return end
  elapsed = elapsed + dt
  for m in bridge:messages() do
    local msg = iap.read_message(m)
    if msg.type == "999" then
      got_products = m:find("coins_100", 1, true) ~= nil
    elseif msg.type == "7" then
      check(msg.result == "0", "result \"0\": " .. m)
      check(msg.productID == "coins_100", "productID")
      check(msg.key == iap.key_string(key), "the message's key is the key buy returned")
      if msg.result == "0" and not granted[msg.key] then
        coins = coins + 100
        granted[msg.key] = true -- a real game saves here, before confirming
      end
      check(bridge:confirm(msg.key) == true, "confirm")
      check(bridge:flush() == true, "flush")
      check(got_products, "the \"999\" arrived before the \"7\"")
      check(coins == 100, "granted once")
      return finish()
    end
  end
  if elapsed > 5 then
    check(false, "no \"7\" within 5 s")
    finish()
  end
end
