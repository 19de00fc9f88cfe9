#!/usr/bin/env bash
# The recorded soak run, on a fresh stack whose windows are minutes long (so several windows
# pass in the run): the stack's data is set aside, a new stack runs with short windows from its
# first partition on, 30 minutes at 200 orders/s, then the soak's stack is deleted and the data
# set aside comes back under the default windows.
# Usage: bench/soak.sh [minutes] [rate]
set -euo pipefail
cd "$(dirname "$0")/.."
KEPT=.stack/data.before-soak
if [ -e "$KEPT" ]; then
  echo "$KEPT exists: a previous soak did not finish; move it back to .stack/data first." >&2
  exit 2
fi
export ONCEFLOW_TOPIC_RETENTION_MS=120000 ONCEFLOW_TOPIC_SEGMENT_MS=60000
export ONCEFLOW_DEDUP_WINDOW=PT8M ONCEFLOW_DEDUP_PARTITION=PT1M
export ONCEFLOW_MAINTENANCE_INTERVAL=PT1M ONCEFLOW_ALLOW_SHORT_WINDOWS=true
export ONCEFLOW_API_IDEMPOTENCY_RETENTION_HOURS=0.1
make down
if [ -e .stack/data ]; then mv .stack/data "$KEPT"; fi
restore() {
  env -u ONCEFLOW_TOPIC_RETENTION_MS -u ONCEFLOW_TOPIC_SEGMENT_MS -u ONCEFLOW_DEDUP_WINDOW \
    -u ONCEFLOW_DEDUP_PARTITION -u ONCEFLOW_MAINTENANCE_INTERVAL -u ONCEFLOW_ALLOW_SHORT_WINDOWS \
    -u ONCEFLOW_API_IDEMPOTENCY_RETENTION_HOURS bash -c '
      set -e
      make down
      rm -rf .stack/data
      if [ -e "$0" ]; then mv "$0" .stack/data; fi
      make up' "$KEPT"
}
trap restore EXIT
make up
.venv/bin/python -m bench.soak --minutes "${1:-30}" --rate "${2:-200}"
