-- horizon_retry_status: the retry_of part of Horizon's RedisJobRepository::completed
-- (updateRetryInformationOnParent): a job the dashboard retried carries retry_of = the
-- failed job's id, whose hash keeps retried_by, the JSON list
-- [{"id":"…","status":"pending","retried_at":1700000000}, …] that storeRetryReference
-- appends to. When the retry finishes, the entry with its id gets status completed or
-- failed. Horizon reads, rewrites and writes the field in three round trips; this script
-- does it in one, atomically.
--
-- KEYS[1]  the parent's hash   P RETRY_OF
-- ARGV[1]  the finished job's id
-- ARGV[2]  "completed" or "failed"
--
-- Effect: when HGET KEYS[1] retried_by is truthy in PHP's sense (not missing, "" or "0"),
-- every object of the list whose "id" is the string ARGV[1] gets "status": ARGV[2]
-- (replaced in place, or appended as the last key as Arr::set does) and the list is
-- written back with HSET. Horizon re-encodes the whole list with json_encode; this script
-- edits the bytes of the matching status only, which gives the same bytes for any list
-- json_encode wrote (Horizon is the only writer of the field). Input Horizon's
-- json_decode cannot read becomes "[]", as json_encode(collect(null)) gives. Valid JSON
-- of another shape (not a list) is left as it is, and so are list entries that are not
-- objects (on a string entry Horizon itself would throw).
-- Returns 1 when the field was written, else 0.

local raw = redis.call('hget', KEYS[1], 'retried_by')
if not raw or raw == '' or raw == '0' then
  return 0
end
if not pcall(cjson.decode, raw) then
  redis.call('hset', KEYS[1], 'retried_by', '[]')
  return 1
end

local ws = { [32] = true, [9] = true, [10] = true, [13] = true }
local function skipws(i)
  while ws[raw:byte(i)] do i = i + 1 end
  return i
end

-- Returns the index just past the JSON string starting at i (a '"').
local function skipstring(i)
  i = i + 1
  while true do
    local c = raw:byte(i)
    if c == nil then error('unterminated string') end
    if c == 92 then
      i = i + 2
    elseif c == 34 then
      return i + 1
    else
      i = i + 1
    end
  end
end

-- Returns the index just past the JSON value starting at i.
local function skipvalue(i)
  local c = raw:byte(i)
  if c == 34 then return skipstring(i) end
  if c ~= 91 and c ~= 123 then
    while true do
      c = raw:byte(i)
      if c == nil or c == 44 or c == 93 or c == 125 or ws[c] then return i end
      i = i + 1
    end
  end
  local depth = 0
  repeat
    c = raw:byte(i)
    if c == nil then error('unterminated value') end
    if c == 34 then
      i = skipstring(i)
    else
      if c == 91 or c == 123 then depth = depth + 1 elseif c == 93 or c == 125 then depth = depth - 1 end
      i = i + 1
    end
  until depth == 0
  return i
end

-- Returns the rewritten list, or nil when it is not a list of the expected shape.
local function rewrite()
  local status = '"' .. ARGV[2] .. '"'
  local out, from = {}, 1
  local i = skipws(1)
  if raw:byte(i) ~= 91 then return nil end
  i = skipws(i + 1)
  if raw:byte(i) == 93 then return nil end
  while true do
    local close
    local idmatch, sfrom, sto = false, nil, nil
    if raw:byte(i) ~= 123 then
      -- Not an object: PHP finds no id in it (or fails on it); nothing to change.
      close = skipvalue(i) - 1
    elseif raw:byte(skipws(i + 1)) == 125 then
      close = skipws(i + 1)
    else
      i = skipws(i + 1)
      while true do
        local kend = skipstring(i)
        local key = cjson.decode(raw:sub(i, kend - 1))
        i = skipws(kend)
        if raw:byte(i) ~= 58 then return nil end
        i = skipws(i + 1)
        local vend = skipvalue(i)
        if key == 'id' and raw:byte(i) == 34 and cjson.decode(raw:sub(i, vend - 1)) == ARGV[1] then
          idmatch = true
        elseif key == 'status' then
          sfrom, sto = i, vend
        end
        i = skipws(vend)
        local c = raw:byte(i)
        if c == 125 then close = i break end
        if c ~= 44 then return nil end
        i = skipws(i + 1)
      end
    end
    if idmatch then
      if sfrom then
        out[#out + 1] = raw:sub(from, sfrom - 1)
        out[#out + 1] = status
        from = sto
      else
        out[#out + 1] = raw:sub(from, close - 1)
        out[#out + 1] = ',"status":' .. status
        from = close
      end
    end
    i = skipws(close + 1)
    local c = raw:byte(i)
    if c == 93 then break end
    if c ~= 44 then return nil end
    i = skipws(i + 1)
  end
  out[#out + 1] = raw:sub(from)
  return table.concat(out)
end

-- A scanning error (not expected: cjson has accepted the JSON) leaves the field alone
-- rather than failing the pipeline the script runs in.
local ok, updated = pcall(rewrite)
if not ok or not updated then
  return 0
end
redis.call('hset', KEYS[1], 'retried_by', updated)
return 1
