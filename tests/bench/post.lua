-- wrk script: POST the body in the file named by BODY_FILE (binary-safe) to the URL.
-- Counts answers that are not HTTP 200 so the report can show them.
local f = assert(io.open(os.getenv("BODY_FILE"), "rb"))
wrk.method = "POST"
wrk.body = f:read("*a")
f:close()
local ctype = os.getenv("CONTENT_TYPE")
if ctype and ctype ~= "" then
  wrk.headers["Content-Type"] = ctype
end
