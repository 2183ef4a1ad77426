-- Headless Neovim, the live picker driven by typed keys (nvim_input): the
-- keys are queued and Neovim's main loop types them, exactly as from a
-- person; each step then waits (on a timer, so the loop keeps running) for
-- the list to show the answer to what was typed, and records it.
-- Works on Neovim 0.7 and 0.11. Writes a JSON report to $OUT.
local ws = os.getenv('WS')
local out_path = os.getenv('OUT')
vim.opt.runtimepath:prepend(os.getenv('PLUGIN'))
vim.cmd('cd ' .. ws)
local nearsym = require('nearsym')
nearsym.setup({ cmd = vim.fn.json_decode(os.getenv('NEARSYM_CMD')) })

local report = { steps = {} }

local function finish()
  local f = io.open(out_path, 'w')
  f:write(vim.fn.json_encode(report))
  f:close()
  vim.cmd('qa!')
end

local co
local function sleep(ms)
  vim.defer_fn(function()
    local ok, err = coroutine.resume(co)
    if not ok then
      report.error = tostring(err)
      finish()
    end
  end, ms)
  coroutine.yield()
end

local function wait_for(predicate, ms)
  local waited = 0
  while not predicate() do
    if waited >= ms then
      return false
    end
    sleep(50)
    waited = waited + 50
  end
  return true
end

-- The picker's list as shown: its buffer's lines once they answer `query`.
local function list_for(query)
  local found
  wait_for(function()
    for _, win in ipairs(vim.api.nvim_list_wins()) do
      local buf = vim.api.nvim_win_get_buf(win)
      local ok, shown = pcall(function() return vim.b[buf].nearsym_query end)
      if ok and shown == query then
        found = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
        return true
      end
    end
    return false
  end, 10000)
  return found
end

local function where()
  local cursor = vim.api.nvim_win_get_cursor(0)
  return {
    file = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(0), ':.'),
    line = cursor[1],
    col = cursor[2] + 1,
    mode = vim.api.nvim_get_mode().mode,
    windows = #vim.api.nvim_list_wins(),
  }
end

local function type_keys(keys)
  vim.api.nvim_input(keys)
  sleep(10)
end

local function clients()
  local get = vim.lsp.get_clients or vim.lsp.get_active_clients
  return get()
end

co = coroutine.create(function()
  vim.cmd('edit ' .. ws .. '/alpha/registry.py')
  report.attached = wait_for(function() return #clients() > 0 end, 15000)
  -- The server answers from what it has indexed so far: wait until both
  -- registries are in (the flip needs both).
  wait_for(function()
    local answer = vim.lsp.buf_request_sync(0, 'workspace/symbol', { query = 'register' }, 2000)
    for _, response in pairs(answer or {}) do
      if response.result and #response.result >= 2 then
        return true
      end
    end
    return false
  end, 20000)

  -- Typed one character at a time, the list follows.
  type_keys(':Nearsym<CR>')
  type_keys('a')
  report.a = list_for('a')
  type_keys('ctivate')
  report.activate = list_for('activate')
  type_keys('<CR>')
  sleep(300)
  report.activate_landed = where()

  type_keys(':Nearsym<CR>')
  type_keys('register')
  report.alpha = list_for('register')
  type_keys('<Down><CR>')
  sleep(300)
  report.alpha_second_landed = where()

  -- Now in beta/registry.py: beta's definition first.
  type_keys(':Nearsym<CR>')
  type_keys('register')
  report.beta = list_for('register')
  type_keys('<Down><CR>')
  sleep(300)
  report.beta_second_landed = where()

  -- Esc closes the picker and leaves the editor as it was.
  type_keys(':Nearsym<CR>')
  type_keys('regi')
  report.regi = list_for('regi')
  type_keys('<Esc>')
  sleep(300)
  report.escaped = where()
  finish()
end)

local ok, err = coroutine.resume(co)
if not ok then
  report.error = tostring(err)
  finish()
end
