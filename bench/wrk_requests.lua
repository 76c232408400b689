-- wrk script for the S3 benchmark: cycles through a file of request targets (path + query, e.g.
-- presigned URLs without scheme and host) and prints a machine-readable summary at the end.
--
--   wrk ... http://127.0.0.1:PORT -s wrk_requests.lua -- METHOD TARGETS_FILE BODY_BYTES
--
-- METHOD is GET or PUT. For PUT, a body of BODY_BYTES is generated once per thread and every
-- request is built once up front, so wrk only hands out prepared strings while measuring.

local prepared = {}
local next_index = 0
local thread_count = 0

function setup(thread)
  thread:set("thread_number", thread_count)
  thread_count = thread_count + 1
end

-- wrk passes the URL as args[0] and the words after "--" from args[1] on.
function init(args)
  local method = args[1]
  local targets_file = args[2]
  local body_bytes = tonumber(args[3] or "0")
  local body = nil
  if body_bytes > 0 then
    body = string.rep("serac-bench-payload-", math.floor(body_bytes / 20) + 1):sub(1, body_bytes)
  end
  for target in io.lines(targets_file) do
    if #target > 0 then
      prepared[#prepared + 1] = wrk.format(method, target, nil, body)
    end
  end
  -- Spread threads over the targets so they do not all start on the same object.
  next_index = ((thread_number or 0) * 7919) % #prepared
end

function request()
  next_index = next_index % #prepared + 1
  return prepared[next_index]
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    "BENCH_RESULT requests=%d status_errors=%d connect_errors=%d read_errors=%d write_errors=%d " ..
    "timeouts=%d duration_us=%d bytes_read=%d p50_us=%d p99_us=%d\n",
    summary.requests, e.status, e.connect, e.read, e.write, e.timeout, summary.duration,
    summary.bytes, latency:percentile(50), latency:percentile(99)))
end
