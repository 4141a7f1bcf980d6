-- wrk script for the sustained phase of `python -m bench orders`: each request a sandbox
-- `POST /orders` with a fresh Idempotency-Key, the organizations taken in turn.
-- Environment: BENCH_WRK_PATH (the orders path), BENCH_WRK_TENANTS ("secret workspace_id" per
-- organization, separated by ";"), BENCH_WRK_RUN (a tag that makes keys unique to the run).
-- At the end it prints one JSON line: requests answered, and those answered >= 400.

local path = os.getenv("BENCH_WRK_PATH")
local run = os.getenv("BENCH_WRK_RUN") or "run"
local threads = {}
local counter = 0
local requests = {}

function setup(thread)
  thread:set("id", #threads + 1)
  table.insert(threads, thread)
end

function init(args)
  for secret, workspace in string.gmatch(os.getenv("BENCH_WRK_TENANTS"), "([^;%s]+) ([^;%s]+)") do
    table.insert(requests, {
      headers = {
        ["Authorization"] = "Bearer " .. secret,
        ["Content-Type"] = "application/json",
      },
      body = '{"destination": {"workspace_id": "' .. workspace .. '"}, '
        .. '"suite_a": {"domains": 1, "inboxes_per_domain": 2}}',
    })
  end
end

function request()
  counter = counter + 1
  local chosen = requests[counter % #requests + 1]
  chosen.headers["Idempotency-Key"] = run .. "-" .. id .. "-" .. counter
  return wrk.format("POST", path, chosen.headers, chosen.body)
end

function done(summary, latency, _)
  io.write(string.format(
    '{"requests": %d, "errors": %d, "seconds": %.3f, "p50_ms": %.2f, "p99_ms": %.2f}\n',
    summary.requests,
    summary.errors.status + summary.errors.connect + summary.errors.read
      + summary.errors.write + summary.errors.timeout,
    summary.duration / 1e6, latency:percentile(50) / 1000, latency:percentile(99) / 1000))
end
