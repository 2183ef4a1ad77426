-- Headless Neovim drives nearsym through the shipped plugin: open a file in
-- one folder, search, switch to a file in the other folder, search again.
-- Works on Neovim 0.7 (start_client) and 0.11 (vim.lsp.config).
local ws = os.getenv('WS')
local out_path = os.getenv('OUT')
vim.opt.runtimepath:prepend(os.getenv('PLUGIN'))
vim.cmd('cd ' .. ws)
require('nearsym').setup({ cmd = vim.fn.json_decode(os.getenv('NEARSYM_CMD')) })

local results = {}
local function clients()
  local get = vim.lsp.get_clients or vim.lsp.get_active_clients
  return get({ name = 'nearsym' })
end

local function search(query)
  -- The real UI path: vim.lsp.buf.workspace_symbol fills the quickfix list
  -- in the server's order.
  local names = {}
  for _ = 1, 30 do -- the server may still be indexing: ask again
    vim.fn.setqflist({}, 'r')
    vim.lsp.buf.workspace_symbol(query)
    vim.wait(1000, function() return #vim.fn.getqflist() >= 2 end, 20)
    vim.cmd('cclose') -- the list opens a window; go back to the source buffer
    if #vim.fn.getqflist() >= 2 then
      break
    end
  end
  for _, item in ipairs(vim.fn.getqflist()) do
    table.insert(names, vim.fn.fnamemodify(vim.fn.bufname(item.bufnr), ':.'))
  end
  return names
end

vim.cmd('edit ' .. ws .. '/alpha/registry.py')
vim.wait(15000, function() return #clients() > 0 end, 50)
results.attached = #clients() > 0
results.alpha = search('register')
vim.cmd('edit ' .. ws .. '/beta/registry.py')
vim.wait(300)
results.beta = search('register')
vim.cmd('edit ' .. ws .. '/alpha/registry.py')
vim.wait(300)
results.alpha_again = search('register')

local f = io.open(out_path, 'w')
f:write(vim.fn.json_encode(results))
f:close()
vim.cmd('qa!')
