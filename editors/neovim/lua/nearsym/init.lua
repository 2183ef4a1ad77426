-- nearsym for Neovim: starts `nearsym serve` beside your other language
-- servers, tells it which file you are in (so same-named definitions come
-- back nearest first), and offers a live picker in nearsym's order.
--
--   require('nearsym').setup({ cmd = { 'nearsym', 'serve' } })
--   :Nearsym        (or require('nearsym').pick())
--
-- Neovim 0.11+: registers a `vim.lsp.config` entry and enables it.
-- Neovim 0.7-0.10: starts one client per root on FileType and attaches it.
-- Either way, `nearsym/didFocus` is sent on BufEnter (repeats skipped).
-- See :help nearsym.
local M = {}

M.filetypes = {
  'python', 'javascript', 'javascriptreact', 'typescript', 'typescriptreact', 'go',
  'rust', 'java', 'c', 'cpp', 'cs', 'ruby', 'php', 'sh', 'bash', 'lua', 'kotlin',
  'scala', 'swift', 'elixir', 'haskell', 'ocaml', 'zig', 'julia',
}

--- The one place for nearsym's defaults: setup() and lsp/nearsym.lua both
--- read them.
M.defaults = {
  cmd = { 'nearsym', 'serve' },
  root_markers = { '.git', 'pyproject.toml', 'go.mod', 'package.json', 'Cargo.toml' },
  filetypes = M.filetypes,
  init_options = {},
}

local uv = vim.uv or vim.loop
local has_011 = vim.fn.has('nvim-0.11') == 1

-- Client methods: `client:notify(...)` on 0.11 (the dot form is deprecated
-- there), `client.notify(...)` before (no `self`).
local function call(client, method, ...)
  if has_011 then
    return client[method](client, ...)
  end
  return client[method](...)
end

--- The running nearsym clients, those attached to `bufnr` first.
local function clients(bufnr)
  local all = (vim.lsp.get_clients or vim.lsp.get_active_clients)()
  local attached, others = {}, {}
  for _, client in ipairs(all) do
    if client.name == 'nearsym' then
      local on = bufnr and vim.lsp.buf_is_attached(bufnr, client.id)
      table.insert(on and attached or others, client)
    end
  end
  vim.list_extend(attached, others)
  return attached
end

--- The nearsym client for `bufnr` (one attached to it first), or nil with
--- a warning when none runs.
local function server_for(bufnr)
  local client = clients(bufnr)[1]
  if not client then
    vim.notify('nearsym: no server running (call require("nearsym").setup())', vim.log.levels.WARN)
  end
  return client
end

local last_focus = {}

