-- :Nearsym, the live picker, for those who enable nearsym through lsp/
-- without calling setup() (which defines it too).
if vim.g.loaded_nearsym then
  return
end
vim.g.loaded_nearsym = true
require('nearsym').create_command()
