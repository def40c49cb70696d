-- One run of the unload check: load the library, open a bridge, buy, confirm,
-- close, then let the library be unloaded (dlclose: the collected ffi.load
-- namespace, then lua_close at the end of the script) and exit normally.
-- A crash at unload shows as a signal exit status in unload-loop.sh.
--   IAP_LIB=... IAP_CATALOG=... IAP_DIR=/abs/empty/dir luajit Tests/bindings/lua/unload.lua
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
package.path = here .. "../../../bindings/lua/?.lua;" .. package.path
local ffi = require("ffi")
local iap = require("iap_bridge")
pcall(ffi.cdef, "int usleep(unsigned int usec);")

local dir = assert(os.getenv("IAP_DIR"), "set IAP_DIR")
-- IAP_PIN=1: load with the pin option (the library then stays mapped: the workaround)
local lib = iap.load(assert(os.getenv("IAP_LIB"), "set IAP_LIB"), { pin = os.getenv("IAP_PIN") == "1" })
local bridge = assert(lib:open(iap.simulator_config(dir .. "/data", assert(os.getenv("IAP_CATALOG")), dir .. "/state")))
local key = assert(bridge:buy("coins_100"))
local result
for _ = 1, 500 do
  local m = bridge:poll()
  if m and iap.field(m, "type") == "7" and iap.field(m, "key") == iap.key_string(key) then result = m break end
  if not m then ffi.C.usleep(10000) end
end
assert(result, "no \"7\" within 5 s")
assert(iap.field(result, "result") == "0", "result: " .. result)
assert(bridge:confirm(iap.field(result, "key")))
assert(bridge:close())
-- Drop every reference to the library and collect: LuaJIT dlcloses it now.
bridge, lib = nil, nil
collectgarbage()
collectgarbage()
io.write("unload: ok\n")
-- No os.exit: the script ends, luajit calls lua_close, the process exits.
