--[[
iap_bridge.lua: IAPBridge for LuaJIT's FFI (LÖVE, Defold, Solar2D, any LuaJIT
host). One file: copy it into your project and ship libIAPBridge next to it.

  local iap = require("iap_bridge")
  local lib = iap.load()          -- next to this file, $IAP_LIB, or a path: iap.load("/abs/libIAPBridge.so")
  local bridge = assert(lib:open(iap.simulator_config(dataDir, catalog, stateDir)))
  bridge:request_products({ "coins_100", "remove_ads" })   -- a "999" message answers
  local key = assert(bridge:buy("coins_100", click_ms))   -- int64_t cdata: the key used
  -- every frame (save.granted: the keys your save holds, as strings):
  for m in bridge:messages() do
    local msg = iap.read_message(m)              -- type, key (decimal string), result, productID
    if msg.type == "7" or msg.type == "revoked" then
      if not save.granted[msg.key] then          -- each key once, also when delivered again
        if msg.type == "revoked" then            -- a refund: take the item back
          take_back(msg); save.granted[msg.key] = true; save:write()
        elseif msg.result == "0" then            -- grant a success only, never "1" (cancelled) etc.
          grant(msg); save.granted[msg.key] = true; save:write()
        end                                      -- (a failure's key is not saved: it may succeed later)
      end
      bridge:confirm(msg.key)                    -- then confirm every "7" and "revoked"
    end
  end
  bridge:close()                                  -- e.g. in love.quit

ERRORS: bridge methods return a value (true when there is nothing else to
return) or nil plus an error table {code = -10, name = "IAP_E_UNKNOWN_PRODUCT",
message = "..."} (tostring() gives a sentence), so `assert(bridge:buy(...))`
raises a readable error. Passing a wrong type (e.g. a key as a Lua number of
2^53 or more, a bool or pointer cdata as a key or click time, a product list
that is not a sequence of strings) raises a Lua error: that is a bug in the
caller, not a runtime condition.

KEYS are 64-bit integers. A Lua number is a double and loses digits above 2^53,
so keys are never Lua numbers here: buy() returns an int64_t cdata, messages
carry them as decimal strings (read_message(m).key), and confirm() takes
either. iap.key(x) converts a decimal string to int64_t without going through
a double; iap.key_string(k) converts back. Store keys in your save as strings.
Click times may be Lua numbers (a millisecond timestamp is far below 2^53).
Wherever a key or click time is taken, a Lua number must be a whole number of
magnitude at most 2^53 - 1 (9007199254740991): 2^53 and beyond are refused
with an error, never rounded (the literal 9007199254740993 is already the
double 9007199254740992 when Lua reads it). Beyond that pass an int64_t cdata
(9007199254740993LL) or a decimal string ("9007199254740993"), both exact.

THREADS: LuaJIT cannot run Lua code on a foreign thread, so this binding has no
iap_set_callback: poll once a frame (cheap when nothing is waiting).

CLOSE the bridge before the Lua state ends (love.quit, final(self) in Defold):
no finalizer does it for you, because at lua_close the library may be unloaded
before any finalizer runs. An unclosed bridge loses nothing (results are on
disk until confirmed); it is closed by the process exit.
]]

local ffi = require("ffi")

local M = { _VERSION = "1.1.0" }  -- the binding's version, with the header it was written for

