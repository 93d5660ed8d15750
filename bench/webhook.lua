-- webhook.lua - wrk script for bench/webhook: POST AdmissionReviews in turn,
-- so the server sees distinct Tenants back to back. Argument (after `--`):
-- the TSV file of bench/webhook, one "allowed|denied<TAB>json" per line.
-- Verdicts are checked by the caller from the webhook's own counters, so the
-- response path stays cheap here.

local requests = {}
local next_index = 1

function init(args)
  local path = args[1]
  if not path then
    error("webhook.lua: pass the bodies file after --")
  end
  local f = assert(io.open(path, "r"))
  local headers = { ["Content-Type"] = "application/json" }
  for line in f:lines() do
    local doc = line:match("^%a+\t(.*)$")
    if not doc then
      error("webhook.lua: " .. path .. ": expected allowed|denied<TAB>json")
    end
    requests[#requests + 1] = wrk.format("POST", wrk.path, headers, doc)
  end
  f:close()
  if #requests == 0 then
    error("webhook.lua: " .. path .. ": no bodies")
  end
  -- init runs once per wrk thread: each starts at its own place in the list.
  next_index = math.random(#requests)
end

function request()
  local r = requests[next_index]
  next_index = next_index % #requests + 1
  return r
end
