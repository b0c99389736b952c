#!/usr/bin/env bash
# Two real Syncthing instances on 127.0.0.1 sharing one folder, for trying SnapshotSync by hand.
# The same setup as the test harness (Tests/SyncthingTests/Harness); see docs/syncthing-testing.md.
#
#   scripts/syncthing-pair.sh start DIR     generate, configure, start b then a, wait until in sync
#   scripts/syncthing-pair.sh status DIR    connection, folder state and files of both instances
#   scripts/syncthing-pair.sh scan DIR a|b [NAME]   send a change now instead of after the watcher's delay
#   scripts/syncthing-pair.sh partition DIR cut the link (each instance pauses the other)
#   scripts/syncthing-pair.sh heal DIR      resume (b first, then a, the dialler)
#   scripts/syncthing-pair.sh stop DIR      stop both by PID (SIGTERM, then SIGKILL after 10 s)
#
# DIR is created by start and holds a/ and b/: syncthing home, folder/, the log and the PID.
# Nothing leaves 127.0.0.1: discovery, relays, NAT, usage and crash reporting and upgrades are off.
set -euo pipefail

usage() { sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 64; }
[ $# -ge 2 ] || usage
command=$1
dir=$(realpath -m "$2")
shift 2

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# rest NAME METHOD PATH: one REST call to instance NAME, the body on standard output.
rest() {
    local home=$dir/$1
    curl -fsS -X "$2" -H "X-API-Key: $(cat "$home/apikey")" "http://127.0.0.1:$(cat "$home/guiport")$3"
}

device_id() { cat "$dir/$1/device-id"; }

write_config() { # NAME PEER PEER_ADDRESS
    local name=$1 peer=$2 peer_address=$3 home=$dir/$1
    cat >"$home/syncthing/config.xml" <<EOF
<configuration version="36">
  <folder id="shared" label="shared" path="$home/folder" type="sendreceive" rescanIntervalS="10"
          fsWatcherEnabled="true" fsWatcherDelayS="1" ignorePerms="false" autoNormalize="true">
    <filesystemType>basic</filesystemType>
    <device id="$(device_id "$name")" introducedBy=""></device><device id="$(device_id "$peer")" introducedBy=""></device>
    <markerName>.stfolder</markerName><maxConflicts>10</maxConflicts>
  </folder>
  <device id="$(device_id "$name")" name="$name" compression="metadata" introducer="false"><address>dynamic</address></device>
  <device id="$(device_id "$peer")" name="$peer" compression="metadata" introducer="false"><address>$peer_address</address></device>
  <gui enabled="true" tls="false"><address>127.0.0.1:$(cat "$home/guiport")</address><apikey>$(cat "$home/apikey")</apikey></gui>
  <options>
    <listenAddress>tcp://127.0.0.1:$(cat "$home/syncport")</listenAddress>
    <globalAnnounceEnabled>false</globalAnnounceEnabled><localAnnounceEnabled>false</localAnnounceEnabled>
    <relaysEnabled>false</relaysEnabled><natEnabled>false</natEnabled><startBrowser>false</startBrowser>
    <urAccepted>-1</urAccepted><urSeen>3</urSeen><autoUpgradeIntervalH>0</autoUpgradeIntervalH>
    <crashReportingEnabled>false</crashReportingEnabled><reconnectionIntervalS>5</reconnectionIntervalS>
    <restartOnWakeup>false</restartOnWakeup><setLowPriority>false</setLowPriority>
    <announceLANAddresses>false</announceLANAddresses>
  </options>
</configuration>
EOF
}

start_instance() { # NAME: start, then wait for the REST API and the sync port
    local home=$dir/$1
    env STMONITORED=yes STNORESTART=1 STNOUPGRADE=1 STHASHING=minio \
        setsid syncthing serve --home "$home/syncthing" --no-browser --no-restart --no-upgrade \
        --no-default-folder --logflags=7 >"$home/syncthing.log" 2>&1 </dev/null &
    echo $! >"$home/syncthing.pid"
    for _ in $(seq 300); do
        if [[ "$(rest "$1" GET /rest/system/ping 2>/dev/null || true)" == *pong* ]] &&
            (exec 3<>"/dev/tcp/127.0.0.1/$(cat "$home/syncport")") 2>/dev/null; then
            return 0
        fi
        kill -0 "$(cat "$home/syncthing.pid")" 2>/dev/null || { tail -20 "$home/syncthing.log" >&2; exit 1; }
        sleep 0.1
    done
    echo "syncthing $1 did not answer within 30 s; see $home/syncthing.log" >&2
    exit 1
}

in_sync() { # NAME PEER: connected, nothing pending, idle, peer complete
    local connections pending state completion
    connections=$(rest "$1" GET /rest/system/connections) || return 1
    pending=$(rest "$1" GET /rest/cluster/pending/folders) || return 1
    state=$(rest "$1" GET '/rest/db/status?folder=shared') || return 1
    completion=$(rest "$1" GET "/rest/db/completion?folder=shared&device=$(device_id "$2")") || return 1
    python3 - "$connections" "$pending" "$state" "$completion" "$(device_id "$2")" <<'EOF'
import json, sys
connections, pending, state, completion = (json.loads(text) for text in sys.argv[1:5])
ok = (connections["connections"].get(sys.argv[5], {}).get("connected") is True and pending == {}
      and state["state"] == "idle" and completion["completion"] == 100)
sys.exit(0 if ok else 1)
EOF
}

stop_pid() { # FILE
    [ -f "$1" ] || return 0
    local pid
    pid=$(cat "$1")
    if kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid"
        for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
    fi
    rm -f "$1"
}

case $command in
start)
    [ ! -e "$dir" ] || { echo "$dir exists: stop the pair and remove it first" >&2; exit 1; }
    for name in a b; do
        mkdir -p "$dir/$name/folder/.stfolder"
        syncthing generate --home "$dir/$name/syncthing" --no-default-folder >/dev/null 2>&1
        syncthing --home "$dir/$name/syncthing" --device-id >"$dir/$name/device-id"
        free_port >"$dir/$name/guiport"
        free_port >"$dir/$name/syncport"
        python3 -c 'import secrets; print(secrets.token_hex(16))' >"$dir/$name/apikey"
    done
    # Only a dials b: crossing dials at start can stall the handshake for 20 s.
    write_config a b "tcp://127.0.0.1:$(cat "$dir/b/syncport")"
    write_config b a dynamic
    start_instance b
    start_instance a
    for _ in $(seq 600); do
        in_sync a b && in_sync b a && break
        sleep 0.1
    done
    if ! { in_sync a b && in_sync b a; }; then
        echo "not in sync after 60 s; see $dir/*/syncthing.log" >&2
        exit 1
    fi
    for name in a b; do
        echo "$name: folder $dir/$name/folder, GUI http://127.0.0.1:$(cat "$dir/$name/guiport")/ (API key $(cat "$dir/$name/apikey")), PID $(cat "$dir/$name/syncthing.pid")"
    done
    cat <<EOF
