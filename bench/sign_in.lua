-- wrk script: whole browser sign-ins, one after another on each thread's one connection (run with
-- as many connections as threads): the login page (GET, its form token and cookie kept), the
-- form posted with the password (a 303 carrying the code to the client's redirect URI), and the
-- code exchanged at the token endpoint with its PKCE verifier. Each thread counts the sign-ins it
-- completed (an exchange answered 200); `done` prints their sum and rate.
-- env: QUERY (the authorization request's query, URL-encoded), REALM_PATH (/realms/<realm>),
--      BASIC (base64 of client_id:client_secret), USERNAME, PASSWORD (both URL-encoded),
--      REST (the exchange's form after the code: &redirect_uri=…&code_verifier=…)
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  query = os.getenv("QUERY")
  realm_path = os.getenv("REALM_PATH")
  basic = os.getenv("BASIC")
  credentials = "&username=" .. os.getenv("USERNAME") .. "&password=" .. os.getenv("PASSWORD")
  rest = os.getenv("REST")
  step, completed, failed = 1, 0, 0
end

local form = { ["Content-Type"] = "application/x-www-form-urlencoded" }

function request()
  if step == 1 then
    return wrk.format("GET", realm_path .. "/protocol/openid-connect/auth?" .. query)
  elseif step == 2 then
    form["Cookie"] = "castellan_form=" .. form_cookie
    form["Authorization"] = nil
    local body = query .. "&csrf=" .. csrf .. credentials
    return wrk.format("POST", realm_path .. "/protocol/openid-connect/auth/login", form, body)
  else
    form["Cookie"] = nil
    form["Authorization"] = "Basic " .. basic
    return wrk.format("POST", realm_path .. "/protocol/openid-connect/token", form,
      "grant_type=authorization_code&code=" .. code .. rest)
  end
end

function response(status, headers, body)
  -- The next step; a round that cannot go on is broken and starts over.
  local next_step = 1
  if step == 1 then
    local cookie = headers["Set-Cookie"] or headers["set-cookie"] or ""
    form_cookie = string.match(cookie, "castellan_form=([^;]+)")
    csrf = string.match(body, 'name="csrf" value="([^"]+)"')
    if form_cookie and csrf then next_step = 2 end
  elseif step == 2 then
    local location = headers["Location"] or headers["location"] or ""
    code = string.match(location, "[?&]code=([^&]+)")
    if code then next_step = 3 end
  elseif status == 200 then
    completed = completed + 1
    next_step = 0
  end
  if next_step == 1 then failed = failed + 1 end
  step = math.max(next_step, 1)
end

function done(summary, latency, requests)
  local total, broken = 0, 0
  for _, thread in ipairs(threads) do
    total = total + thread:get("completed")
    broken = broken + thread:get("failed")
  end
  local seconds = summary.duration / 1000000
  io.write(string.format("sign-ins completed: %d in %.1f s, %.1f/s; broken rounds: %d\n",
    total, seconds, total / seconds, broken))
end
