-- Neovim 0.11+ `lsp/` config (also what nvim-lspconfig reads): put this
-- folder on 'runtimepath' and call vim.lsp.enable('nearsym'). For the
-- didFocus notification on buffer switches, use require('nearsym').setup().
return {
  cmd = { 'nearsym', 'serve' },
  filetypes = require('nearsym').filetypes,
  root_markers = { '.git', 'pyproject.toml', 'go.mod', 'package.json', 'Cargo.toml' },
  on_attach = function(_, bufnr)
    require('nearsym').focus(bufnr)
  end,
}
