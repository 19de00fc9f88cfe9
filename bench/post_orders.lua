-- wrk script for bench/api_bench.py: POST /orders with 2 items and a unique Idempotency-Key
-- per request; prints one RESULT line (requests, seconds, p50/p99 ms, non-2xx, socket errors).
-- The API key comes from ONCEFLOW_BENCH_API_KEY (api_bench.py creates a client for the run).
local auth = "Bearer " .. assert(os.getenv("ONCEFLOW_BENCH_API_KEY"), "ONCEFLOW_BENCH_API_KEY")
local counter = 0
local run = tostring(os.time()) .. "-" .. tostring(math.random(1, 1000000000))
local threads = {}

function setup(thread)
  thread:set("tid", #threads + 1)
  table.insert(threads, thread)
end

local body = '{"customer_id":"c-bench","currency":"EUR","items":['
  .. '{"sku":"SKU-1","quantity":2,"unit_price_cents":1250},'
  .. '{"sku":"SKU-2","quantity":1,"unit_price_cents":99}]}'

function request()
  counter = counter + 1
  local key = "bench-" .. run .. "-" .. tostring(tid) .. "-" .. tostring(counter)
  return wrk.format("POST", "/orders",
    {["Content-Type"] = "application/json", ["Idempotency-Key"] = key, ["Authorization"] = auth},
    body)
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    "RESULT requests=%d seconds=%.3f p50=%.3f p99=%.3f non2xx=%d errors=%d\n",
    summary.requests, summary.duration / 1e6,
    latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    e.status, e.connect + e.read + e.write + e.timeout))
end
