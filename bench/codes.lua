-- wrk script: signed-in authorization requests, each answered with a code, which every thread
-- writes to its own file, one a line, for a later run to exchange.
-- env: CODES_PREFIX (the files are CODES_PREFIX1, CODES_PREFIX2, ...), COOKIE (the Cookie header)
local next_thread = 1

function setup(thread)
  thread:set("number", next_thread)
  next_thread = next_thread + 1
end

function init(args)
  wrk.headers["Cookie"] = os.getenv("COOKIE")
  out = io.open(os.getenv("CODES_PREFIX") .. number, "w")
end

function response(status, headers, body)
  local location = headers["Location"] or headers["location"] or ""
  local code = string.match(location, "[?&]code=([^&]+)")
  if code then
    out:write(code, "\n")
    out:flush()
  end
end
