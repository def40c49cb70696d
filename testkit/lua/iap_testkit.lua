--[[
iap_testkit.lua: the IAPBridge test kit for LuaJIT (docs/TESTKIT.md). Run your
game's purchase code against the simulated App Store in a child process, kill
it at a chosen point, restart it, and check every purchase was granted
exactly once. POSIX hosts (Linux, macOS): it runs commands through the shell.

In your test (the parent):

  local tk = require("iap_testkit")
  local kit = tk.new({ catalog = "/abs/Game.storekit" })
  local run = kit:run_game("luajit my_game_child.lua buy coins_100", { kill_at = "before_confirm" })
  assert(run.killed_at == "before_confirm")
  kit:run_game("luajit my_game_child.lua")                 -- the restart
  kit:assert_granted_exactly_once(my_grants, my_takebacks) -- records {key=, productID=, transactionID=}
  kit:cleanup()

In the game's purchase code (the child):

  local config = require("iap_testkit").child_config()   -- arms the kill point
  local bridge = assert(lib:open(config))                  -- then your own code

Kill points: "after_charge" (a successful "7" is handed to the game: charged,
nothing granted), "before_confirm" (the game calls confirm: granted and saved),
"after_confirm" (confirm returned, not durable yet), or any name your code
passes to checkpoint(). "name:N" dies at the Nth time. The process dies by
SIGKILL. Store actions of one session only (fail_next, cancel_next,
interrupt_next) go to run_game's store_ops and run in the game's process right
after its bridge opens; approve, refund, lapse... are kit methods, run while
the game is not running.
]]

local ffi = require("ffi")
local iap = require("iap_bridge")

pcall(ffi.cdef, "int kill(int pid, int sig); int getpid(void); int usleep(unsigned int usec);")

local M = {}
M.KILL_POINTS = { "after_charge", "before_confirm", "after_confirm" }

