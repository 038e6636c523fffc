-- wrk script: exchange a different authorization code on every request (each is single-use),
-- with HTTP Basic client authentication and the PKCE verifier.
-- env: CODES_FILE (one code a line), BASIC (base64 of client_id:client_secret), REST (the form
-- after the code: redirect_uri and code_verifier, encoded)
local codes = {}
local next_thread = 0

function setup(thread)
  thread:set("offset", next_thread)
  next_thread = next_thread + 1
end

function init(args)
  basic = "Basic " .. os.getenv("BASIC")
  rest = os.getenv("REST")
  for line in io.lines(os.getenv("CODES_FILE")) do
    if #line > 0 then codes[#codes + 1] = line end
  end
  position = offset
end

function request()
  -- Threads interleave: thread k takes codes k, k + threads, k + 2 * threads, ...
  position = position + 2
  local code = codes[(position % #codes) + 1]
  return wrk.format("POST", nil, {
    ["Content-Type"] = "application/x-www-form-urlencoded",
    ["Authorization"] = basic,
  }, "grant_type=authorization_code&code=" .. code .. rest)
end

function done(summary, latency, requests)
  io.write(string.format("non-2xx or errors: %d\n", summary.errors.status))
end
