#!/usr/bin/env bash
# The recorded soak run: restart the stack with windows of minutes (so several windows pass in
# the run), drive it for 30 minutes at 200 orders/s, then restart it with the default windows.
# Usage: bench/soak.sh [minutes] [rate]
set -euo pipefail
cd "$(dirname "$0")/.."
export ONCEFLOW_TOPIC_RETENTION_MS=120000 ONCEFLOW_TOPIC_SEGMENT_MS=60000
export ONCEFLOW_DEDUP_WINDOW=PT8M ONCEFLOW_DEDUP_PARTITION=PT1M
export ONCEFLOW_MAINTENANCE_INTERVAL=PT1M ONCEFLOW_ALLOW_SHORT_WINDOWS=true
export ONCEFLOW_API_IDEMPOTENCY_RETENTION_HOURS=0.1
make down && make up
trap 'env -u ONCEFLOW_TOPIC_RETENTION_MS -u ONCEFLOW_TOPIC_SEGMENT_MS -u ONCEFLOW_DEDUP_WINDOW \
  -u ONCEFLOW_DEDUP_PARTITION -u ONCEFLOW_MAINTENANCE_INTERVAL -u ONCEFLOW_ALLOW_SHORT_WINDOWS \
  -u ONCEFLOW_API_IDEMPOTENCY_RETENTION_HOURS bash -c "make down && make up"' EXIT
.venv/bin/python -m bench.soak --minutes "${1:-30}" --rate "${2:-200}"
