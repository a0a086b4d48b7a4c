-- links.lua: a pandoc filter that makes the links of a README work in the
-- book. common/mk/book.sh runs it on every page with this metadata:
--
--   book-mode   html (one file per page) or epub (one document)
--   book-page   this page's name: 04-epoll, preface, glossary...
--   book-src    the folder of this page's source, from the repository root
--   book-pages  "SOURCE=PAGE ..." for every page of the book
--   book-repo   where links to other repository files go: a relative path
--               from the HTML pages to the repository root, or a URL
--   book-top    the repository root, absolute (the EPUB embeds images)
--
-- Links between pages (../04-epoll/README.md#the-idea) go to that page
-- (04-epoll.html#the-idea, or #04-epoll--the-idea in the EPUB, where every
-- id is prefixed with its page). A link to a chapter that is not in the book
-- (not written yet) becomes plain text. Links to other files of the
-- repository (sources, tests, exercises) point into the repository in HTML
-- and become the file's path in the EPUB, which cannot reach them. Images
-- from book/diagrams/ are copied next to the pages, and a chapter's charts
-- (chapters/NN-slug/figures/*.svg) into figures/NN-slug/. The first level-1
-- heading is the page's title.

local mode, page, src, repo, top = 'html', '', '.', '..', '.'
local pages = {}

local function warn(msg)
  io.stderr:write('book: ' .. page .. ': ' .. msg .. '\n')
end

local function meta_string(v)
  if v == nil then return nil end
  return pandoc.utils.stringify(v)
end

-- normalise("chapters/04-epoll/../../tests/x") == "tests/x"
local function normalise(path)
  local parts = {}
  for part in path:gmatch('[^/]+') do
    if part == '..' then
      if #parts > 0 and parts[#parts] ~= '..' then table.remove(parts) else table.insert(parts, part) end
    elseif part ~= '.' then
      table.insert(parts, part)
    end
  end
  return table.concat(parts, '/')
end

local function exists(path)
  local f = io.open(top .. '/' .. path, 'r')
  if f then f:close() return true end
  return false
end

local function anchor(p, frag)
  if mode == 'epub' then
    if frag and frag ~= '' then return '#' .. p .. '--' .. frag end
    return '#' .. p
  end
  if frag and frag ~= '' then return p .. '.html#' .. frag end
  return p .. '.html'
end

-- resolve TARGET: the repository path it names, and its #fragment
local function resolve(target)
  local path, frag = target:match('^([^#]*)#(.*)$')
  if not path then path, frag = target, nil end
  local full = normalise(src .. '/' .. path)
  -- a chapter folder stands for its README
  if full:match('^chapters/%d%d%-[^/]+$') then full = full .. '/README.md' end
  return full, frag
end

local function is_external(target)
  return target:match('^%a[%w+.-]*:') ~= nil
end

local function fix_link(el)
  local target = el.target
  if is_external(target) then return nil end
  if target:sub(1, 1) == '#' then
    if mode == 'epub' then el.target = anchor(page, target:sub(2)) end
    return el
  end
  local full, frag = resolve(target)
  if pages[full] then
    el.target = anchor(pages[full], frag)
    return el
  end
  if full:match('^chapters/%d%d%-[^/]+/README%.md$') then
    warn('links to ' .. full .. ', which is not in the book yet: kept as text')
    return el.content
  end
  if not exists(full) then
    warn('broken link: ' .. target .. ' (' .. full .. ' does not exist)')
  end
  if mode == 'epub' then
    -- An EPUB cannot open the repository: say which file it is.
    local text = pandoc.utils.stringify(el.content)
    local base = full:match('([^/]+)/?$') or full
    if text == base or text == full or text .. '/' == full then
      return pandoc.Code(full)
    end
    local out = el.content
    table.insert(out, pandoc.Str(' ('))
    table.insert(out, pandoc.Code(full))
    table.insert(out, pandoc.Str(')'))
    return out
  end
  el.target = repo .. '/' .. full .. (frag and ('#' .. frag) or '')
  return el
end

local function fix_image(el)
  if is_external(el.src) then return nil end
  local full = resolve(el.src)
  if not exists(full) then warn('missing image: ' .. el.src .. ' (' .. full .. ')') end
  if mode == 'epub' then
    el.src = top .. '/' .. full
  elseif full:match('^book/diagrams/') then
    el.src = 'diagrams/' .. full:match('([^/]+)$')
  elseif full:match('^chapters/[^/]+/figures/[^/]+$') then
    local chapter, file = full:match('^chapters/([^/]+)/figures/([^/]+)$')
    el.src = 'figures/' .. chapter .. '/' .. file
  else
    el.src = repo .. '/' .. full
  end
  return el
end

local title_seen = false
local function fix_header(el)
  if el.level == 1 and not title_seen then
    title_seen = true
    el.identifier = page
    el.attributes['book-title'] = '1'
    return el
  end
  if mode == 'epub' and el.identifier ~= '' then
    el.identifier = page .. '--' .. el.identifier
  end
  return el
end

-- The page's title: its first level-1 heading. In HTML the template prints
-- it, so the heading leaves the body.
local function take_title(doc)
  local blocks = {}
  for _, b in ipairs(doc.blocks) do
    if b.t == 'Header' and b.attributes['book-title'] then
      b.attributes['book-title'] = nil
      if mode == 'epub' then
        table.insert(blocks, b) -- the book's title comes from the command line
      elseif doc.meta.title == nil then
        doc.meta.title = pandoc.MetaInlines(b.content)
      end
    else
      table.insert(blocks, b)
    end
  end
  doc.blocks = blocks
  return doc
end

local function read_meta(meta)
  mode = meta_string(meta['book-mode']) or mode
  page = meta_string(meta['book-page']) or page
  src = meta_string(meta['book-src']) or src
  repo = meta_string(meta['book-repo']) or repo
  top = meta_string(meta['book-top']) or top
  for pair in (meta_string(meta['book-pages']) or ''):gmatch('%S+') do
    local from, to = pair:match('^(.*)=(.*)$')
    if from then pages[from] = to end
  end
end

return {
  { Meta = read_meta },
  { Link = fix_link, Image = fix_image, Header = fix_header },
  { Pandoc = take_title },
}
