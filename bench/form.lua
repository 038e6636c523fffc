-- wrk script: POST a form body with HTTP Basic client authentication on every request.
-- env: FORM (the form body), BASIC (base64 of client_id:client_secret)
function init(args)
  wrk.method = "POST"
  wrk.body = os.getenv("FORM")
  wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
  wrk.headers["Authorization"] = "Basic " .. os.getenv("BASIC")
end
