#!/usr/bin/env python3
"""The SnapshotSync performance benchmark: the release-built syncctl against the plain baselines.

One command builds syncctl as the Debian package does (scripts/build-release.sh: release mode,
static, its own scratch path .build-bench), generates a shared folder with bench/generate.py
(D devices x M records, cached between runs), and times:

  cold         syncctl merge of the whole folder into an empty state directory (a fresh copy of
               the folder each time: merge publishes bench.json into it)
  noop         syncctl merge again with nothing changed (the fixed cost: start, store, stat)
  incremental  one peer's file (or, with --layout parts, the part holding the record) rewritten
               (temporary file + rename, generation + 1) with one record changed, then syncctl
               merge: stores it and republishes bench's snapshot
  publish      syncctl put of one new record on the store holding M records: put merges the
               folder first (every file unchanged: skipped by stat), saves the version, then
               writes bench's snapshot (temporary file, fsync, rename, fsync of the folder)
  python       bench/baselines/naive_merge_orjson.py on the same generated folder: the naive
               merge (newest lastModified per id, one JSON document out) parsed and written with
               orjson, the fastest thing a scripter would reach for. The main comparison.
  python-json  bench/baselines/naive_merge.py: the same merge with the standard library's json
  jq           jq -c -n -f bench/baselines/naive_merge.jq on the same generated folder

cold, python, python-json and jq are interleaved (cold, python, python-json, jq, cold, …) so
that each comparison sees the same machine load. Every command runs under /usr/bin/time (peak
RSS, CPU time); the wall time is measured around it. Each case runs --repeat times: the table
gives the median (and min-max), the 1-minute load average when the samples started, the ratio
of the cold merge to each baseline, and the targets of issue 5 where they apply (3 devices x
100,000 and x 1,000,000 records; its "3x faster than Python" was set against the stdlib-json
script, so it is checked against python-json).

The folder's shape comes from the generator's options, passed through: --style uniform (the
default, the same bytes as ever) or varied (what other writers vary: spellings, key orders,
indentation, escapes, exotic content, carried conflicts; see bench/generate.py --help), and
--layout file (one format 1 file per device) or parts (format 2 parts, --part-digits hex
digits, as SnapshotSync devices publish large snapshots; a format 1 syncctl rejects them). Each
combination is generated once and cached under its own name.

  bench/run.py --records 100000 --devices 3 --repeat 3 [--json FILE]
  bench/run.py --records 1000000 --cases cold,python --repeat 1 --json FILE
  bench/run.py --records 100000 --style varied --cases cold,python,python-json
  bench/run.py --records 100000 --layout parts --part-digits 2 ...
  bench/run.py --syncctl PATH ...     # use this binary, do not build
  bench/run.py --wait-load 1.5 ...    # wait (up to --wait-max s) for a quiet machine before each case

Data goes under --data (default: $BENCH_DATA, else ../bench-data next to the repository):
folders/ holds the generated folders (kept: rm -rf it to reclaim), work/ the copies and
stores of this run (removed at the end unless --keep).
"""
import argparse, datetime, glob, hashlib, json, os, platform, random, shutil, statistics, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRATCH = os.path.join(ROOT, ".build-bench")
# The release build as the Debian package ships it (static, hardened): scripts/build-release.sh.
BUILD = ["bash", os.path.join(ROOT, "scripts", "build-release.sh"), "--scratch-path", SCRATCH, "--product", "syncctl"]
ALL_CASES = ["cold", "python", "python-json", "jq", "noop", "incremental", "publish"]
BASELINES = {"python": "naive_merge_orjson.py", "python-json": "naive_merge.py"}  # in bench/baselines/
TYPE = "ShoppingItem"
PEER = "device-1"  # the peer whose file the incremental case rewrites

# Issue 5's bar, on a 2-core machine: (devices, records) -> case -> limits.
TARGETS = {
    (3, 100_000): {"cold": {"ms": 1000, "faster_than_python_json": 3.0}, "incremental": {"ms": 250},
                   "publish": {"ms": 150}},
    (3, 1_000_000): {"cold": {"ms": 12000, "rss_kb": 1024 * 1024}},
}


