-- wrk script of scripts/bench: rotates many JWTs (one line each in $BENCH_TOKENS), sends
-- $BENCH_METHOD $BENCH_PATH, counts responses by status and prints one "BENCH {json}" line.
local tokens = {}
statuses = {}
local counter = 0
local step = 1
local path = os.getenv("BENCH_PATH")
local method = os.getenv("BENCH_METHOD")
local threads = {}
local next_id = 1

function setup(thread)
  thread:set("id", next_id)
  next_id = next_id + 1
  table.insert(threads, thread)
end

function init(args)
  for line in io.lines(os.getenv("BENCH_TOKENS")) do
    tokens[#tokens + 1] = line
  end
  -- Supplied ids must grow for every user across runs, or a later run (and each round after the
  -- first) would only send ids below the stored ones, which change nothing: ids start at the
  -- clock in microseconds (exact in a double), and each thread takes every n-th number (n: the
  -- threads of all the wrk processes started together, BENCH_PROCESSES of them, this one number
  -- BENCH_PROCESS), so that a user (a token) only ever gets ids from one thread of one process
  -- (when the number of tokens is a multiple of n, as the bench's 1000 are).
  -- Two processes that shared a sequence would send the same ids to the same users, and every
  -- second copy would change nothing.
  local per_process = tonumber(os.getenv("BENCH_THREADS"))
  local process = tonumber(os.getenv("BENCH_PROCESS") or "0")
  step = per_process * tonumber(os.getenv("BENCH_PROCESSES") or "1")
  counter = os.time() * 1000000 + process * per_process + id
end

function request()
  counter = counter + step
  local headers = {
    ["Authorization"] = "Token " .. tokens[(counter % #tokens) + 1],
    ["Content-Type"] = "application/json"
  }
  if method == "POST" then
    return wrk.format("POST", path, headers, '{"client_id":"bench","checkpoint_request_id":"' .. string.format("%d", counter) .. '"}')
  end
  return wrk.format("GET", path, headers)
end

function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
end

function done(summary, latency, requests)
  local all = {}
  for _, thread in ipairs(threads) do
    for status, count in pairs(thread:get("statuses")) do
      all[status] = (all[status] or 0) + count
    end
  end
  local parts = {}
  for status, count in pairs(all) do
    parts[#parts + 1] = string.format('"%d":%d', status, count)
  end
  io.write(string.format(
    'BENCH {"requests":%d,"duration_us":%d,"p50_us":%d,"p99_us":%d,"max_us":%d,' ..
    '"connect_errors":%d,"read_errors":%d,"write_errors":%d,"timeouts":%d,"statuses":{%s}}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), latency.max,
    summary.errors.connect, summary.errors.read, summary.errors.write, summary.errors.timeout,
    table.concat(parts, ",")))
end
