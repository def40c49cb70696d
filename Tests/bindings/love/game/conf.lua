-- Headless: no window, no graphics, no audio. LÖVE 11 then runs love.load and
-- love.update with no display at all (no X server, no xvfb).
function love.conf(t)
  t.identity = "iap-bridge-love-test"
  t.window = false
  for _, m in ipairs({ "window", "graphics", "audio", "sound", "joystick", "physics", "video",
                       "font", "image", "mouse", "keyboard", "touch" }) do
    t.modules[m] = false
  end
end