def log(*parts):
    print(*parts, file=sys.stderr, flush=True)


def shell_line(argv):
    import shlex
    return " ".join(shlex.quote(a) for a in argv)


def first_line(argv):
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        return (out.stdout or out.stderr).strip().splitlines()[0]
    except (OSError, IndexError, subprocess.SubprocessError):
        return None


def machine():
    cpu = None
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    with open("/proc/meminfo") as f:
        mem_kb = next(int(line.split()[1]) for line in f if line.startswith("MemTotal"))
    git = lambda *a: first_line(["git", "-C", ROOT, *a])
    dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--", "Sources", "Package.swift"],
                           capture_output=True, text=True).stdout.strip()
    return {"nproc": len(os.sched_getaffinity(0)), "cpu": cpu, "memory_gib": round(mem_kb / 1024 ** 2, 1),
            "kernel": platform.release(), "swift": first_line(["swift", "--version"]),
            "python": platform.python_version(), "jq": first_line(["jq", "--version"]),
            "orjson": first_line([sys.executable, "-c", "import orjson; print(orjson.__version__)"]),
            "commit": git("rev-parse", "--short", "HEAD"), "sources_modified": bool(dirty),
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}


def load1():
    return round(os.getloadavg()[0], 2)


def wait_for_load(limit, max_seconds):
    if not limit:
        return
    deadline = time.monotonic() + max_seconds
    while load1() >= limit and time.monotonic() < deadline:
        log(f"  waiting for the load average to fall below {limit} (now {load1()})")
        time.sleep(15)
    if load1() >= limit:
        log(f"  load average still {load1()} after {max_seconds} s: measuring anyway")


class Runner:
    def __init__(self, work, env):
        self.work, self.env = work, env
        self.time_file = os.path.join(work, "time.txt")

    def timed(self, argv, stdin=None, stdout=None, ok=(0,)):
        """Runs argv under /usr/bin/time; returns the sample and the command's stdout text."""
        load = load1()
        out = open(stdout, "wb") if stdout else subprocess.PIPE
        try:
            started = time.perf_counter()
            done = subprocess.run(["/usr/bin/time", "-f", "%M %U %S", "-o", self.time_file] + argv,
                                  input=stdin, stdout=out, stderr=subprocess.PIPE, env=self.env)
            wall = time.perf_counter() - started
        finally:
            if stdout:
                out.close()
        if done.returncode not in ok:
            said = done.stderr.decode(errors="replace")[-3000:]
            if not said.strip() and done.stdout:
                said = done.stdout.decode(errors="replace")[-3000:]
            raise SystemExit(f"{shell_line(argv)} exited with {done.returncode}:\n" + said)
        with open(self.time_file) as f:
            rss, user, system = f.read().strip().splitlines()[-1].split()
        sample = {"wall_ms": round(wall * 1000, 1), "rss_kb": int(rss), "cpu_s": round(float(user) + float(system), 2),
                  "load1": load}
        return sample, (done.stdout.decode() if not stdout else None)


def generate(data, devices, records, seed, id_order=False, style="uniform", layout="file", part_digits=2):
    """The generated folder for these arguments (generated once, then found by its name: the
    arguments and the generator's digest), and its *.json files."""
    generator = os.path.join(ROOT, "bench", "generate.py")
    with open(generator, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:8]
    if layout == "parts":
        id_order = True  # parts are always in id order
    shape = ("-idorder" if id_order else "") + ("" if style == "uniform" else f"-{style}") + \
        (f"-parts{part_digits}" if layout == "parts" else "")
    folder = os.path.join(data, "folders", f"d{devices}-r{records}-s{seed}{shape}-{digest}")
    if not os.path.isdir(folder):
        partial = folder + ".partial"
        shutil.rmtree(partial, ignore_errors=True)
        log(f"generating {devices} x {records} records into {folder}")
        started = time.perf_counter()
        subprocess.run([sys.executable, generator, partial, "--devices", str(devices), "--records", str(records),
                        "--seed", str(seed)] + (["--id-order"] if id_order else [])
                       + (["--style", style] if style != "uniform" else [])
                       + (["--layout", layout, "--part-digits", str(part_digits)] if layout != "file" else []), check=True)
        os.rename(partial, folder)
        log(f"  generated in {time.perf_counter() - started:.1f} s")
    files = sorted(glob.glob(os.path.join(folder, "*.json")))
    return folder, files


