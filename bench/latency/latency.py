#!/usr/bin/env python3
"""Latency of syncd: from a peer's file landing in the shared folder to this device's store and
own file holding the change; and the CPU time an idle syncd uses.

Against the release build the Debian package ships (scripts/build-release.sh; see
docs/benchmarks-latency.md):

  scripts/build-release.sh --scratch-path .build-daemon-release --product syncd
  scripts/build-release.sh --scratch-path .build-daemon-release --product syncctl
  python3 bench/latency/latency.py --records 1000 --edits 100

What it does, for one folder size:
 1. bench/generate.py makes a folder of 3 peers (device-0..2) x RECORDS records; syncd starts on
    it as device "bench" (a fresh state directory) and merges it once (timed: "first merge").
 2. EDITS times: device-0's file gets one record changed (a new version that dominates every
    other: its own count + 1, fields with a fresh marker), is written to a dot-named temporary
    file, fsynced, and renamed over device-0.json. The clock starts right after rename().
    With --layout parts the peers publish format 2 parts (2 hex digits, 256 per device): the
    edit rewrites device-0's part holding the record (its generation + 1) and the clock stops
    when this device's part holding it is replaced, as a file-sync engine delivers one part.
    The script then polls, every millisecond, (a) the store, read-only through SQLite, until
    the record's current version holds the marker, and (b) the stat of bench.json until it is
    replaced by a file with a higher generation holding the marker. After each edit it checks
    that `syncctl get ID` shows the marker, and waits until syncd is idle again.
 3. Idle CPU: utime+stime from /proc/PID/stat, IDLE seconds apart, with nothing happening.

Why Python: the edit is a JSON load-modify-dump of generate.py's output, the polling needs
sub-millisecond timing without a fork per probe, and percentiles need arithmetic; bash would
need jq, awk and a fork per sample, which would dominate the numbers being measured.
"""
import argparse, json, os, random, re, sqlite3, subprocess, sys, tempfile, time, uuid

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TICK = os.sysconf("SC_CLK_TCK")


def percentile(values, p):
    """Nearest-rank percentile."""
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * p // 100))
    return ordered[int(rank) - 1]


def stamp(ms):
    s, m = divmod(ms, 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(s)) + f".{m:03d}Z"


def cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15)


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def wait_idle(pid, quiet=0.3, timeout=300):
    """Waits until the process has used no CPU for `quiet` seconds."""
    deadline = time.monotonic() + timeout
    last = cpu_ticks(pid)
    while time.monotonic() < deadline:
        time.sleep(quiet)
        now = cpu_ticks(pid)
        if now == last:
            return
        last = now
    raise SystemExit(f"syncd (PID {pid}) never went idle")


def generation_of(path):
    try:
        with open(path, "rb") as f:
            head = f.read(256)
    except FileNotFoundError:
        return 0
    match = re.search(rb'"generation":(\d+)', head)
    return int(match.group(1)) if match else 0


