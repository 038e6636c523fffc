-- wrk script: POST a form body with HTTP Basic client authentication, each request from another
-- address as the service's trusted proxy forwards it (X-Forwarded-For 10.t.x.y), and for another
-- name the realm never had: failed sign-ins spread so thinly that no source or name reaches a
-- threshold.
-- env: BASIC (base64 of client_id:client_secret)
local thread_count = 0

function setup(thread)
  thread:set("thread_id", thread_count)
  thread_count = thread_count + 1
end

function init(args)
  counter = 0
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
  wrk.headers["Authorization"] = "Basic " .. os.getenv("BASIC")
end

function request()
  counter = counter + 1
  local n = counter % 65536
  local address = string.format("10.%d.%d.%d", thread_id, math.floor(n / 256), n % 256)
  local body = string.format("grant_type=password&username=nobody-%d-%d&password=guess", thread_id, counter)
  -- Headers given to wrk.format replace wrk.headers whole: pass them all.
  local headers = {}
  for name, value in pairs(wrk.headers) do
    headers[name] = value
  end
  headers["X-Forwarded-For"] = address
  return wrk.format(nil, nil, headers, body)
end
