#!/usr/bin/env bash
# Sets up a fresh Debian machine, builds syncctl (release) and merges the bundled samples.
# The samples are copied first: merging publishes this device's file into the shared folder.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-prerequisites.sh
swift build -c release --product syncctl
demo=$(mktemp -d /tmp/snapshotsync-demo.XXXXXX)
cp -a samples/shared "$demo/shared"
syncctl=(.build/release/syncctl --shared "$demo/shared" --state "$demo/state" --device demo)
echo "== syncctl merge (exit status 0: everything merged)"
"${syncctl[@]:0:1}" merge "${syncctl[@]:1}" || true
echo; echo "== syncctl list --deleted"
"${syncctl[@]:0:1}" list --deleted "${syncctl[@]:1}"
echo; echo "== syncctl conflicts"
"${syncctl[@]:0:1}" conflicts "${syncctl[@]:1}"
echo "The demo folder is $demo (remove it when done)."
