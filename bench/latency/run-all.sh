#!/bin/bash
# Builds the release products as the package does (scripts/build-release.sh) into their own
# scratch path and runs every configuration reported in docs/benchmarks-latency.md, one JSON line
# each. About 15 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/../.."
bash scripts/build-release.sh --scratch-path .build-daemon-release --product syncd
bash scripts/build-release.sh --scratch-path .build-daemon-release --product syncctl
echo "# $(git log --oneline -1); nproc $(nproc); $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-); load $(cut -d' ' -f1-3 /proc/loadavg)"
python3 bench/latency/latency.py --records 1000 --edits 200 --idle 60
python3 bench/latency/latency.py --records 1000 --edits 200 --idle 0 --settle-ms 0
python3 bench/latency/latency.py --records 100000 --edits 30 --idle 60
python3 bench/latency/latency.py --records 100000 --edits 10 --idle 0 --settle-ms 0
