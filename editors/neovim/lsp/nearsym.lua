-- Neovim 0.11+ `lsp/` config (also what nvim-lspconfig reads): put this
-- folder on 'runtimepath' and call vim.lsp.enable('nearsym'). The values
-- are require('nearsym').defaults; setup() also sends nearsym/didFocus on
-- buffer switches, which this file alone does only when a buffer attaches.
return require('nearsym').lsp_config()