def own_file(shared, rid=""):
    """This device's file that holds `rid`: bench.json, or, once its snapshot is split into parts,
    the part bench.PREFIX.json whose prefix starts the id (whatever its number of digits)."""
    names = os.listdir(shared)
    if "bench.json" in names:
        return os.path.join(shared, "bench.json")
    for name in names:
        if re.fullmatch(r"bench\.[0-9A-F]+\.json", name) and (not rid or rid.upper().startswith(name.split(".")[1])):
            return os.path.join(shared, name)
    return None


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bin", default=os.path.join(ROOT, ".build-daemon-release", "release"), help="directory of syncd and syncctl")
    p.add_argument("--records", type=int, default=1000)
    p.add_argument("--edits", type=int, default=100)
    p.add_argument("--settle-ms", type=int, help="syncd --settle-ms (default: syncd's own, 200)")
    p.add_argument("--idle", type=int, default=60, help="seconds of idle CPU measurement (0: skip)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--keep", action="store_true", help="keep the temporary directory")
    p.add_argument("--layout", choices=["file", "parts"], default="file",
                   help="peers' snapshots as one file each (default) or as format 2 parts of 2 hex digits: "
                        "then an edit rewrites only the part of device-0 that holds the record, and the "
                        "clock stops when this device's part holding it is replaced")
    a = p.parse_args()
    syncd, syncctl = os.path.join(a.bin, "syncd"), os.path.join(a.bin, "syncctl")
    for binary in (syncd, syncctl):
        if not os.access(binary, os.X_OK):
            raise SystemExit(f"{binary} is missing: build the release products first (see the docstring)")
    rng = random.Random(a.seed)
    work = tempfile.mkdtemp(prefix="syncd-latency-")
    shared, state = os.path.join(work, "shared"), os.path.join(work, "state")
    subprocess.run([sys.executable, os.path.join(ROOT, "bench", "generate.py"), shared, "--devices", "3",
                    "--records", str(a.records), "--seed", str(a.seed)]
                   + (["--layout", "parts", "--part-digits", "2"] if a.layout == "parts" else []), check=True)
    location = ["--shared", shared, "--state", state]
    env = {"PATH": "/usr/bin:/bin", "HOME": work, "LANG": "C.UTF-8"}
    command = [syncd] + location + ["--device", "bench", "--log-level", "info"] + (["--settle-ms", str(a.settle_ms)] if a.settle_ms is not None else [])
    log = open(os.path.join(work, "syncd.log"), "w")
    started = time.perf_counter()
    daemon = subprocess.Popen(command, stderr=log, stdout=log, env=env)
    try:
        while own_file(shared) is None:
            if daemon.poll() is not None:
                raise SystemExit(f"syncd exited with {daemon.returncode}; see {work}/syncd.log")
            time.sleep(0.001)
        first_merge = time.perf_counter() - started
        wait_idle(daemon.pid)

        # Records every peer holds in the same plain version: an edit of one by device-0 wins everywhere.
        # With parts, only the parts of a sample of prefixes are loaded (3 x 1,000,000 records
        # would not fit in Python's memory), and each edit rewrites device-0's part of its prefix.
        def load(device, prefix):
            name = f"{device}.json" if prefix is None else f"{device}.{prefix}.json"
            return json.load(open(os.path.join(shared, name), encoding="utf-8"))
        prefixes = [None] if a.layout == "file" else rng.sample([f"{n:02X}" for n in range(256)], min(a.edits, 256))
        peers = {}  # prefix -> device-0's document of that prefix
        candidates = []
        for prefix in prefixes:
            docs = [load(f"device-{i}", prefix) for i in range(3)]
            maps = [{r["id"]: r for r in d["records"]} for d in docs]
            peers[prefix] = docs[0]
            candidates += [(prefix, rid) for rid, r in maps[0].items()
                           if not r.get("deleted") and "versionVector" in r and maps[1].get(rid) == r and maps[2].get(rid) == r]
        chosen = rng.sample(candidates, min(a.edits, len(candidates)))
        ids = [rid for _, rid in chosen]
        store = sqlite3.connect(f"file:{state}/store.sqlite?mode=ro", uri=True)
        file_latency, store_latency = [], []
        for n, rid in enumerate(ids):
            marker = f"bench-{n}-{uuid.uuid4().hex[:8]}"
            prefix = chosen[n][0]
            peer = peers[prefix]
            index = {r["id"]: i for i, r in enumerate(peer["records"])}
            record = dict(peer["records"][index[rid]])
            vector = dict(record["versionVector"])
            vector["device-0"] = vector.get("device-0", 0) + 1
            record.update(versionVector=vector, lastModified=stamp(int(time.time() * 1000)), modifiedBy="device-0",
                          fields=dict(record["fields"], bench=marker))
            peer["records"][index[rid]] = record
            peer["generation"] += 1
            data = json.dumps(peer, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
            name = "device-0.json" if prefix is None else f"device-0.{prefix}.json"
            temporary = os.path.join(shared, f".{name}.bench.tmp")
            with open(temporary, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            own = own_file(shared, rid)
            generation = generation_of(own)
            seen = os.stat(own)
            os.rename(temporary, os.path.join(shared, name))
            t0 = time.perf_counter()
            at_store = at_file = None
            probe = marker.encode()
            while at_store is None or at_file is None:
                if time.perf_counter() - t0 > 300:
                    raise SystemExit(f"edit {n} of {rid} not seen after 300 s; see {work}/syncd.log")
                # Since store v5 a record is one row whose line is its published form; the edit
                # dominates every other version, so the marker shows as the current one's.
                if at_store is None and store.execute(
                        "SELECT 1 FROM record WHERE id = ? AND instr(line, ?) > 0",
                        (rid, probe)).fetchone():
                    at_store = time.perf_counter() - t0
                if at_file is None:
                    now = os.stat(own)
                    if (now.st_ino, now.st_mtime_ns, now.st_size) != (seen.st_ino, seen.st_mtime_ns, seen.st_size):
                        seen = now
                        with open(own, "rb") as f:
                            content = f.read()
                        if probe in content and generation_of(own) > generation:
                            at_file = time.perf_counter() - t0
                time.sleep(0.001)
            shown = subprocess.run([syncctl, "get", rid] + location, capture_output=True, text=True, env=env)
            if shown.returncode != 0 or marker not in shown.stdout:
                raise SystemExit(f"syncctl get {rid} does not show {marker}: {shown.returncode} {shown.stderr}")
            file_latency.append(at_file * 1000)
            store_latency.append(at_store * 1000)
            wait_idle(daemon.pid, quiet=0.2)

        # Where a pass spends its time, from syncd's own log (passes that changed a record).
        with open(os.path.join(work, "syncd.log")) as f:
            passes = [dict(re.findall(r"(pass\.\w+Ms)=(\d+)", line)) for line in f
                      if "merge pass done" in line and "merge.changed=1" in line]
        breakdown = {key: percentile([int(p[key]) for p in passes if key in p], 50)
                     for key in sorted({k for p in passes for k in p})} if passes else {}
        idle_cpu = None
        if a.idle > 0:
            time.sleep(2)
            before = cpu_ticks(daemon.pid)
            time.sleep(a.idle)
            idle_cpu = (cpu_ticks(daemon.pid) - before) / TICK
        result = {
            "records": a.records, "layout": a.layout, "edits": len(ids), "settle_ms": a.settle_ms if a.settle_ms is not None else "default (200)",
            "first_merge_s": round(first_merge, 3),
            "file_ms": {"median": round(percentile(file_latency, 50), 1), "p99": round(percentile(file_latency, 99), 1),
                        "min": round(min(file_latency), 1), "max": round(max(file_latency), 1)},
            "store_ms": {"median": round(percentile(store_latency, 50), 1), "p99": round(percentile(store_latency, 99), 1),
                         "min": round(min(store_latency), 1), "max": round(max(store_latency), 1)},
            "pass_ms_median": breakdown, "peer_file_bytes": len(data), "rss_kib": rss_kib(daemon.pid),
            "idle_cpu_s": idle_cpu, "idle_seconds": a.idle, "loadavg_at_end": open("/proc/loadavg").read().split()[:3],
        }
        print(json.dumps(result))
    finally:
        daemon.terminate()
        try:
            daemon.wait(timeout=60)
        except subprocess.TimeoutExpired:
            daemon.kill()
            daemon.wait()
        log.close()
        if not a.keep:
            subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    main()
