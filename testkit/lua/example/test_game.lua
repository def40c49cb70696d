--[[
The example game's purchase code under the test kit (LuaJIT): killed between
paying and granting at every point, restarted, granted exactly once; Ask to
Buy approved and declined while the game is closed; a refund; a failed
purchase; a lapsed subscription; a planted double grant the check catches.

  IAP_LIB=/abs/libIAPBridge.so IAP_CATALOG=/abs/Game.storekit \
    LUA_PATH='bindings/lua/?.lua;testkit/lua/?.lua;testkit/lua/example/?.lua' \
    luajit testkit/lua/example/test_game.lua
]]
local tk = require("iap_testkit")
local game = require("game")

local here = arg[0]:match("^(.*)/[^/]*$") or "."
local catalog = assert(os.getenv("IAP_CATALOG"), "set IAP_CATALOG to the .storekit file")
local passed, failed = 0, 0

local function test(name, fn)
  local kit = tk.new({ catalog = catalog })
  local ok, e = xpcall(function() fn(kit) end, debug.traceback)
  kit:cleanup()
  if ok then passed = passed + 1; print("ok   " .. name)
  else failed = failed + 1; print("FAIL " .. name .. "\n" .. tostring(e)) end
end

local function play(kit, buy, opts)
  return kit:run_game("luajit " .. here .. "/game.lua " .. kit.root .. "/save" .. (buy and (" buy " .. buy) or ""), opts)
end
local function saved(kit) return game.Save.load(kit.root .. "/save") end
local function check(kit)
  local s = saved(kit)
  return kit:assert_granted_exactly_once(s.grants, s.takebacks), s
end

for _, point in ipairs({ "after_charge", "before_save", "before_confirm", "after_confirm" }) do
  test("killed at " .. point .. ", restarted: granted exactly once", function(kit)
    local run = play(kit, "coins_100", { kill_at = point })
    assert(run.killed_at == point and run.signal == 9)
    play(kit)
    local ledger, s = check(kit)
    assert(#ledger.charged == 1 and s.coins == 100 and #s.grants == 1, "coins " .. s.coins)
  end)
end

test("Ask to Buy approved while the game is closed", function(kit)
  kit:ask_to_buy(true)
  play(kit, "coins_100")
  assert(saved(kit).coins == 0 and #kit:pending("coins_100") == 1)
  kit:approve("coins_100")
  play(kit, nil, { kill_at = "after_charge" })
  play(kit)
  local ledger, s = check(kit)
  assert(s.coins == 100 and #ledger.charged == 1)
end)

test("Ask to Buy declined", function(kit)
  kit:ask_to_buy(true)
  play(kit, "remove_ads")
  kit:decline("remove_ads")
  play(kit)
  local ledger, s = check(kit)
  assert(not s.remove_ads and #ledger.charged == 0 and #s.grants == 0)
end)

test("a refund is taken back once", function(kit)
  play(kit, "coins_100")
  play(kit, "coins_100")
  local tid = kit:refund("coins_100")
  play(kit, nil, { kill_at = "before_confirm" })
  play(kit)
  local ledger, s = check(kit)
  assert(#ledger.refunded == 1 and ledger.refunded[1].transactionID == tid)
  assert(s.coins == 100 * tk.net(ledger, "coins_100") and s.coins == 100 and #s.takebacks == 1)
end)

test("a failed purchase grants nothing", function(kit)
  play(kit, "coins_100", { store_ops = '[{"op":"fail_next","error":"networkError"}]' })
  local ledger, s = check(kit)
  assert(#ledger.charged == 0 and s.coins == 0)
end)

test("a lapsed subscription ends VIP", function(kit)
  play(kit, "vip_monthly")
  assert(saved(kit).vip)
  kit:lapse_subscription("vip_monthly")
  play(kit)
  local ledger, s = check(kit)
  assert(not s.vip and #ledger.charged == 1)
end)

test("the check catches a double grant", function(kit)
  play(kit, "coins_100", { kill_at = "before_confirm", env = { GAME_BUG = "no_dedup" } })
  play(kit, nil, { env = { GAME_BUG = "no_dedup" } })
  local s = saved(kit)
  assert(s.coins == 200, "the planted bug did not happen")
  local ok, e = pcall(kit.assert_granted_exactly_once, kit, s.grants, s.takebacks)
  assert(not ok and tostring(e):find("granted 2 times", 1, true), tostring(e))
end)

test("the check catches a lost grant and an unconfirmed result", function(kit)
  play(kit, "coins_100", { kill_at = "after_charge" })
  local ok, e = pcall(kit.assert_granted_exactly_once, kit, {}, {})
  assert(not ok and tostring(e):find("the store charged 1, the game's save has 0 granted", 1, true), tostring(e))
  assert(tostring(e):find("unconfirmed", 1, true), tostring(e))
end)

print(("lua testkit: %d passed, %d failed"):format(passed, failed))
os.exit(failed == 0 and passed > 0 and 0 or 1)