---------------------------------------------------------------------------
-- A small JSON decoder (the simulator's answers)
---------------------------------------------------------------------------
local decode
local function skip(s, i) return s:find("%S", i) or #s + 1 end

local function decode_string(s, i)
  local out, j = {}, i + 1
  while true do
    local c = s:sub(j, j)
    if c == "" then error("iap_testkit: unterminated JSON string") end
    if c == '"' then return table.concat(out), j + 1 end
    if c == "\\" then
      local e = s:sub(j + 1, j + 1)
      local map = { b = "\b", f = "\f", n = "\n", r = "\r", t = "\t" }
      if e == "u" then
        out[#out + 1] = "?" -- not needed by the kit: IDs and keys are ASCII
        j = j + 6
      else
        out[#out + 1] = map[e] or e
        j = j + 2
      end
    else
      out[#out + 1] = c
      j = j + 1
    end
  end
end

decode = function(s, i)
  i = skip(s, i or 1)
  local c = s:sub(i, i)
  if c == "{" then
    local t = {}
    i = skip(s, i + 1)
    if s:sub(i, i) == "}" then return t, i + 1 end
    while true do
      local k
      k, i = decode_string(s, skip(s, i))
      i = skip(s, i) + 1 -- the colon
      t[k], i = decode(s, i)
      i = skip(s, i)
      local d = s:sub(i, i)
      if d == "}" then return t, i + 1 end
      i = i + 1
    end
  elseif c == "[" then
    local t = {}
    i = skip(s, i + 1)
    if s:sub(i, i) == "]" then return t, i + 1 end
    while true do
      t[#t + 1], i = decode(s, i)
      i = skip(s, i)
      if s:sub(i, i) == "]" then return t, i + 1 end
      i = i + 1
    end
  elseif c == '"' then
    return decode_string(s, i)
  elseif s:sub(i, i + 3) == "true" then return true, i + 4
  elseif s:sub(i, i + 4) == "false" then return false, i + 5
  elseif s:sub(i, i + 3) == "null" then return nil, i + 4
  end
  local num = s:match("^-?[%d.eE+-]+", i)
  if not num then error("iap_testkit: bad JSON at " .. i .. ": " .. s:sub(i, i + 20)) end
  return tonumber(num), i + #num -- dates and counts only: keys are strings
end
M.decode = function(s) return (decode(s, 1)) end

local function shell_quote(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end

local function read_file(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("*a")
  f:close()
  return s
end

---------------------------------------------------------------------------
-- The parent: the test
---------------------------------------------------------------------------
local Kit = {}
Kit.__index = Kit

-- opts: catalog (required, absolute), lib (path of libIAPBridge; default
-- $IAP_LIB), root (default: a new temporary directory), keep (true: cleanup
-- leaves it).
function M.new(opts)
  assert(opts and opts.catalog, "iap_testkit.new: catalog is required")
  local root = opts.root
  if not root then
    local p = io.popen("mktemp -d /tmp/iap-testkit.XXXXXX")
    root = p:read("*l")
    p:close()
  end
  local kit = setmetatable({ root = root, catalog = opts.catalog, keep = opts.keep }, Kit)
  kit.lib_path = opts.lib or os.getenv("IAP_LIB") or "IAPBridge"
  kit.lib = iap.load(kit.lib_path)
  kit.data_dir = root .. "/data"
  kit.state_dir = root .. "/appstore"
  kit.marker = root .. "/killed-at"
  kit.config = '{"store":"simulator","dataDir":' .. iap.json_quote(kit.data_dir) .. ',"catalog":' ..
    iap.json_quote(kit.catalog) .. ',"simulator":{"stateDir":' .. iap.json_quote(kit.state_dir) .. ',"tickMs":0}}'
  return kit
end

function Kit:cleanup()
  if not self.keep then os.execute("rm -rf " .. shell_quote(self.root)) end
end

-- Opens a bridge on the game's directories, runs fn(bridge), closes it
-- without confirming anything (results stay for the game's next start).
function Kit:session(fn)
  local bridge = assert(self.lib:open(self.config))
  local ok, a = pcall(fn, bridge)
  bridge:close()
  if not ok then error(a, 0) end
  return a
end

-- One simulator command (docs/SIMULATOR.md) as a JSON string or a table of
-- string/number/boolean fields. Returns the answer decoded.
function Kit:store(command)
  if type(command) == "table" then
    local parts = {}
    for k, v in pairs(command) do
      local value = type(v) == "string" and iap.json_quote(v) or tostring(v)
      parts[#parts + 1] = iap.json_quote(k) .. ":" .. value
    end
    command = "{" .. table.concat(parts, ",") .. "}"
  end
  return self:session(function(b) return M.decode(assert(b:simulator(command))) end)
end

function Kit:ask_to_buy(enabled) return self:store({ op = "ask_to_buy", enabled = enabled ~= false }) end

function Kit:pending(product_id)
  local out = {}
  for _, p in ipairs(self:store({ op = "pending" }).pending) do
    if not product_id or p.productID == product_id then out[#out + 1] = p end
  end
  return out
end

local function one_pending(kit, product_id)
  local p = kit:pending(product_id)[1]
  if not p then error("no purchase of " .. (product_id or "any product") .. " waits for approval", 3) end
  return p.id
end

-- A parent approves (or declines) the oldest waiting purchase of product_id.
function Kit:approve(product_id) return self:store({ op = "approve", id = one_pending(self, product_id) }) end
function Kit:decline(product_id) return self:store({ op = "decline", id = one_pending(self, product_id) }) end

function Kit:transactions() return self:store({ op = "transactions" }).transactions end

-- Refunds the newest unrefunded transaction of product_id (or transaction_id);
-- the game gets a "revoked" at its next start. Returns the transaction ID.
function Kit:refund(product_id, transaction_id)
  if not transaction_id then
    for _, t in ipairs(self:transactions()) do
      if not t.revoked and t.verified ~= false and (not product_id or t.productID == product_id) then
        transaction_id = t.transactionID
      end
    end
    if not transaction_id then error("no transaction of " .. (product_id or "any product") .. " to refund", 2) end
  end
  self:store({ op = "refund", transactionID = transaction_id })
  return transaction_id
end

function Kit:advance(seconds) return self:store({ op = "advance", seconds = seconds }) end

-- Auto-renew off, then the clock past the period's end: the subscription expires.
function Kit:lapse_subscription(product_id)
  return self:session(function(b)
    local st = M.decode(assert(b:simulator('{"op":"auto_renew","productID":' .. iap.json_quote(product_id) ..
      ',"enabled":false}'))).status
    if not st.expiresDate then error(product_id .. " has no running subscription to lapse") end
    local now = M.decode(assert(b:simulator('{"op":"clock"}'))).now
    local seconds = math.max(0, math.floor((st.expiresDate - now) / 1000)) + 1
    return M.decode(assert(b:simulator('{"op":"advance","seconds":' .. seconds .. '}')))
  end)
end

-- Runs the game's purchase code: `command` is a shell command (it calls
-- child_config()). opts: kill_at (a kill point: the run must die there, an
-- error otherwise), store_ops (a JSON array string of simulator commands run
-- right after the game's bridge opens), env (a table of extra variables).
-- Returns { status = exit code or nil, signal = signal or nil, killed_at,
-- stdout, stderr }.
function Kit:run_game(command, opts)
  opts = opts or {}
  os.remove(self.marker)
  local env = {
    IAP_TESTKIT_CONFIG = self.config, IAP_TESTKIT_MARKER = self.marker, IAP_LIB = self.lib_path,
    IAP_TESTKIT_STORE_OPS = opts.store_ops or "[]", IAP_TESTKIT_KILL_AT = opts.kill_at or "",
    SWIFT_BACKTRACE = "enable=no",
  }
  for k, v in pairs(opts.env or {}) do env[k] = v end
  local prefix = {}
  for k, v in pairs(env) do prefix[#prefix + 1] = k .. "=" .. shell_quote(v) end
  local out, err = self.root .. "/game.out", self.root .. "/game.err"
  local line = "export " .. table.concat(prefix, " ") .. "; exec " .. command ..
    " >" .. shell_quote(out) .. " 2>" .. shell_quote(err)
  local a, b, c = os.execute(line)
  local run = { stdout = read_file(out) or "", stderr = read_file(err) or "" }
  if type(a) == "number" then -- Lua 5.1 / LuaJIT without 5.2 compatibility: a wait status
    if a % 256 == 0 then run.status = math.floor(a / 256) else run.signal = a % 128 end
  elseif b == "signal" then run.signal = c
  else run.status = c end
  if run.status and run.status > 128 then run.signal, run.status = run.status - 128, nil end -- via a shell
  local marker = read_file(self.marker)
  run.killed_at = marker and marker:match("^%s*(.-)%s*$") or nil
  local function describe()
    return ("status %s, signal %s, killed at %s\nstdout:\n%s\nstderr:\n%s"):format(tostring(run.status),
      tostring(run.signal), tostring(run.killed_at), run.stdout, run.stderr)
  end
  if opts.kill_at and opts.expect_kill ~= false and (run.killed_at ~= opts.kill_at or run.signal ~= 9) then
    error("the game was to be killed at " .. opts.kill_at .. ", but: " .. describe(), 2)
  end
  if not opts.kill_at and run.status ~= 0 then error("the game failed: " .. describe(), 2) end
  return run
end

-- The store's ledger: charged (verified) transactions and the results the
-- SDK would deliver again (left unconfirmed by the game).
function Kit:ledger()
  return self:session(function(b)
    local tx = M.decode(assert(b:simulator('{"op":"transactions"}'))).transactions
    assert(b:flush())
    local ledger = { charged = {}, refunded = {}, unconfirmed = {} }
    for _, t in ipairs(tx) do
      if t.verified ~= false then
        ledger.charged[#ledger.charged + 1] = t
        if t.revoked then ledger.refunded[#ledger.refunded + 1] = t end
      end
    end
    for m in b:messages() do
      local msg = iap.read_message(m)
      if msg.type == "7" or msg.type == "revoked" then ledger.unconfirmed[#ledger.unconfirmed + 1] = msg end
    end
    return ledger
  end)
end

-- Charged minus refunded of a product: what the player should own.
function M.net(ledger, product_id)
  local n = 0
  for _, t in ipairs(ledger.charged) do if t.productID == product_id then n = n + 1 end end
  for _, t in ipairs(ledger.refunded) do if t.productID == product_id then n = n - 1 end end
  return n
end

local function count(list, field)
  local c = {}
  for _, r in ipairs(list) do
    local v = tostring(r[field])
    c[v] = (c[v] or 0) + 1
  end
  return c
end

-- The problems (a list of sentences) of the game's grants and takebacks
-- (lists of {key=, productID=, transactionID= (optional)}) against a ledger.
function M.check(ledger, grants, takebacks, all_confirmed)
  local problems = {}
  local function add(...) problems[#problems + 1] = string.format(...) end
  for _, c in ipairs({ { "granted", grants or {}, ledger.charged, "charged" },
                       { "taken back", takebacks or {}, ledger.refunded, "refunded" } }) do
    local what, records, expected, verb = c[1], c[2], c[3], c[4]
    for key, n in pairs(count(records, "key")) do
      if n > 1 then add("key %s was %s %d times (each key once)", key, what, n) end
    end
    local want, have = count(expected, "productID"), count(records, "productID")
    local ids = {}
    for pid in pairs(want) do ids[pid] = true end
    for pid in pairs(have) do ids[pid] = true end
    for pid in pairs(ids) do
      if (want[pid] or 0) ~= (have[pid] or 0) then
        add("%s: the store %s %d, the game's save has %d %s", pid, verb, want[pid] or 0, have[pid] or 0, what)
      end
    end
    local all_ids = #records > 0
    for _, r in ipairs(records) do if not r.transactionID then all_ids = false end end
    if all_ids then
      local by_id = count(records, "transactionID")
      for _, t in ipairs(expected) do
        local n = by_id[t.transactionID] or 0
        if n ~= 1 then add("transaction %s (%s) was %s %d times", t.transactionID, t.productID, what, n) end
      end
    end
  end
  if all_confirmed ~= false then
    for _, m in ipairs(ledger.unconfirmed) do
      add('the game left a "%s" unconfirmed (key %s, %s): it comes again at every start', m.type, m.key,
        tostring(m.productID))
    end
  end
  table.sort(problems)
  return problems
end

-- Each charge granted exactly once, each refund taken back exactly once, no
-- key twice, nothing left unconfirmed (unless all_confirmed == false).
-- Returns the ledger; raises an error listing every problem.
function Kit:assert_granted_exactly_once(grants, takebacks, all_confirmed)
  local ledger = self:ledger()
  local problems = M.check(ledger, grants, takebacks, all_confirmed)
  if #problems > 0 then error("not granted exactly once:\n  " .. table.concat(problems, "\n  "), 2) end
  return ledger
end

---------------------------------------------------------------------------
-- The child: the game's purchase code
---------------------------------------------------------------------------
local armed = { point = nil, nth = 1, seen = {} }

local function die(point)
  local f = io.open(armed.marker, "wb")
  if f then f:write(point); f:close() end
  io.stdout:flush()
  io.stderr:flush()
  ffi.C.kill(ffi.C.getpid(), 9)
end

-- A kill point of your own (e.g. between granting and saving); does nothing
-- unless the test asked for kill_at = name.
function M.checkpoint(name)
  if armed.point ~= name then return end
  armed.seen[name] = (armed.seen[name] or 0) + 1
  if armed.seen[name] == armed.nth then die(name) end
end

local installed = false
local function install(store_ops)
  if installed then return end
  installed = true
  local real_open, real_poll, real_confirm = iap.Library.open, iap.Bridge.poll, iap.Bridge.confirm
  local ops = store_ops
  iap.Library.open = function(lib, config)
    local bridge, e = real_open(lib, config)
    if bridge and ops then
      for _, op in ipairs(M.decode(ops)) do
        local parts = {}
        for k, v in pairs(op) do
          parts[#parts + 1] = iap.json_quote(k) .. ":" .. (type(v) == "string" and iap.json_quote(v) or tostring(v))
        end
        assert(bridge:simulator("{" .. table.concat(parts, ",") .. "}"))
      end
      ops = nil -- once, on the first bridge the game opens
    end
    return bridge, e
  end
  iap.Bridge.poll = function(self)
    local m, e = real_poll(self)
    if m and armed.point == "after_charge" then
      local msg = iap.read_message(m)
      if msg.type == "7" and msg.result == "0" then M.checkpoint("after_charge") end
    end
    return m, e
  end
  iap.Bridge.confirm = function(self, key)
    M.checkpoint("before_confirm")
    local ok, e = real_confirm(self, key)
    M.checkpoint("after_confirm")
    return ok, e
  end
end

-- In the game's process started by run_game: arms the kill point and returns
-- the simulator config (a JSON string) to open the bridge with.
function M.child_config()
  local config = os.getenv("IAP_TESTKIT_CONFIG")
  if not config then error("iap_testkit.child_config: not started by run_game (IAP_TESTKIT_CONFIG is not set)", 2) end
  local point = os.getenv("IAP_TESTKIT_KILL_AT")
  if point == "" then point = nil end
  if point then
    local name, nth = point:match("^(.*):(%d+)$")
    if name then point, armed.nth = name, tonumber(nth) end
  end
  armed.point = point
  armed.marker = os.getenv("IAP_TESTKIT_MARKER")
  install(os.getenv("IAP_TESTKIT_STORE_OPS"))
  return config
end

function M.sleep_ms(ms) ffi.C.usleep(ms * 1000) end

return M
