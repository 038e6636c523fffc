-- wrk script: exchange a different refresh token on every request (each is single-use).
-- env: TOKENS_FILE (one refresh token a line), BASIC (base64 of client_id:client_secret)
local tokens = {}
local next_token = 0
local basic

function setup(thread)
  thread:set("offset", next_token)
  next_token = next_token + 1
end

function init(args)
  basic = "Basic " .. os.getenv("BASIC")
  for line in io.lines(os.getenv("TOKENS_FILE")) do
    if #line > 0 then tokens[#tokens + 1] = line end
  end
  position = offset
end

function request()
  -- Threads interleave: thread k takes tokens k, k + threads, k + 2 * threads, ...
  position = position + 2
  local token = tokens[(position % #tokens) + 1]
  return wrk.format("POST", nil, {
    ["Content-Type"] = "application/x-www-form-urlencoded",
    ["Authorization"] = basic,
  }, "grant_type=refresh_token&refresh_token=" .. token)
end

function done(summary, latency, requests)
  io.write(string.format("non-2xx or errors: %d\n", summary.errors.status))
end