local declarations = {
  "typedef struct iap_bridge iap_bridge;",
  "typedef void (*iap_callback)(void *ctx, const char *json);",
  "const char *iap_version(void);",
  "int32_t iap_open(const char *config_json, iap_bridge **out);",
  "int32_t iap_close(iap_bridge *b);",
  "int32_t iap_request_products(iap_bridge *b, const char *product_ids_json);",
  "int32_t iap_buy(iap_bridge *b, const char *product_id, int64_t click_ms, int64_t *out_key);",
  "int32_t iap_buy_quantity(iap_bridge *b, const char *product_id, int32_t quantity, int64_t click_ms, int64_t *out_key);",
  "int32_t iap_buy_offer(iap_bridge *b, const char *product_id, const char *offer_id, int64_t click_ms, int64_t *out_key);",
  "int32_t iap_confirm(iap_bridge *b, int64_t key);",
  "int32_t iap_restore(iap_bridge *b);",
  "char *iap_poll(iap_bridge *b);",
  "void iap_free(void *p);",
  "int32_t iap_set_callback(iap_bridge *b, iap_callback cb, void *ctx);",
  "const char *iap_errmsg(void);",
  "const char *iap_error_name(int32_t code);",
  "int32_t iap_simulator(iap_bridge *b, const char *command_json, char **out_json);",
  "int32_t iap_flush(iap_bridge *b);",
  "int32_t iap_subscription_status(iap_bridge *b, const char *product_ids_json);",
  "int32_t iap_app_transaction(iap_bridge *b);",
  "int32_t iap_manage_subscriptions(iap_bridge *b);",
  "int32_t iap_manage_subscription_group(iap_bridge *b, const char *group_id);",
  "int32_t iap_request_refund(iap_bridge *b, const char *transaction_id);",
  "int32_t iap_redeem_offer_code(iap_bridge *b);",
  "int32_t iap_show_store_messages(iap_bridge *b);",
  "int32_t iap_version_number(void);", -- newer libraries only: looked up lazily
  "int32_t iap_launch(void);", -- newer libraries only: looked up lazily
}
-- The prototypes above, exactly as include/iap_bridge.h writes them (the test
-- compares them with the header).
M.declarations = declarations
-- One declaration at a time: a host (or a second copy of this file) that
-- declared some already must not stop the others.
for _, d in ipairs(declarations) do pcall(ffi.cdef, d) end

---------------------------------------------------------------------------
-- Result codes (iap_bridge.h, plus the codes announced for 1.1)
---------------------------------------------------------------------------
M.codes = {
  IAP_OK = 0,
  IAP_E_NULL_ARG = -1,
  IAP_E_INVALID_ARG = -2,
  IAP_E_BAD_JSON = -3,
  IAP_E_BAD_CONFIG = -4,
  IAP_E_CATALOG = -5,
  IAP_E_IO = -6,
  IAP_E_INVALID_HANDLE = -7,
  IAP_E_CLOSED = -8,
  IAP_E_BUSY = -9,
  IAP_E_UNKNOWN_PRODUCT = -10,
  IAP_E_DUPLICATE_KEY = -11,
  IAP_E_UNKNOWN_KEY = -12,
  IAP_E_NOT_SUPPORTED = -13,
  IAP_E_UNKNOWN_OP = -14,
  IAP_E_NOT_FOUND = -15,
  IAP_E_INTERNAL = -16,
  IAP_E_NOT_DELIVERED = -17, -- iap_confirm of a result not yet handed to the game
  IAP_E_RESOURCE = -18,      -- a thread, descriptor or memory could not be had
  IAP_E_STORE = -19,         -- the store reported a failure
}
local names = {}
for name, code in pairs(M.codes) do names[code] = name end

-- The name of a code; "IAP_E_UNKNOWN_CODE" for one this file does not know.
function M.error_name(code)
  return names[tonumber(code)] or "IAP_E_UNKNOWN_CODE"
end

local Error = {}
Error.__index = Error
Error.__tostring = function(e)
  return string.format("%s (%d): %s", e.name, e.code, e.message)
end

local function new_error(code, message)
  code = tonumber(code)
  return setmetatable({ code = code, name = M.error_name(code), message = message or "" }, Error)
end
M.new_error = new_error

-- True if x is an error table returned by this module.
function M.is_error(x) return getmetatable(x) == Error end

---------------------------------------------------------------------------
-- Keys: int64 exact, never a Lua number
---------------------------------------------------------------------------
local int64_t = ffi.typeof("int64_t")
local INT64_MAX = 9223372036854775807LL
local INT64_MIN = -9223372036854775807LL - 1

-- Parses a decimal string ("-42", "9007199254740993") into int64_t cdata
-- digit by digit in int64 arithmetic: no double on the way. nil if s is not a
-- decimal integer in int64 range.
function M.key_from_string(s)
  if type(s) ~= "string" then return nil end
  local neg = s:sub(1, 1) == "-"
  local digits = neg and s:sub(2) or s
  if #digits == 0 or #digits > 19 or digits:find("[^0-9]") then return nil end
  local v = int64_t(0)
  for i = 1, #digits do
    local d = digits:byte(i) - 48
    -- Accumulate as a negative number: its range reaches INT64_MIN.
    if v < (INT64_MIN + d) / 10 then return nil end
    v = v * 10 - d
  end
  if not neg then
    if v == INT64_MIN then return nil end
    v = -v
  end
  return v