def copy_folder(files, target):
    os.makedirs(target)
    for path in files:
        shutil.copyfile(path, os.path.join(target, os.path.basename(path)))
    os.sync()  # the copy's dirty pages are written now, not during the measurement


def check(condition, what, report):
    if not condition:
        raise SystemExit(f"unexpected result ({what}):\n{json.dumps(report, indent=1)[:3000]}")


def statuses(report):
    return {s["name"]: s["status"] for s in report.get("sources", [])}


def is_peer_file(path):
    """PEER's own file or one of its parts (<PEER>.json, <PEER>.<prefix>.json)."""
    name = os.path.basename(path)
    return name == f"{PEER}.json" or (name.startswith(PEER + ".") and name[len(PEER) + 1:-5].isalnum()
                                      and name.count(".") == 2)


def millis(text):
    """An RFC 3339 timestamp as integer milliseconds (any offset, any number of digits)."""
    date, _, rest = text.upper().partition("T")
    zone = "Z" if rest.endswith("Z") else rest[-6:]
    clock = rest[:-1] if zone == "Z" else rest[:-6]
    whole, _, fraction = clock.partition(".")
    moment = datetime.datetime.fromisoformat(f"{date}T{whole}+00:00")
    ms = int(moment.timestamp()) * 1000 + int((fraction + "000")[:3])
    if zone != "Z":
        ms -= (1 if zone[0] == "+" else -1) * (int(zone[1:3]) * 60 + int(zone[4:6])) * 60_000
    return ms


DEFAULTS = {"schemaVersion": 1, "versionVector": {}, "deleted": False, "fields": {}, "conflicts": []}


def normal(r):
    """Enough of the contract's normal form to tell the same version in other spellings (ids in
    upper case, no nulls or defaults, timestamps as milliseconds, schemaVersion as an integer)."""
    out = {}
    for k, v in r.items():
        if v is None or (k in DEFAULTS and v == DEFAULTS[k]):
            continue
        if k == "id":
            v = v.upper()
        elif k == "lastModified":
            v = millis(v)
        elif k == "schemaVersion":
            v = int(v)
        elif k == "conflicts":
            v = [normal(c) for c in v]
        out[k] = v
    return json.dumps(out, sort_keys=True)


def plain_ids(files, limit):
    """Records whose version is the same plain version (a vector, live, no conflicts) in every
    peer's file, so that an edit of one by PEER supersedes it everywhere: a list of (path, index)
    into PEER's files, and those files' documents. In one file, the first limit x 20 such records
    (the picks of earlier runs); in parts, all of them."""
    others = {}
    for path in files:
        if is_peer_file(path):
            continue
        with open(path, encoding="utf-8") as f:
            for r in json.load(f)["records"]:
                others.setdefault(r["id"].upper(), set()).add(normal(r))
    docs, picks = {}, []
    peer_files = sorted(p for p in files if is_peer_file(p))
    for path in peer_files:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        for n, r in enumerate(doc["records"]):
            if (r.get("versionVector") and not r.get("deleted") and not r.get("conflicts")
                    and others.get(r["id"].upper()) == {normal(r)}):
                docs[path] = doc
                picks.append((path, n))
                if len(picks) >= limit * 20 and len(peer_files) == 1:  # parts: from all over the id space
                    return docs, picks
    return docs, picks


def naive_records(path):
    """The ids (in upper case: the naive merges keep other spellings apart) a baseline wrote."""
    with open(path, "rb") as f:
        return {r["id"].upper() for r in json.load(f)["records"]}


def own_files(shared, device):
    """This device's published files (its one file or its parts) and their inodes."""
    names = glob.glob(os.path.join(shared, f"{device}.json")) + glob.glob(os.path.join(shared, f"{device}.*.json"))
    return {os.path.basename(p): os.stat(p).st_ino for p in names}


def stamp_now(previous):
    ms = max(int(time.time() * 1000), previous + 1)
    return ms, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + f".{ms % 1000:03d}Z"