In sync. Now, for example (from a build directory holding syncd and syncctl):
  syncd --shared $dir/a/folder --state $dir/a/state --device alpha --settle-ms 50 &
  syncd --shared $dir/b/folder --state $dir/b/state --device beta --settle-ms 50 &
  echo '{"text": "milk"}' | syncctl put --type Note --shared $dir/a/folder --state $dir/a/state --device alpha
  syncctl list --shared $dir/b/folder --state $dir/b/state --device beta
Stop with: $0 stop $dir   (and stop the syncd processes you started, by PID)
EOF
    ;;
status)
    for name in a b; do
        peer=$([ "$name" = a ] && echo b || echo a)
        if in_sync "$name" "$peer" 2>/dev/null; then echo "$name: in sync with $peer"; else echo "$name: not in sync (or not running)"; fi
        ls -A "$dir/$name/folder"
    done
    ;;
scan)
    [ $# -ge 1 ] || usage
    path='/rest/db/scan?folder=shared'
    [ $# -lt 2 ] || path="$path&sub=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$2")"
    rest "$1" POST "$path"
    ;;
partition)
    rest a POST "/rest/system/pause?device=$(device_id b)"
    rest b POST "/rest/system/pause?device=$(device_id a)"
    ;;
heal)
    # b first: a resumes by dialling at once, and a dial b still refuses is retried only ~30 s later.
    rest b POST "/rest/system/resume?device=$(device_id a)"
    rest a POST "/rest/system/resume?device=$(device_id b)"
    ;;
stop)
    stop_pid "$dir/a/syncthing.pid"
    stop_pid "$dir/b/syncthing.pid"
    echo "stopped; remove $dir when done with it"
    ;;
*) usage ;;
esac