end

-- The decimal string of an int64_t key (no "LL" suffix).
function M.key_string(k)
  if type(k) == "string" then
    local v = M.key_from_string(k)
    if v == nil then error("iap_bridge: not a decimal int64 key: " .. k, 2) end
    return M.key_string(v)
  end
  if type(k) == "number" then k = M.key(k) end
  local s = tostring(int64_t(k))
  return (s:gsub("LL$", ""))
end

-- Any key representation to int64_t cdata: int64_t cdata as is (9007199254740993LL),
-- uint64_t cdata up to INT64_MAX, other integer or floating-point cdata as a
-- Lua number (never bool or pointer cdata), a decimal string parsed exactly
-- ("9007199254740993"), a Lua number only if it is an integer of magnitude at
-- most 2^53 - 1 (MAX_SAFE). A Lua number at or above 2^53 may already have
-- lost digits (2^53 + 1 reads as 2^53), so it is refused, not rounded. Raises a
-- Lua error otherwise. Used for every key and click time this module accepts.
local uint64_t = ffi.typeof("uint64_t")
local MAX_SAFE = 9007199254740991 -- 2^53 - 1: the largest n such that n and n + 1 are both exact doubles

-- The cdata types taken as numbers: integers and floating point, never bool,
-- pointers, enums or structs (tonumber() would turn those into numbers too).
local number_ctypes = {}
for _, t in ipairs({ "char", "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t",
                     "float", "double" }) do
  number_ctypes[#number_ctypes + 1] = ffi.typeof(t)
end
local function is_number_cdata(x)
  if type(x) ~= "cdata" then return false end
  for _, ct in ipairs(number_ctypes) do
    if ffi.istype(ct, x) then return true end
  end
  return false
end

local function number_key(x, level)
  if x ~= x or x == math.huge or x == -math.huge or x ~= math.floor(x) then
    error("iap_bridge: a key or click time must be a whole number, not " .. string.format("%.17g", x), level + 1)
  end
  if x > MAX_SAFE or x < -MAX_SAFE then
    error("iap_bridge: a key as a Lua number beyond 2^53 - 1 may have lost digits (" .. string.format("%.17g", x) ..
      " is a double); pass it as a decimal string or an int64_t cdata (e.g. 9007199254740993LL)", level + 1)
  end
  return int64_t(x)
end

function M.key(x)
  local t = type(x)
  if t == "cdata" then
    if ffi.istype(int64_t, x) then return int64_t(x) end
    if ffi.istype(uint64_t, x) then
      if x <= 9223372036854775807ULL then return int64_t(x) end
      error("iap_bridge: a key above INT64_MAX: " .. tostring(x), 2)
    end
    -- Any other cdata number (int32_t, double, ...) follows the Lua number rule.
    if is_number_cdata(x) then return number_key(tonumber(x), 2) end
    error("iap_bridge: a key must be an int64_t cdata, a number or a decimal string, not " .. tostring(ffi.typeof(x)), 2)
  elseif t == "string" then
    local v = M.key_from_string(x)
    if v ~= nil then return v end
    error("iap_bridge: not a decimal int64 key: " .. string.format("%q", x), 2)
  elseif t == "number" then
    return number_key(x, 2)
  end
  error("iap_bridge: a key must be an int64_t cdata or a decimal string, not " .. t, 2)
end

---------------------------------------------------------------------------
-- JSON: quoting for configs, a field reader for messages
---------------------------------------------------------------------------
local quote_map = { ['"'] = '\\"', ['\\'] = '\\\\', ['\n'] = '\\n', ['\r'] = '\\r', ['\t'] = '\\t' }

-- A JSON string literal for s (quotes included).
function M.json_quote(s)
  return '"' .. tostring(s):gsub('[%c"\\]', function(c)
    return quote_map[c] or string.format("\\u%04x", c:byte())
  end) .. '"'
end

-- A JSON array of strings from a list of strings ({"coins_100", "remove_ads"});
-- raises for anything else (a set {coins_100 = true}, numbers, tables), which
-- would otherwise reach the store as an empty or wrong list. level: error()'s.
local function json_array(list, level)
  if type(list) ~= "table" then error("iap_bridge: a list of strings must be a table, not " .. type(list), level + 1) end
  local parts, n = {}, 0
  for _ in pairs(list) do n = n + 1 end
  for i, v in ipairs(list) do
    if type(v) ~= "string" then
      error("iap_bridge: a list of strings must hold strings only; item " .. i .. " is a " .. type(v), level + 1)
    end
    parts[i] = M.json_quote(v)
  end
  if #parts ~= n then
    error('iap_bridge: a list of strings must be a sequence ({"a", "b"}), not a table with other keys', level + 1)
  end
  return "[" .. table.concat(parts, ",") .. "]"
end

function M.json_array(list)
  local json = json_array(list, 2) -- not a tail call: the error names M.json_array's caller
  return json
end

-- Optional settings of both configs (a table, all optional):
--   store_messages = "defer"  StoreKit's messages wait for show_store_messages
--                             ("storeMessages"; default "show": shown at once)
--   app_version = "2.0"       simulator only: the game version the simulated
--                             player runs (the "app" message's)
local function store_messages(options)
  if options and options.store_messages then return ',"storeMessages":' .. M.json_quote(options.store_messages) end
  return ""
end

-- The config of a simulated-store bridge (absolute paths; parents must exist).
function M.simulator_config(data_dir, catalog, state_dir, options)
  local c = '{"store":"simulator","dataDir":' .. M.json_quote(data_dir) .. ',"catalog":' .. M.json_quote(catalog)
  local sim = {}
  if state_dir then sim[#sim + 1] = '"stateDir":' .. M.json_quote(state_dir) end
  if options and options.app_version then sim[#sim + 1] = '"appVersion":' .. M.json_quote(options.app_version) end
  if #sim > 0 then c = c .. ',"simulator":{' .. table.concat(sim, ",") .. '}' end
  return c .. store_messages(options) .. "}"
end

-- The config of a StoreKit 2 bridge (Apple platforms).
function M.storekit_config(data_dir, options)
  return '{"store":"storekit","dataDir":' .. M.json_quote(data_dir) .. store_messages(options) .. '}'
end

local function utf8(cp)
  if cp < 0x80 then return string.char(cp) end
  if cp < 0x800 then return string.char(0xC0 + math.floor(cp / 64), 0x80 + cp % 64) end
  if cp < 0x10000 then
    return string.char(0xE0 + math.floor(cp / 4096), 0x80 + math.floor(cp / 64) % 64, 0x80 + cp % 64)
  end
  return string.char(0xF0 + math.floor(cp / 262144), 0x80 + math.floor(cp / 4096) % 64,
    0x80 + math.floor(cp / 64) % 64, 0x80 + cp % 64)
end

local simple_escapes = { ['"'] = '"', ['\\'] = '\\', ['/'] = '/', b = '\b', f = '\f', n = '\n', r = '\r', t = '\t' }

-- Reads the string literal whose opening quote is at s[i]; returns its
-- decoded contents (when want) and the index after its closing quote.
local function read_string(s, i, want)
  local out = want and {} or nil
  i = i + 1
  local n = #s
  while i <= n do
    local j = s:find('["\\]', i)
    if not j then return nil end
    if out and j > i then out[#out + 1] = s:sub(i, j - 1) end
    if s:byte(j) == 34 then -- '"'
      return out and table.concat(out) or true, j + 1
    end
    local e = s:sub(j + 1, j + 1)
    if simple_escapes[e] then
      if out then out[#out + 1] = simple_escapes[e] end
      i = j + 2
    elseif e == "u" then
      local hex = s:match("^%x%x%x%x", j + 2)
      if not hex then return nil end
      local cp = tonumber(hex, 16)
      i = j + 6
      if cp >= 0xD800 and cp < 0xDC00 then
        local lo = s:match("^\\u(%x%x%x%x)", i)
        lo = lo and tonumber(lo, 16)
        if lo and lo >= 0xDC00 and lo < 0xE000 then
          cp = 0x10000 + (cp - 0xD800) * 1024 + (lo - 0xDC00)
          i = i + 6
        end
      end
      if out then out[#out + 1] = utf8(cp) end
    else
      return nil
    end
  end
  return nil
end

-- Skips a non-string value (number, literal, object, array) at s[i]; returns
-- the index just after it.
local function skip_value(s, i)
  local depth, n = 0, #s
  while i <= n do
    local c = s:sub(i, i)
    if c == '"' then
      local _, j = read_string(s, i, false)
      if not j then return nil end
      i = j
    elseif c == "{" or c == "[" then
      depth = depth + 1
      i = i + 1
    elseif c == "}" or c == "]" then
      if depth == 0 then return i end
      depth = depth - 1
      i = i + 1
    elseif c == "," and depth == 0 then
      return i
    else
      i = i + 1
    end
  end
  if depth == 0 then return i end
  return nil
end

-- One top-level field of a message: a string's contents (escapes decoded), or
-- the raw text of any other value ("1", "null", "true", an object's text).
-- nil when absent. Only top-level names match: a "key" inside a nested object
-- or inside a string is never taken for the message's key.
function M.field(json, name)
  if type(json) ~= "string" then return nil end
  local i = json:find("%S")
  if not i or json:sub(i, i) ~= "{" then return nil end
  i = i + 1
  while true do
    i = json:find("%S", i)
    if not i or json:sub(i, i) ~= '"' then return nil end
    local k, j = read_string(json, i, true)
    if not k then return nil end
    i = json:find("%S", j)
    if not i or json:sub(i, i) ~= ":" then return nil end
    i = json:find("%S", i + 1)
    if not i then return nil end
    local value, after
    if json:sub(i, i) == '"' then
      value, after = read_string(json, i, k == name)
    else
      after = skip_value(json, i)
      if after and k == name then value = json:sub(i, after - 1):match("^(.-)%s*$") end
    end
    if not after then return nil end
    if k == name then return value end
    i = json:find("%S", after)
    if not i or json:sub(i, i) ~= "," then return nil end
    i = i + 1
  end
end

-- The fields a game needs to handle a message, all strings (or nil):
-- type, key (a decimal string: pass it to confirm, or iap.key() it), result,
-- resultName, productID, transactionID, reason; for "sheet" messages sheet,
-- outcome and subscriptionGroupID, for "storeMessage" id and state. Objects
-- such as "offer" are read with iap.field (it gives their text).
function M.read_message(json)
  local msg = {}
  for _, f in ipairs({ "type", "key", "result", "resultName", "productID", "transactionID", "reason",
                       "sheet", "outcome", "subscriptionGroupID", "id", "state" }) do
    msg[f] = M.field(json, f)
  end
  return msg
end

---------------------------------------------------------------------------
-- The library and its bridges
---------------------------------------------------------------------------
local Library = {}
Library.__index = Library
local Bridge = {}
Bridge.__index = Bridge

-- Loads the library: a path ("/abs/libIAPBridge.so"), or a file name
-- ("libIAPBridge.so") or nothing, looked for in $IAP_LIB, then next to this
-- module (where the docs say to ship it), then by the system loader.
-- Returns a library object; raises, naming every place it looked, if it
-- cannot be loaded. options (optional table):
--   global = true   load with RTLD_GLOBAL (ffi.load's second argument)
--   pin = true      also dlopen it with RTLD_NODELETE (POSIX hosts), so it
--                   stays mapped after LuaJIT's dlclose at lua_close: a guard
--                   for library versions that crash when unloaded while
--                   their threads still run. Needs a path the loader finds.
-- This module's folder ("" when it cannot be told), where the library ships.
local function module_dir()
  local source = debug.getinfo(1, "S").source
  if type(source) ~= "string" or source:sub(1, 1) ~= "@" then return "" end
  return source:sub(2):match("^(.*[/\\])") or "./"
end

local function default_name()
  if ffi.os == "OSX" then return "libIAPBridge.dylib" end
  if ffi.os == "Windows" then return "IAPBridge.dll" end
  return "libIAPBridge.so"
end

function M.load(path, options)
  if type(options) ~= "table" then options = { global = options } end
  local candidates = {}
  if path and path:find("[/\\]") then
    candidates[1] = path
  else
    local name = path or default_name()
    local env = os.getenv("IAP_LIB")
    if env and env ~= "" then candidates[#candidates + 1] = env end
    local dir = module_dir()
    if dir ~= "" then candidates[#candidates + 1] = dir .. name end
    candidates[#candidates + 1] = path or "IAPBridge"   -- the system loader's search
  end
  local C, errors = nil, {}
  for _, candidate in ipairs(candidates) do
    local ok, lib = pcall(ffi.load, candidate, options.global)
    if ok then C, path = lib, candidate break end
    errors[#errors + 1] = "  " .. candidate .. ": " .. tostring(lib)
  end
  if not C then
    error("iap_bridge: cannot load the IAPBridge library; tried:\n" .. table.concat(errors, "\n")
      .. "\nBuild it with `bash scripts/build-lib.sh` (out/lib/" .. default_name()
      .. ") and ship it next to iap_bridge.lua, or set IAP_LIB to its path", 2)
  end
  if options.pin and ffi.os ~= "Windows" then
    pcall(ffi.cdef, "void *dlopen(const char *filename, int flags);")
    local RTLD_NOW = 2
    local RTLD_NODELETE = ffi.os == "OSX" and 0x80 or 0x1000
    -- The file the system loader found under a bare name is its file name.
    local file = path:find("[/\\]") and path or default_name()
    local ok, h = pcall(function() return ffi.C.dlopen(file, RTLD_NOW + RTLD_NODELETE) end)
    if not ok or h == nil then error("iap_bridge: could not pin " .. tostring(path), 2) end
  end
  return setmetatable({ C = C }, Library)
end

function Library:version() return ffi.string(self.C.iap_version()) end

-- major*10000 + minor*100 + patch, or nil when the library does not export it.
function Library:version_number()
  local ok, fn = pcall(function() return self.C.iap_version_number end)
  if not ok or fn == nil then return nil end
  return tonumber(fn())
end

function Library:errmsg() return ffi.string(self.C.iap_errmsg()) end

-- iap_launch: listen for purchases promoted on the App Store from launch
-- (iOS 16.4+, macOS 14.4+). Returns true, or false and the error (code
-- IAP_E_NOT_SUPPORTED where there is nothing to listen to: harmless).
function Library:launch()
  local ok, fn = pcall(function() return self.C.iap_launch end)
  if not ok or fn == nil then return false, new_error(-13, "this library has no iap_launch") end
  local rc = fn()
  if rc == 0 then return true end
  return false, new_error(rc, ffi.string(self.C.iap_errmsg()))
end

local function lib_error(lib, rc)
  return nil, new_error(rc, ffi.string(lib.C.iap_errmsg()))
end

-- Opens a bridge. Returns the bridge, or nil and an error.
function Library:open(config_json)
  if type(config_json) ~= "string" then error("iap_bridge: open needs a JSON string", 2) end
  if config_json:find("\0", 1, true) then
    return nil, new_error(M.codes.IAP_E_INVALID_ARG, "iap_bridge: the config contains a NUL character")
  end
  local out = ffi.new("iap_bridge *[1]")
  local rc = self.C.iap_open(config_json, out)
  if rc ~= 0 then return lib_error(self, rc) end
  return setmetatable({ lib = self, C = self.C, handle = out[0], state = "open" }, Bridge)
end

-- nil when usable, else the error a call on it answers.
function Bridge:_unusable()
  if self.state == "open" then return nil end
  return new_error(M.codes.IAP_E_CLOSED, "iap_bridge: the bridge was closed; open a new one")
end

local function call(self, rc)
  if rc ~= 0 then return lib_error(self.lib, rc) end
  return true
end

local function string_arg(s, what)
  if type(s) ~= "string" then error("iap_bridge: " .. what .. " must be a string", 3) end
  if s:find("\0", 1, true) then
    return nil, new_error(M.codes.IAP_E_INVALID_ARG, "iap_bridge: " .. what .. " contains a NUL character")
  end
  return s
end

-- A click time: nil lets the SDK pick the key. (A NULL pointer cdata == nil
-- in LuaJIT, hence type(): M.key refuses it.)
local function click_time(x)
  if type(x) == "nil" then return int64_t(0) end
  return M.key(x)
end

function Bridge:is_open() return self.state == "open" end

-- Closes the bridge (waits for purchases under way and durable confirms).
function Bridge:close()
  local e = self:_unusable()
  if e then return nil, e end
  self.state = "closed"
  local h = self.handle
  self.handle = nil -- never handed to the library again
  return call(self, self.C.iap_close(h))
end

-- ids: a list of product ID strings, or a JSON array string.
function Bridge:request_products(ids)
  local e = self:_unusable()
  if e then return nil, e end
  local json = type(ids) == "table" and json_array(ids, 2) or ids
  local s, err = string_arg(json, "the product list")
  if not s then return nil, err end
  return call(self, self.C.iap_request_products(self.handle, s))
end

-- Starts a purchase. click_ms: the click time (number, int64 cdata or decimal
-- string); nil or <= 0 lets the SDK pick a fresh key. Returns the key the "7"
-- will carry (int64_t cdata; not necessarily click_ms), or nil and an error.
function Bridge:buy(product_id, click_ms)
  local e = self:_unusable()
  if e then return nil, e end
  local p, err = string_arg(product_id, "the product ID")
  if not p then return nil, err end
  local click = click_time(click_ms)
  local out = ffi.new("int64_t[1]")
  local rc = self.C.iap_buy(self.handle, p, click, out)
  if rc ~= 0 then return lib_error(self.lib, rc) end
  return int64_t(out[0])
end

-- Bridge:buy for `quantity` units (1 to 10) of a consumable in one purchase;
-- the "7" carries "quantity" and the price of all of them.
function Bridge:buy_quantity(product_id, quantity, click_ms)
  local e = self:_unusable()
  if e then return nil, e end
  local p, err = string_arg(product_id, "the product ID")
  if not p then return nil, err end
  if is_number_cdata(quantity) then quantity = tonumber(quantity) end -- 3LL as well as 3
  if type(quantity) ~= "number" then error("iap_bridge: quantity must be a number, not " .. type(quantity), 2) end
  if quantity ~= math.floor(quantity) or quantity < -2147483648 or quantity > 2147483647 then
    return nil, new_error(M.codes.IAP_E_INVALID_ARG, "iap_bridge: quantity must be a whole number from 1 to 10")
  end
  local click = click_time(click_ms)
  local out = ffi.new("int64_t[1]")
  local rc = self.C.iap_buy_quantity(self.handle, p, quantity, click, out)
  if rc ~= 0 then return lib_error(self.lib, rc) end
  return int64_t(out[0])
end

-- Bridge:buy with a win-back offer (iOS 18+): offer_id is the "id" of one of
-- the product's "winBackOffers" in the "999". The "7" carries "offer" (type
-- "winBack"); an offer the player can no longer take is a "7" result "5",
-- below iOS 18 a result "4". IAP_E_INVALID_ARG for an empty offer ID.
function Bridge:buy_offer(product_id, offer_id, click_ms)
  local e = self:_unusable()
  if e then return nil, e end
  local p, err = string_arg(product_id, "the product ID")
  if not p then return nil, err end
  local o, oerr = string_arg(offer_id, "the offer ID")
  if not o then return nil, oerr end
  local click = click_time(click_ms)
  local out = ffi.new("int64_t[1]")
  local rc = self.C.iap_buy_offer(self.handle, p, o, click, out)
  if rc ~= 0 then return lib_error(self.lib, rc) end
  return int64_t(out[0])
end

-- Confirms a "7" or "revoked" result after the game granted and saved it.
-- key: the message's key string, or int64_t cdata.
function Bridge:confirm(key)
  local e = self:_unusable()
  if e then return nil, e end
  return call(self, self.C.iap_confirm(self.handle, M.key(key)))
end

function Bridge:restore()
  local e = self:_unusable()
  if e then return nil, e end
  return call(self, self.C.iap_restore(self.handle))
end

function Bridge:flush()
  local e = self:_unusable()
  if e then return nil, e end
  return call(self, self.C.iap_flush(self.handle))
end

-- Subscriptions, the app transaction, sheets, StoreKit messages: each returns
-- true at once and a message answers (none needs a confirm); IAP_E_NOT_SUPPORTED
-- where the store or the OS lacks the feature.

-- The status of the subscription groups of these products (a list of IDs or
-- a JSON array string): one "subscription" message, reason "request". nil
-- asks for every group the player ever subscribed in. Read the groups with
-- your JSON library (iap.field(m, "groups") gives their text).
function Bridge:subscription_status(ids)
  local e = self:_unusable()
  if e then return nil, e end
  local json = nil
  if type(ids) ~= "nil" then
    local err
    json, err = string_arg(type(ids) == "table" and json_array(ids, 2) or ids, "the product list")
    if not json then return nil, err end
  end
  return call(self, self.C.iap_subscription_status(self.handle, json))
end

-- When and in which version the player first got the game: an "app" message.
function Bridge:app_transaction()
  local e = self:_unusable()
  if e then return nil, e end
  return call(self, self.C.iap_app_transaction(self.handle))
end

-- The subscription management sheet; a "sheet" message follows when the
-- player closes it. IAP_E_BUSY while another sheet is up.
function Bridge:manage_subscriptions()
  local e = self:_unusable()
  if e then return nil, e end
  return call(self, self.C.iap_manage_subscriptions(self.handle))
end

-- Bridge:manage_subscriptions for one subscription group (a
-- "subscriptionGroupID" of the "999"; iOS 17+): the "sheet" message names it
-- in "subscriptionGroupID". IAP_E_INVALID_ARG for an empty or unknown group.
function Bridge:manage_subscription_group(group_id)
  local e = self:_unusable()
  if e then return nil, e end
  local id, err = string_arg(group_id, "the group ID")
  if not id then return nil, err end
  return call(self, self.C.iap_manage_subscription_group(self.handle, id))
end

-- The refund request sheet for a transaction (the "transactionID" string of a
-- "7"); a "sheet" message follows, a granted refund later a "revoked".
-- IAP_E_BUSY while another sheet is up.
function Bridge:request_refund(transaction_id)
  local e = self:_unusable()
  if e then return nil, e end
  local id, err = string_arg(transaction_id, "the transaction ID")
  if not id then return nil, err end
  return call(self, self.C.iap_request_refund(self.handle, id))
end

-- The offer code sheet; a "sheet" message follows, a redeemed code's purchase
-- a "7" with origin "store". IAP_E_BUSY while another sheet is up.
function Bridge:redeem_offer_code()
  local e = self:_unusable()
  if e then return nil, e end
  return call(self, self.C.iap_redeem_offer_code(self.handle))
end

-- Shows the StoreKit messages held by store_messages = "defer" (each gets a
-- "storeMessage" with state "shown"). Call it at a calm moment: a menu.
function Bridge:show_store_messages()
  local e = self:_unusable()
  if e then return nil, e end
  return call(self, self.C.iap_show_store_messages(self.handle))
end

-- The next message (a JSON string), or nil when none is waiting; nil and an
-- error when the bridge is closed.
function Bridge:poll()
  local e = self:_unusable()
  if e then return nil, e end
  local p = self.C.iap_poll(self.handle)
  if p == nil then return nil end
  local s = ffi.string(p)
  self.C.iap_free(p)
  return s
end

-- Iterates over the messages waiting now: for m in bridge:messages() do ... end
function Bridge:messages()
  return function() return (self:poll()) end
end

-- Drives the simulated store (docs/SIMULATOR.md). Returns its JSON answer.
function Bridge:simulator(command_json)
  local e = self:_unusable()
  if e then return nil, e end
  local s, err = string_arg(command_json, "the command")
  if not s then return nil, err end
  local out = ffi.new("char *[1]")
  local rc = self.C.iap_simulator(self.handle, s, out)
  if rc ~= 0 then return lib_error(self.lib, rc) end
  local answer = out[0] ~= nil and ffi.string(out[0]) or ""
  self.C.iap_free(out[0])
  return answer
end

M.Library = Library
M.Bridge = Bridge
return M