def summarize(samples):
    walls = [s["wall_ms"] for s in samples]
    return {"median_ms": round(statistics.median(walls), 1), "min_ms": min(walls), "max_ms": max(walls),
            "rss_kb": max(s["rss_kb"] for s in samples), "cpu_s": statistics.median(s["cpu_s"] for s in samples),
            "load1": [min(s["load1"] for s in samples), max(s["load1"] for s in samples)]}


def phases(samples):
    got = [s["phases"] for s in samples if s.get("phases")]
    if not got:
        return None
    return {k: statistics.median(p.get(k, 0) for p in got) for k in ("read", "merge", "publish")}


def publish_as_peer(path, doc):
    """Writes the snapshot document `doc` to `path` as its device would: a temporary dot file,
    fsynced, renamed into place, then everything synced."""
    temporary = os.path.join(os.path.dirname(path), "." + os.path.basename(path) + ".bench.tmp")
    with open(temporary, "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False, separators=(",", ":"))
        f.flush()
        os.fsync(f.fileno())
    os.rename(temporary, path)
    os.sync()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--records", type=int, default=100_000, help="records per device file (default 100000)")
    p.add_argument("--devices", type=int, default=3, help="peer files in the folder (default 3)")
    p.add_argument("--repeat", type=int, default=3, help="runs of each case; the median is reported (default 3)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--id-order", action="store_true",
                   help="peers' files list their records in id order, as SnapshotSync writes them (default: creation order)")
    p.add_argument("--style", choices=["uniform", "varied"], default="uniform",
                   help="the generator's --style: uniform (default: tidy files, the same bytes as ever) or varied "
                        "(what other writers vary; see bench/generate.py --help)")
    p.add_argument("--layout", choices=["file", "parts"], default="file",
                   help="the generator's --layout: file (default: format 1, <device>.json) or parts (format 2 parts "
                        "<device>.<prefix>.json, in id order; needs a format 2 syncctl)")
    p.add_argument("--part-digits", type=int, choices=[1, 2, 3, 4], default=2,
                   help="with --layout parts: hex digits of each part's prefix, 16^N parts per device (default 2)")
    p.add_argument("--cases", default=",".join(ALL_CASES), help=f"comma-separated, of: {','.join(ALL_CASES)} (default all)")
    p.add_argument("--json", metavar="FILE", help="also write the results as JSON to FILE")
    p.add_argument("--syncctl", help="the syncctl binary to measure (default: build it with: " + " ".join(BUILD) + ")")
    p.add_argument("--data", default=os.environ.get("BENCH_DATA", os.path.join(os.path.dirname(ROOT), "bench-data")),
                   help="where generated folders and work copies go (default: $BENCH_DATA, else ../bench-data)")
    p.add_argument("--wait-load", type=float, default=0, help="before each case, wait for the 1-minute load average to fall below this")
    p.add_argument("--wait-max", type=float, default=600, help="longest wait for --wait-load, seconds (default 600)")
    p.add_argument("--keep", action="store_true", help="keep the work directory (copies, stores, outputs)")
    p.add_argument("--generate-only", action="store_true", help="generate (or find) the folder, print its path, and stop")
    a = p.parse_args()
    cases = [c for c in a.cases.split(",") if c]
    unknown = set(cases) - set(ALL_CASES)
    if unknown:
        p.error(f"unknown cases: {', '.join(sorted(unknown))}")
    if a.devices < 2 and ("incremental" in cases):
        p.error("the incremental case needs at least 2 devices")

    if a.generate_only:
        print(generate(os.path.abspath(a.data), a.devices, a.records, a.seed, a.id_order, a.style, a.layout,
                       a.part_digits)[0])
        return
    syncctl = a.syncctl
    if not syncctl:
        log("building: " + " ".join(BUILD))
        subprocess.run(BUILD, cwd=ROOT, check=True, stdout=sys.stderr)
        syncctl = os.path.join(SCRATCH, "release", "syncctl")
    syncctl = os.path.abspath(syncctl)
    info = machine()
    info["syncctl"] = syncctl
    info["syncctl_from"] = ((info["commit"] + (" + modified sources" if info["sources_modified"] else ""))
                            if not a.syncctl else "given with --syncctl (its commit is not known)")
    info["syncctl_built"] = datetime.datetime.fromtimestamp(os.stat(syncctl).st_mtime, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    folder, files = generate(os.path.abspath(a.data), a.devices, a.records, a.seed, a.id_order, a.style, a.layout,
                             a.part_digits)
    size = sum(os.path.getsize(f) for f in files)
    log(f"folder: {len(files)} files, {size / 1e6:.1f} MB; syncctl: {syncctl}")

    work = os.path.join(os.path.abspath(a.data), "work", f"run-{os.getpid()}")
    os.makedirs(os.path.join(work, "home"))
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.path.join(work, "home"), "LANG": "C.UTF-8",
           "XDG_CONFIG_HOME": os.path.join(work, "home", "config"), "XDG_STATE_HOME": os.path.join(work, "home", "state")}
    run = Runner(work, env)
    results = {}
    commands = {}

    def record(case, sample):
        results.setdefault(case, []).append(sample)
        extra = f", phases {sample['phases']}" if sample.get("phases") else ""
        log(f"  {case:12} {sample['wall_ms']:9.1f} ms  {sample['rss_kb'] / 1024:7.1f} MiB  load {sample['load1']}{extra}")

    def merge_sample(shared, state, *extra):
        argv = [syncctl, "merge", "--shared", shared, "--state", state, *extra, "--json"]
        sample, out = run.timed(argv)
        report = json.loads(out)
        sample["phases"] = report.get("timings")
        return sample, report, argv

    try:
        shared = state = None
        comparison = [c for c in ("cold", "python", "python-json", "jq") if c in cases]
        if comparison:
            wait_for_load(a.wait_load, a.wait_max)
        for i in range(a.repeat if comparison else 0):
            if "cold" in cases:
                # Each run's copy, store and parts are removed once every run is done, not before
                # the next run: on ext4 without a journal (the benchmark machine's file system),
                # the inode allocator skips each inode freed in the last ~30 s, with a buffer lookup
                # each (`recently_deleted`), so files created just after the last run's 2,000 were
                # deleted cost more to create. A journaled ext4 never checks, and a user's first
                # merge does not follow a mass deletion. At 3 x 1,000,000 records, a first merge
                # took 14.50 and 13.11 s right after deleting the last run's files, 13.02 and
                # 12.18 s 40 s later (the same build, in turn).
                base = os.path.join(work, f"cold-{i}")
                shared, state = os.path.join(base, "shared"), os.path.join(base, "state")
                copy_folder(files, shared)
                sample, report, argv = merge_sample(shared, state, "--device", "bench")
                status = statuses(report)
                check(sum(1 for s in status.values() if s == "merged") == len(files), "every peer's file merged"
                      + (" (a format 1 syncctl rejects format 2 parts)" if a.layout == "parts" else ""), report)
                check(report.get("added", 0) + report.get("deleted", 0) == a.records and report.get("publishedGeneration"),
                      "every record added (live or deleted), published", report)
                commands["cold"] = "cp GEN/*.json SHARED/ && " + shell_line(argv).replace(shared, "SHARED").replace(state, "NEW_STATE")
                record("cold", sample)
            for case in ("python", "python-json"):
                if case not in cases:
                    continue
                out = os.path.join(work, f"naive-{case}.json")
                argv = [sys.executable, os.path.join(ROOT, "bench", "baselines", BASELINES[case]), folder, out]
                sample, _ = run.timed(argv)
                if i == 0:
                    check(len(naive_records(out)) == a.records, f"{case} baseline: every id", {})
                commands[case] = shell_line(argv).replace(folder, "GEN").replace(out, "OUT").replace(ROOT + "/", "")
                record(case, sample)
            if "jq" in cases:
                out = os.path.join(work, "naive-jq.json")
                argv = ["jq", "-c", "-n", "-f", os.path.join(ROOT, "bench", "baselines", "naive_merge.jq")] + files
                sample, _ = run.timed(argv, stdout=out)
                if i == 0:
                    check(len(naive_records(out)) == a.records, "jq baseline: every id", {})
                commands["jq"] = (shell_line(argv[:5]).replace(ROOT + "/", "") + " GEN/*.json > OUT")
                record("jq", sample)

        later = [c for c in ("noop", "incremental", "publish") if c in cases]
        if later and not shared:
            log("cold merge (setup for the later cases, not timed)")
            base = os.path.join(work, "setup")
            shared, state = os.path.join(base, "shared"), os.path.join(base, "state")
            copy_folder(files, shared)
            merge_sample(shared, state, "--device", "bench")

        if "noop" in cases:
            wait_for_load(a.wait_load, a.wait_max)
            for i in range(a.repeat):
                sample, report, argv = merge_sample(shared, state)
                check(set(statuses(report).values()) == {"unchanged"} and not report.get("publishedGeneration"),
                      "nothing read, nothing published", report)
                commands["noop"] = shell_line(argv).replace(shared, "SHARED").replace(state, "STATE")
                record("noop", sample)

        if "incremental" in cases:
            log(f"finding records every peer holds in the same version (to edit in {PEER}'s files)")
            docs, candidates = plain_ids([os.path.join(shared, os.path.basename(f)) for f in files], a.repeat)
            picks = random.Random(a.seed).sample(candidates, a.repeat)
            wait_for_load(a.wait_load, a.wait_max)
            last_ms = 0
            for i, (path, n) in enumerate(picks):
                doc, name = docs[path], os.path.basename(path)
                r = dict(doc["records"][n])
                vector = dict(r["versionVector"])
                vector[PEER] = vector.get(PEER, 0) + 1
                last_ms, written = stamp_now(last_ms)
                fields = dict(r.get("fields") or {})
                fields["note"] = f"{fields.get('note', '')} — edited by the benchmark ({i})"
                r.update(versionVector=vector, lastModified=written, modifiedBy=PEER, fields=fields)
                doc["records"][n] = r
                doc["generation"] += 1
                doc["writtenAt"] = written
                publish_as_peer(path, doc)
                sample, report, argv = merge_sample(shared, state)
                status = statuses(report)
                check(status.get(name) == "merged" and list(status.values()).count("merged") == 1,
                      f"only {name} read", report)
                check(report.get("changed") == 1 and report.get("added") == 0 and report.get("publishedGeneration"),
                      "one record changed, bench's snapshot published", report)
                commands["incremental"] = shell_line(argv).replace(shared, "SHARED").replace(state, "STATE")
                record("incremental", sample)
            del docs

        if "publish" in cases:
            wait_for_load(a.wait_load, a.wait_max)
            for i in range(a.repeat):
                before = own_files(shared, "bench")
                fields = json.dumps({"name": f"Benchmark item {i} — Crème fraîche 🍅", "amount": str(i + 1),
                                     "details": {"aisle": 7, "done": False}}, ensure_ascii=False).encode()
                argv = [syncctl, "put", "--type", TYPE, "--shared", shared, "--state", state, "--json"]
                sample, out = run.timed(argv, stdin=fields)
                report = json.loads(out)
                merge = report.get("merge", {})
                sample["phases"] = merge.get("timings")
                after = own_files(shared, "bench")
                check(set(statuses(merge).values()) == {"unchanged"} and report.get("publishedGeneration")
                      and any(after[n] != before.get(n) for n in after), "nothing read, bench's snapshot rewritten", report)
                commands["publish"] = "echo FIELDS | " + shell_line(argv).replace(shared, "SHARED").replace(state, "STATE")
                record("publish", sample)
    finally:
        if a.keep:
            log(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
            try:
                os.rmdir(os.path.dirname(work))
            except OSError:
                pass

    # The summary.
    summary = {}
    for case, samples in results.items():
        command = commands.get(case, "").replace(sys.executable, "python3").replace(ROOT + "/", "")
        summary[case] = dict(summarize(samples), phases_ms=phases(samples), command=command, samples=samples)
    targets = TARGETS.get((a.devices, a.records), {})
    for case, limits in targets.items():
        if case not in summary:
            continue
        s = summary[case]
        verdicts = []
        if "ms" in limits:
            verdicts.append(s["median_ms"] <= limits["ms"])
        if "rss_kb" in limits:
            verdicts.append(s["rss_kb"] <= limits["rss_kb"])
        if "faster_than_python_json" in limits and "python-json" in summary:
            verdicts.append(summary["python-json"]["median_ms"] / s["median_ms"] >= limits["faster_than_python_json"])
        s["target"] = describe(limits)
        s["met"] = all(verdicts) if verdicts else None
    ratios = {}
    if "cold" in summary:
        for base in ("python", "python-json", "jq"):
            if base in summary:
                ratios[f"cold/{base}"] = round(summary["cold"]["median_ms"] / summary[base]["median_ms"], 3)
    out = {"benchmark": "SnapshotSync bench/run.py", "argv": sys.argv[1:], "machine": info,
           "folder": {"devices": a.devices, "records": a.records, "seed": a.seed,
                      "id_order": a.id_order or a.layout == "parts", "style": a.style, "layout": a.layout,
                      "part_digits": a.part_digits if a.layout == "parts" else None, "files": len(files), "bytes": size},
           "repeat": a.repeat, "cases": summary, "ratios": ratios}
    print_table(out)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1, ensure_ascii=False)
            f.write("\n")
        log(f"wrote {a.json}")


def describe(limits):
    parts = []
    if "ms" in limits:
        parts.append(f"≤ {limits['ms'] / 1000:g} s" if limits["ms"] >= 1000 else f"≤ {limits['ms']} ms")
    if "rss_kb" in limits:
        parts.append(f"RSS ≤ {limits['rss_kb'] / 1024 ** 2:g} GiB")
    if "faster_than_python_json" in limits:
        parts.append(f"≥ {limits['faster_than_python_json']:g}× faster than python-json")
    return ", ".join(parts)


NAMES = {"cold": "cold merge", "noop": "merge, nothing changed", "incremental": "incremental merge",
         "publish": "publish (put)", "python": "naive merge, python orjson", "python-json": "naive merge, python json",
         "jq": "naive merge, jq"}


def print_table(out):
    m, f = out["machine"], out["folder"]
    shape = ", ".join([f.get("style", "uniform")] + (["id order"] if f["id_order"] else [])
                      + ([f"parts of {f['part_digits']} digits"] if f.get("layout") == "parts" else []))
    print(f"SnapshotSync benchmark — {f['devices']} devices × {f['records']:,} records ({shape}; "
          f"{f['files']} files, {f['bytes'] / 1e6:.0f} MB), median of {out['repeat']}")
    print(f"{m['date']}; {m['nproc']} cores, {m['cpu']}, {m['memory_gib']} GiB; "
          f"syncctl from {m['syncctl_from']}, built {m['syncctl_built']}")
    header = ["case", "median", "min–max", "peak RSS", "CPU", "load1", "phases r/m/p ms", "target", "met"]
    rows = []
    for case in ALL_CASES:
        s = out["cases"].get(case)
        if not s:
            continue
        ph = s.get("phases_ms")
        rows.append([NAMES[case], ms(s["median_ms"]), f"{ms(s['min_ms'])}–{ms(s['max_ms'])}",
                     f"{s['rss_kb'] / 1024:.0f} MiB", f"{s['cpu_s']:.2f} s",
                     f"{s['load1'][0]:.1f}–{s['load1'][1]:.1f}",
                     "/".join(f"{ph[k]:g}" for k in ("read", "merge", "publish")) if ph else "",
                     s.get("target", ""), {True: "yes", False: "NO", None: ""}[s.get("met")]])
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header))]
    for r in [header, ["-" * w for w in widths]] + rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    for name, ratio in out["ratios"].items():
        ours, theirs = name.split("/")
        print(f"{NAMES[ours]} / {NAMES[theirs]}: {ratio:.3f} (ours is {1 / ratio:.1f}× faster)" if ratio < 1
              else f"{NAMES[ours]} / {NAMES[theirs]}: {ratio:.3f} (ours is {ratio:.1f}× slower)")


def ms(value):
    return f"{value / 1000:.2f} s" if value >= 1000 else f"{value:.0f} ms"


if __name__ == "__main__":
    main()