--- Send nearsym/didFocus for `bufnr` (default: the current buffer) to every
--- nearsym client, skipping repeats.
function M.focus(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == '' or vim.bo[bufnr].buftype ~= '' then
    return
  end
  local uri = vim.uri_from_fname(name)
  for _, client in ipairs(clients()) do
    if last_focus[client.id] ~= uri then
      last_focus[client.id] = uri
      call(client, 'notify', 'nearsym/didFocus', { textDocument = { uri = uri } })
    end
  end
end

--- The configuration for `vim.lsp.config('nearsym', ...)` (and lsp/nearsym.lua).
function M.lsp_config(user)
  local opts = vim.tbl_deep_extend('force', M.defaults, user or {})
  return {
    cmd = opts.cmd,
    filetypes = opts.filetypes,
    root_markers = opts.root_markers,
    init_options = opts.init_options,
    on_attach = function(_, bufnr)
      M.focus(bufnr)
    end,
  }
end

-- The folder holding the nearest of `markers` above `bufnr`'s file, else
-- the current directory. (`:p:h` on a found `.git` folder would give the
-- folder itself: `:p` ends a directory with a slash, which `:h` removes.)
local function root_of(bufnr, markers)
  local name = vim.api.nvim_buf_get_name(bufnr)
  local dir = name ~= '' and vim.fn.fnamemodify(name, ':p:h') or vim.fn.getcwd()
  local found
  if vim.fs and vim.fs.find then
    found = vim.fs.find(markers, { upward = true, path = dir })[1]
  else
    for _, marker in ipairs(markers) do
      local hit = vim.fn.finddir(marker, dir .. ';')
      if hit == '' then
        hit = vim.fn.findfile(marker, dir .. ';')
      end
      if hit ~= '' then
        found = hit
        break
      end
    end
  end
  if found then
    local full = vim.fn.fnamemodify(found, ':p'):gsub('/$', '')
    return vim.fn.fnamemodify(full, ':h')
  end
  return vim.fn.getcwd()
end

local clients_by_root = {}

local function start_legacy(config, bufnr)
  local root = root_of(bufnr, config.root_markers)
  local id = clients_by_root[root]
  if not id then
    id = vim.lsp.start_client({
      name = 'nearsym',
      cmd = config.cmd,
      root_dir = root,
      workspace_folders = { { uri = vim.uri_from_fname(root), name = root } },
      init_options = config.init_options,
      on_attach = config.on_attach,
    })
    clients_by_root[root] = id
  end
  if id then
    vim.lsp.buf_attach_client(bufnr, id)
  end
end

function M.setup(user)
  local config = M.lsp_config(user)
  local group = vim.api.nvim_create_augroup('nearsym', { clear = true })
  if vim.lsp.config and vim.lsp.enable then
    vim.lsp.config('nearsym', config)
    vim.lsp.enable('nearsym')
  else
    vim.api.nvim_create_autocmd('FileType', {
      group = group,
      pattern = config.filetypes,
      callback = function(args)
        start_legacy(config, args.buf)
      end,
    })
  end
  vim.api.nvim_create_autocmd('BufEnter', {
    group = group,
    callback = function(args)
      M.focus(args.buf)
    end,
  })
  M.create_command()
end

function M.create_command()
  vim.api.nvim_create_user_command('Nearsym', function(args)
    M.pick({ query = args.args })
  end, { nargs = '?', desc = 'nearsym: go to symbol in workspace, nearest first' })
  vim.api.nvim_create_user_command('NearsymExplain', function(args)
    M.explain(args.args)
  end, { nargs = 1, desc = 'nearsym: why each result ranks where it does' })
end

--- The lines of a `nearsym.explain` answer: a result a line, then its sort
--- keys in the order they are compared (smaller first).
function M.explain_lines(answer)
  local from = answer.openFile ~= vim.NIL and answer.openFile or 'no open file'
  local lines = { string.format('nearsym.explain %q from %s', answer.query, from) }
  for i, row in ipairs(answer.results or {}) do
    table.insert(lines, string.format('%d. %s', i, M.format(row)))
    local keys = {}
    for _, item in ipairs(row.keys or {}) do
      table.insert(keys, item.key .. '=' .. tostring(item.value))
    end
    table.insert(lines, '   ' .. table.concat(keys, '  '))
  end
  return lines
end

--- Ask nearsym why each result for `query` ranks where it does (the
--- current buffer as the open file), and show it in a scratch split.
function M.explain(query)
  local bufnr = vim.api.nvim_get_current_buf()
  local client = server_for(bufnr)
  if not client then
    return
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  local uri = (name ~= '' and vim.bo[bufnr].buftype == '') and vim.uri_from_fname(name) or vim.NIL
  local params = { command = 'nearsym.explain', arguments = { query, uri, 20 } }
  call(client, 'request', 'workspace/executeCommand', params, function(err, answer)
    if err or type(answer) ~= 'table' then
      vim.notify('nearsym.explain: ' .. (err and err.message or 'no answer'), vim.log.levels.ERROR)
      return
    end
    local out = vim.api.nvim_create_buf(false, true)
    vim.bo[out].bufhidden = 'wipe'
    vim.api.nvim_buf_set_lines(out, 0, -1, false, M.explain_lines(answer))
    vim.bo[out].modifiable = false
    vim.cmd('botright split')
    vim.api.nvim_win_set_buf(0, out)
  end, bufnr)
end

-- The picker ---------------------------------------------------------------
--
-- A prompt buffer in a one-line floating window above a floating list.
-- Each change to the prompt asks nearsym again after `debounce_ms`, and
-- cancels the request before it; answers to an older query are dropped.
-- The list is nearsym's answer as it came: no re-sorting, no filtering.

M.picker = {
  debounce_ms = 60, -- a burst of typed keys sends one request
  height = 15,
  width = 100,
}

local function relative(path)
  local cwd = vim.fn.getcwd() .. '/'
  if path:sub(1, #cwd) == cwd then
    return path:sub(#cwd + 1)
  end
  return vim.fn.fnamemodify(path, ':~')
end

--- One row of the list: `container.name  path:line`.
function M.format(symbol)
  local container = symbol.containerName
  local name = (container and container ~= vim.NIL and container ~= '') and (container .. '.' .. symbol.name)
    or symbol.name
  local location = symbol.location or {}
  local line = location.range and (location.range.start.line + 1) or 1
  return string.format('%s  %s:%d', name, relative(vim.uri_to_fname(location.uri)), line)
end

local function jump(symbol, encoding)
  local location = symbol.location
  if not location.range then
    location = { uri = location.uri, range = { start = { line = 0, character = 0 }, ['end'] = { line = 0, character = 0 } } }
  end
  if vim.lsp.util.show_document then
    vim.lsp.util.show_document(location, encoding, { focus = true })
  else
    vim.lsp.util.jump_to_location(location, encoding)
  end
end

--- Open the live picker. `opts.query` is typed in first.
function M.pick(opts)
  opts = opts or {}
  local origin_win = vim.api.nvim_get_current_win()
  local origin_buf = vim.api.nvim_get_current_buf()
  local client = server_for(origin_buf)
  if not client then
    return
  end
  M.focus(origin_buf)
  local origin_name = vim.api.nvim_buf_get_name(origin_buf)
  local prompt = '> '
  local columns, lines = vim.o.columns, vim.o.lines
  local width = math.max(20, math.min(M.picker.width, columns - 4))
  local height = math.max(3, math.min(M.picker.height, lines - 6))
  local col = math.floor((columns - width) / 2)
  local row = math.max(0, math.floor((lines - height - 3) / 3))

  local list = vim.api.nvim_create_buf(false, true)
  vim.bo[list].bufhidden = 'wipe'
  local input = vim.api.nvim_create_buf(false, true)
  vim.bo[input].buftype = 'prompt'
  vim.bo[input].bufhidden = 'wipe'
  vim.fn.prompt_setprompt(input, prompt)
  vim.b[input].nearsym_picker = true

  local list_win = vim.api.nvim_open_win(list, false, {
    relative = 'editor', row = row + 3, col = col, width = width, height = height,
    style = 'minimal', border = 'rounded', focusable = false,
  })
  vim.wo[list_win].cursorline = true
  local input_win = vim.api.nvim_open_win(input, true, {
    relative = 'editor', row = row, col = col, width = width, height = 1,
    style = 'minimal', border = 'rounded',
  })

  local state = { symbols = {}, selected = 1, seq = 0, closed = false }
  M._state = state -- for tests and the curious: the query shown and its rows
  local timer = uv.new_timer()

  local function cancel_pending()
    if state.pending then
      pcall(call, client, 'cancel_request', state.pending)
      state.pending = nil
    end
  end

  -- Closes the picker, then runs `after` (if any) in the origin window.
  -- The windows close once insert mode has ended: leaving insert mode in
  -- the origin window would move its cursor one column left.
  local function close(after)
    if state.closed then
      return
    end
    state.closed = true
    cancel_pending()
    timer:stop()
    timer:close()
    vim.cmd('stopinsert')
    vim.schedule(function()
      for _, win in ipairs({ input_win, list_win }) do
        if vim.api.nvim_win_is_valid(win) then
          vim.api.nvim_win_close(win, true)
        end
      end
      if vim.api.nvim_win_is_valid(origin_win) then
        vim.api.nvim_set_current_win(origin_win)
      end
      if after then
        after()
      end
    end)
  end

  local function show(query, symbols)
    state.symbols, state.selected, state.query = symbols, 1, query
    local rows = {}
    for i, symbol in ipairs(symbols) do
      rows[i] = M.format(symbol)
    end
    if #rows == 0 then
      rows = { query == '' and '' or '(no definition matches)' }
    end
    vim.api.nvim_buf_set_lines(list, 0, -1, false, rows)
    vim.b[list].nearsym_query = query
    if vim.api.nvim_win_is_valid(list_win) then
      vim.api.nvim_win_set_cursor(list_win, { 1, 0 })
    end
  end

  local function current_query()
    local text = vim.api.nvim_buf_get_lines(input, 0, 1, false)[1] or ''
    if text:sub(1, #prompt) == prompt then
      text = text:sub(#prompt + 1)
    end
    return text
  end

  local function ask()
    if state.closed then
      return
    end
    local query = current_query()
    if query == state.asked then
      return
    end
    state.asked = query
    cancel_pending()
    state.seq = state.seq + 1
    local mine = state.seq
    local params = { query = query }
    if origin_name ~= '' then
      params.textDocument = { uri = vim.uri_from_fname(origin_name) }
    end
    local ok, id = call(client, 'request', 'workspace/symbol', params, function(err, result)
      if mine ~= state.seq or state.closed then
        return -- an older query's answer
      end
      state.pending = nil
      if err then
        show(query, {})
        return
      end
      show(query, result or {})
    end, origin_buf)
    if ok then
      state.pending = id
    end
  end

  local function schedule_ask()
    timer:stop()
    timer:start(M.picker.debounce_ms, 0, vim.schedule_wrap(ask))
  end

  local function move(step)
    if #state.symbols == 0 then
      return
    end
    state.selected = (state.selected - 1 + step) % #state.symbols + 1
    vim.api.nvim_win_set_cursor(list_win, { state.selected, 0 })
  end

  local function accept()
    local symbol = state.symbols[state.selected]
    local encoding = client.offset_encoding or 'utf-16'
    close(symbol and function()
      jump(symbol, encoding)
    end)
  end

  vim.api.nvim_buf_attach(input, false, {
    on_lines = function()
      vim.schedule(schedule_ask)
    end,
  })
  local function map(lhs, fn)
    vim.keymap.set({ 'i', 'n' }, lhs, fn, { buffer = input, nowait = true })
  end
  map('<CR>', accept)
  map('<Esc>', function() close() end)
  map('<C-c>', function() close() end)
  for _, lhs in ipairs({ '<Down>', '<C-n>', '<Tab>' }) do
    map(lhs, function() move(1) end)
  end
  for _, lhs in ipairs({ '<Up>', '<C-p>', '<S-Tab>' }) do
    map(lhs, function() move(-1) end)
  end
  vim.api.nvim_create_autocmd({ 'WinLeave', 'BufLeave' }, {
    buffer = input,
    once = true,
    callback = function()
      close()
    end,
  })

  vim.cmd('startinsert!')
  if opts.query and opts.query ~= '' then
    vim.api.nvim_buf_set_lines(input, 0, -1, false, { prompt .. opts.query })
    vim.api.nvim_win_set_cursor(input_win, { 1, #prompt + #opts.query })
  end
  ask()
end

return M
