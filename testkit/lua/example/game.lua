--[[
A tiny game's purchase code, the way a game writes it with iap_bridge.lua
(docs/TESTKIT.md): grant, save, then confirm; ignore a key already in the
save; take refunds back. test_game.lua runs it in a child process:

  luajit game.lua SAVE [buy PRODUCT_ID]

opens the bridge with the test kit's config, buys if asked, handles every
message until the store is quiet (300 ms), and exits. GAME_BUG=no_dedup
plants a bug (a key delivered again is granted again) the kit must catch.
]]
local iap = require("iap_bridge")
local tk = require("iap_testkit")

local Save = {}
Save.__index = Save

-- Lines: "coins N", "remove_ads 0|1", "vip 0|1", "grant KEY PRODUCT TRANSACTION",
-- "takeback KEY PRODUCT TRANSACTION". Keys stay strings (exact).
function Save.load(path)
  local s = setmetatable({ path = path, coins = 0, remove_ads = false, vip = false, grants = {}, takebacks = {} }, Save)
  local f = io.open(path, "r")
  if not f then return s end
  for line in f:lines() do
    local what, a, b, c = line:match("^(%S+) (%S+) ?(%S*) ?(%S*)$")
    if what == "coins" then s.coins = tonumber(a)
    elseif what == "remove_ads" then s.remove_ads = a == "1"
    elseif what == "vip" then s.vip = a == "1"
    elseif what == "grant" or what == "takeback" then
      local list = what == "grant" and s.grants or s.takebacks
      list[#list + 1] = { key = a, productID = b, transactionID = c }
    end
  end
  f:close()
  return s
end

function Save:has(key)
  for _, list in ipairs({ self.grants, self.takebacks }) do
    for _, r in ipairs(list) do if r.key == key then return true end end
  end
  return false
end

function Save:write() -- a new file, then renamed over the old one
  local tmp = self.path .. ".tmp"
  local f = assert(io.open(tmp, "w"))
  f:write(("coins %d\nremove_ads %d\nvip %d\n"):format(self.coins, self.remove_ads and 1 or 0, self.vip and 1 or 0))
  for _, r in ipairs(self.grants) do f:write(("grant %s %s %s\n"):format(r.key, r.productID, r.transactionID)) end
  for _, r in ipairs(self.takebacks) do f:write(("takeback %s %s %s\n"):format(r.key, r.productID, r.transactionID)) end
  f:close()
  assert(os.rename(tmp, self.path))
end

local function handle(bridge, save, json)
  local msg = iap.read_message(json)
  if msg.type == "entitlements" then -- VIP follows what the player owns
    local vip = (iap.field(json, "items") or ""):find('"vip_', 1, true) ~= nil
    if vip ~= save.vip then save.vip = vip; save:write() end
  end
  if msg.type ~= "7" and msg.type ~= "revoked" then return end
  if not save:has(msg.key) or os.getenv("GAME_BUG") == "no_dedup" then
    local record = { key = msg.key, productID = msg.productID, transactionID = msg.transactionID }
    if msg.type == "revoked" then
      if msg.productID == "coins_100" then save.coins = save.coins - 100 end
      if msg.productID == "remove_ads" then save.remove_ads = false end
      save.takebacks[#save.takebacks + 1] = record
      tk.checkpoint("before_save")
      save:write()
    elseif msg.result == "0" then
      if msg.productID == "coins_100" then save.coins = save.coins + 100 end
      if msg.productID == "remove_ads" then save.remove_ads = true end
      if msg.productID:sub(1, 4) == "vip_" then save.vip = true end
      save.grants[#save.grants + 1] = record
      tk.checkpoint("before_save") -- granted in memory, not saved yet
      save:write()
    end
  end
  assert(bridge:confirm(msg.key))
end

local M = { Save = Save }

function M.play(lib, config, save_path, buy)
  local save = Save.load(save_path)
  local bridge = assert(lib:open(config))
  if buy then assert(bridge:buy(buy)) end
  local quiet = 0
  while quiet < 30 do -- until nothing came for 300 ms
    assert(bridge:flush())
    local got = false
    for m in bridge:messages() do handle(bridge, save, m); got = true end
    quiet = got and 0 or quiet + 1
    tk.sleep_ms(10)
  end
  assert(bridge:close())
  return save
end

if arg and arg[0] and (arg[0] == "game.lua" or arg[0]:match("/game%.lua$")) then
  local config = tk.child_config()
  local lib = iap.load(os.getenv("IAP_LIB") or "IAPBridge")
  M.play(lib, config, arg[1], arg[2] == "buy" and arg[3] or nil)
end
return M
