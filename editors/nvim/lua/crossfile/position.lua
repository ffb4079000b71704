-- crossfile.position: LSP positions (UTF-16 columns) to and from buffer positions (byte columns).

local M = {}

local new_api = vim.fn.has('nvim-0.11') == 1

local function line_text(buf, row)
  return vim.api.nvim_buf_get_lines(buf, row, row + 1, false)[1] or ''
end

--- The byte column of UTF-16 column `character` in `line`, clamped to the line's end.
function M.byte_col(line, character)
  local units = M.utf16_len(line)
  if character >= units then return #line end
  if new_api then return vim.str_byteindex(line, 'utf-16', character, false) end
  return vim.str_byteindex(line, character, true)
end

--- The number of UTF-16 code units in `line`.
function M.utf16_len(line)
  if new_api then return vim.str_utfindex(line, 'utf-16') end
  local _, units = vim.str_utfindex(line)
  return units
end

--- The UTF-16 column of byte column `col` in `line`.
function M.utf16_col(line, col)
  if col >= #line then return M.utf16_len(line) end
  if new_api then return vim.str_utfindex(line, 'utf-16', col, false) end
  local _, units = vim.str_utfindex(line, col)
  return units
end

--- An LSP position of `buf` as a 0-based row and byte column (rows past the end clamp to the last).
function M.to_buffer(buf, position)
  local count = vim.api.nvim_buf_line_count(buf)
  local row = math.min(position.line, count - 1)
  if position.line >= count then return row, #line_text(buf, row) end
  return row, M.byte_col(line_text(buf, row), position.character)
end

--- The LSP position of 0-based `row` and byte column `col` in `buf`.
function M.to_lsp(buf, row, col)
  return { line = row, character = M.utf16_col(line_text(buf, row), col) }
end

return M
