-- Driven by tests/lsp.rs: headless Neovim (0.7 and later) starts `hiera-lookup lsp` as an
-- editor does, then asks for a hover, a definition, completion and diagnostics, and writes
-- what it got to $HL_OUT as JSON.
local root, bin, out = os.getenv("HL_ROOT"), os.getenv("HL_BIN"), os.getenv("HL_OUT")
local results = {}
local id = vim.lsp.start_client({
  name = "hiera-lookup",
  cmd = { bin, "lsp" },
  root_dir = root,
  init_options = { facts = "facts/web01.yaml" },
})
vim.cmd("edit " .. root .. "/data/common.yaml")
local buf = vim.api.nvim_get_current_buf()
vim.lsp.buf_attach_client(buf, id)
vim.wait(10000, function()
  local c = vim.lsp.get_client_by_id(id)
  return c ~= nil and c.initialized
end, 20)
local uri = vim.uri_from_bufnr(buf)
local function ask(method, line, character)
  local r = vim.lsp.buf_request_sync(buf, method, {
    textDocument = { uri = uri },
    position = { line = line, character = character },
  }, 10000)
  return r and r[id] and r[id].result
end
local hover = ask("textDocument/hover", 3, 3)
results.hover = hover and hover.contents and hover.contents.value or ""
local def = ask("textDocument/definition", 1, 3)
results.definition = def and def[1] and def[1].uri or ""
-- An unsaved edit: a new last line, completed, then a misspelt parameter diagnosed.
local n = vim.api.nvim_buf_line_count(buf)
vim.api.nvim_buf_set_lines(buf, n, n, false, { "" })
local comp = ask("textDocument/completion", n, 0)
results.completion = {}
for _, item in ipairs((comp and (comp.items or comp)) or {}) do
  table.insert(results.completion, item.label)
end
vim.api.nvim_buf_set_lines(buf, n, n + 1, false, { "ntp::serverz: [a]" })
vim.wait(10000, function()
  return #vim.diagnostic.get(buf) > 0
end, 20)
results.diagnostics = {}
for _, d in ipairs(vim.diagnostic.get(buf)) do
  table.insert(results.diagnostics, { line = d.lnum, code = d.code, message = d.message })
end
vim.fn.writefile({ vim.fn.json_encode(results) }, out)
vim.lsp.stop_client(id)
vim.wait(2000, function()
  return vim.lsp.get_client_by_id(id) == nil
end, 20)
vim.cmd("qa!")
