#!/bin/sh
# run.sh - kiln's benchmarks: figures to read, not pass/fail (make bench).
set -eu
exec python3 "$(dirname "$0")/bench.py" "${1:-./kiln}"
