-- epub-svg.lua: a pandoc filter that gives the EPUB clean copies of its SVG
-- pictures. common/mk/book.sh runs it on the whole book as it writes the
-- EPUB, with this metadata:
--
--   book-epub-media   a folder to write the copies into (it must exist)
--
-- Graphviz writes `<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" ...>`,
-- and other tools may write a DOCTYPE with entity declarations; EPUB 3
-- forbids both (epubcheck: OPF-073 "External identifiers must not appear in
-- the document type declaration", HTM-003 "External entities are not
-- allowed"). Every local .svg image of the book, whatever folder it comes
-- from, is copied without its DOCTYPE, and the image points to the copy;
-- the files in the repository and the HTML book keep theirs. An SVG that
-- uses a named entity (other than XML's own five) cannot lose its DOCTYPE:
-- the build stops and says which file and which entity.

local media = nil
local copies = {} -- source path -> copy
local count = 0

local function fail(msg)
  io.stderr:write('book: ' .. msg .. '\n')
  os.exit(1)
end

-- skip_to(text, i, close): the position just after the next CLOSE from i.
local function skip_to(text, i, close, what, name)
  local _, e = text:find(close, i, true)
  if not e then fail(name .. ': ' .. what .. ' is not closed') end
  return e + 1
end

-- strip_doctype(text, name): TEXT without the DOCTYPE of its prolog (the
-- part before the root element: XML declaration, comments, processing
-- instructions) and the line break after it.
local function strip_doctype(text, name)
  local i, n = 1, #text
  if text:sub(1, 3) == '\239\187\191' then i = 4 end -- a UTF-8 BOM
  while i <= n do
    local ws = text:match('^%s*', i)
    i = i + #ws
    if text:sub(i, i + 1) == '<?' then
      i = skip_to(text, i + 2, '?>', 'a processing instruction', name)
    elseif text:sub(i, i + 3) == '<!--' then
      i = skip_to(text, i + 4, '-->', 'a comment', name)
    elseif text:sub(i, i + 8) == '<!DOCTYPE' then
      -- up to the '>' outside quotes and outside the [internal subset],
      -- whose declarations may hold comments, quotes and '>'
      local s, depth, quote = i, 0, nil
      i = i + 9
      while true do
        if i > n then fail(name .. ': its DOCTYPE is not closed') end
        local c = text:sub(i, i)
        if quote then
          if c == quote then quote = nil end
        elseif depth > 0 and text:sub(i, i + 3) == '<!--' then
          i = skip_to(text, i + 4, '-->', 'a comment in its DOCTYPE', name) - 1
        elseif depth > 0 and text:sub(i, i + 1) == '<?' then
          i = skip_to(text, i + 2, '?>', 'a processing instruction in its DOCTYPE', name) - 1
        elseif c == '"' or c == "'" then
          quote = c
        elseif c == '[' then
          depth = depth + 1
        elseif c == ']' then
          depth = depth - 1
        elseif c == '>' and depth == 0 then
          break
        end
        i = i + 1
      end
      local rest = text:sub(i + 1):gsub('^\r?\n', '', 1)
      return text:sub(1, s - 1) .. rest
    else
      return text -- the root element: no DOCTYPE
    end
  end
  return text
end

local xml_entities = { amp = true, lt = true, gt = true, quot = true, apos = true }

local function clean_copy(path)
  if copies[path] then return copies[path] end
  local f = io.open(path, 'rb')
  if not f then return nil end -- pandoc itself says the image is missing
  local text = f:read('a')
  f:close()
  local clean = strip_doctype(text, path)
  for entity in clean:gmatch('&([%a_:][%w_:.-]*);') do
    if not xml_entities[entity] then
      fail(path .. ': uses the entity &' .. entity .. '; which only its DOCTYPE declares, and an EPUB '
        .. 'allows no DOCTYPE: write the character itself (or &#NNN;)')
    end
  end
  count = count + 1
  local copy = string.format('%s/%03d-%s', media, count, path:match('([^/]+)$'))
  local out = io.open(copy, 'wb')
  if not out then fail('cannot write ' .. copy) end
  out:write(clean)
  out:close()
  copies[path] = copy
  return copy
end

local function read_meta(meta)
  media = meta['book-epub-media'] and pandoc.utils.stringify(meta['book-epub-media'])
  if not media or media == '' then fail('epub-svg.lua: no book-epub-media folder given') end
  meta['book-epub-media'] = nil
  return meta
end

local function fix_image(el)
  if el.src:match('^%a[%w+.-]*:') or not el.src:lower():match('%.svg$') then return nil end
  local copy = clean_copy(el.src)
  if not copy then return nil end
  el.src = copy
  return el
end

return {
  { Meta = read_meta },
  { Image = fix_image },
}
