-- wrk script: get_block_count over /json_rpc, each request with the next path token from
-- the file named by TOKENS_FILE (one token per line), round-robin from a random start per
-- thread, so consecutive requests are different tenants'. wrk reports non-2xx answers.
local tokens = {}
for line in io.lines(os.getenv("TOKENS_FILE")) do
  tokens[#tokens + 1] = line
end
local body = '{"jsonrpc":"2.0","id":1,"method":"get_block_count"}'
local headers = {["Content-Type"] = "application/json"}
local i = 0

function setup(thread)
  thread:set("offset", math.random(#tokens))
end

function request()
  i = i + 1
  local t = tokens[((i + (offset or 0)) % #tokens) + 1]
  return wrk.format("POST", "/v1/" .. t .. "/json_rpc", headers, body)
end
