-- nearsym for Neovim: starts `nearsym serve` beside your other language
-- servers and tells it which file you are in, so same-named definitions
-- come back nearest first.
--
--   require('nearsym').setup({ cmd = { 'nearsym', 'serve' } })
--
-- Neovim 0.11+: registers a `vim.lsp.config` entry and enables it.
-- Neovim 0.7-0.10: starts one client per root on FileType and attaches it.
-- Either way, `nearsym/didFocus` is sent on BufEnter (repeats skipped), and
-- `:lua vim.lsp.buf.workspace_symbol()` lists nearsym's order in the
-- quickfix list.
local M = {}

M.filetypes = {
  'python', 'javascript', 'javascriptreact', 'typescript', 'typescriptreact', 'go',
  'rust', 'java', 'c', 'cpp', 'cs', 'ruby', 'php', 'sh', 'bash', 'lua', 'kotlin',
  'scala', 'swift', 'elixir', 'haskell', 'ocaml', 'zig', 'julia',
}

local defaults = {
  cmd = { 'nearsym', 'serve' },
  root_markers = { '.git', 'pyproject.toml', 'go.mod', 'package.json', 'Cargo.toml' },
  filetypes = M.filetypes,
  init_options = {},
}

local last_focus = {}

--- Send nearsym/didFocus for the current buffer to every nearsym client.
function M.focus(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == '' then
    return
  end
  local uri = vim.uri_from_fname(name)
  local get = vim.lsp.get_clients or vim.lsp.get_active_clients
  for _, client in ipairs(get({ name = 'nearsym' })) do
    if last_focus[client.id] ~= uri then
      last_focus[client.id] = uri
      client.notify('nearsym/didFocus', { textDocument = { uri = uri } })
    end
  end
end

local function root_of(bufnr, markers)
  local name = vim.api.nvim_buf_get_name(bufnr)
  local dir = name ~= '' and vim.fn.fnamemodify(name, ':p:h') or vim.fn.getcwd()
  if vim.fs and vim.fs.find then
    local found = vim.fs.find(markers, { upward = true, path = dir })[1]
    if found then
      return vim.fn.fnamemodify(found, ':p:h')
    end
  end
  return vim.fn.getcwd()
end

local clients_by_root = {}

local function start_legacy(opts, bufnr)
  local root = root_of(bufnr, opts.root_markers)
  local id = clients_by_root[root]
  if not id then
    id = vim.lsp.start_client({
      name = 'nearsym',
      cmd = opts.cmd,
      root_dir = root,
      workspace_folders = { { uri = vim.uri_from_fname(root), name = root } },
      init_options = opts.init_options,
      on_attach = function()
        M.focus(bufnr)
      end,
    })
    clients_by_root[root] = id
  end
  if id then
    vim.lsp.buf_attach_client(bufnr, id)
  end
end

function M.setup(user)
  local opts = vim.tbl_deep_extend('force', defaults, user or {})
  local group = vim.api.nvim_create_augroup('nearsym', { clear = true })
  if vim.lsp.config and vim.lsp.enable then
    vim.lsp.config('nearsym', {
      cmd = opts.cmd,
      filetypes = opts.filetypes,
      root_markers = opts.root_markers,
      init_options = opts.init_options,
      on_attach = function(_, bufnr)
        M.focus(bufnr)
      end,
    })
    vim.lsp.enable('nearsym')
  else
    vim.api.nvim_create_autocmd('FileType', {
      group = group,
      pattern = opts.filetypes,
      callback = function(args)
        start_legacy(opts, args.buf)
      end,
    })
  end
  vim.api.nvim_create_autocmd('BufEnter', {
    group = group,
    callback = function(args)
      M.focus(args.buf)
    end,
  })
end

return M
