-- wrk script: GET one path with a random API key from keys.txt on every request.
-- usage: wrk -s bench/keys.lua URL  (KEYS_FILE may name another file)
local keys = {}

function init(args)
  local file = os.getenv("KEYS_FILE") or "keys.txt"
  for line in io.lines(file) do
    if #line > 0 then keys[#keys + 1] = line end
  end
end

function request()
  return wrk.format("GET", nil, { ["x-api-key"] = keys[math.random(#keys)] })
end
