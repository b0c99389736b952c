#!/usr/bin/env python3
"""The SnapshotSync performance benchmark: the release-built syncctl against the plain baselines.

One command builds syncctl in release mode (its own scratch path, .build-bench), generates a
shared folder with bench/generate.py (D devices x M records, cached between runs), and times:

  cold         syncctl merge of the whole folder into an empty state directory (a fresh copy of
               the folder each time: merge publishes bench.json into it)
  noop         syncctl merge again with nothing changed (the fixed cost: start, store, stat)
  incremental  one peer's file rewritten (temporary file + rename, generation + 1) with one
               record changed, then syncctl merge: stores it and republishes bench.json
  publish      syncctl put of one new record on the store holding M records: put merges the
               folder first (every file unchanged: skipped by stat), saves the version, then
               streams all M records into bench.json (temporary file, fsync, rename, fsync of
               the folder)
  python       bench/baselines/naive_merge.py on the same generated folder
  jq           jq -c -n -f bench/baselines/naive_merge.jq on the same generated folder

cold, python and jq are interleaved (cold, python, jq, cold, python, jq…) so that each
comparison sees the same machine load. Every command runs under /usr/bin/time (peak RSS, CPU
time); the wall time is measured around it. Each case runs --repeat times: the table gives the
median (and min-max), the 1-minute load average when the samples started, and the targets of
issue 5 where they apply (3 devices x 100,000 and x 1,000,000 records).

  bench/run.py --records 100000 --devices 3 --repeat 3 [--json FILE]
  bench/run.py --records 1000000 --cases cold,python --repeat 1 --json FILE
  bench/run.py --syncctl PATH ...     # use this binary, do not build
  bench/run.py --wait-load 1.5 ...    # wait (up to --wait-max s) for a quiet machine before each case

Data goes under --data (default: $BENCH_DATA, else ../bench-data next to the repository):
folders/ holds the generated folders (kept: rm -rf it to reclaim), work/ the copies and
stores of this run (removed at the end unless --keep).
"""
import argparse, datetime, glob, hashlib, json, os, platform, random, shutil, statistics, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRATCH = os.path.join(ROOT, ".build-bench")
BUILD = ["swift", "build", "-c", "release", "--scratch-path", SCRATCH, "--product", "syncctl"]
ALL_CASES = ["cold", "python", "jq", "noop", "incremental", "publish"]
TYPE = "ShoppingItem"
PEER = "device-1"  # the peer whose file the incremental case rewrites

# Issue 5's bar, on a 2-core machine: (devices, records) -> case -> limits.
TARGETS = {
    (3, 100_000): {"cold": {"ms": 1000, "faster_than_python": 3.0}, "incremental": {"ms": 250},
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
            raise SystemExit(f"{shell_line(argv)} exited with {done.returncode}:\n"
                             + done.stderr.decode(errors="replace")[-3000:])
        with open(self.time_file) as f:
            rss, user, system = f.read().strip().splitlines()[-1].split()
        sample = {"wall_ms": round(wall * 1000, 1), "rss_kb": int(rss), "cpu_s": round(float(user) + float(system), 2),
                  "load1": load}
        return sample, (done.stdout.decode() if not stdout else None)


def generate(data, devices, records, seed, id_order=False):
    generator = os.path.join(ROOT, "bench", "generate.py")
    with open(generator, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:8]
    folder = os.path.join(data, "folders", f"d{devices}-r{records}-s{seed}{'-idorder' if id_order else ''}-{digest}")
    if not os.path.isdir(folder):
        partial = folder + ".partial"
        shutil.rmtree(partial, ignore_errors=True)
        log(f"generating {devices} x {records} records into {folder}")
        started = time.perf_counter()
        subprocess.run([sys.executable, generator, partial, "--devices", str(devices), "--records", str(records),
                        "--seed", str(seed)] + (["--id-order"] if id_order else []), check=True)
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


def plain_ids(files, limit):
    """Ids whose version is the same plain version in every peer's file (an edit of one by PEER
    supersedes it everywhere), and PEER's document."""
    others = {}
    for path in files:
        if os.path.basename(path) == f"{PEER}.json":
            continue
        with open(path, encoding="utf-8") as f:
            for r in json.load(f)["records"]:
                others.setdefault(r["id"], []).append(json.dumps(r, sort_keys=True))
    with open(os.path.join(os.path.dirname(files[0]), f"{PEER}.json"), encoding="utf-8") as f:
        doc = json.load(f)
    ids = []
    for n, r in enumerate(doc["records"]):
        if "versionVector" in r and not r.get("deleted") and set(others.get(r["id"], [])) == {json.dumps(r, sort_keys=True)}:
            ids.append(n)
            if len(ids) >= limit * 20:
                break
    return doc, ids


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


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--records", type=int, default=100_000, help="records per device file (default 100000)")
    p.add_argument("--devices", type=int, default=3, help="peer files in the folder (default 3)")
    p.add_argument("--repeat", type=int, default=3, help="runs of each case; the median is reported (default 3)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--id-order", action="store_true",
                   help="peers' files list their records in id order, as SnapshotSync writes them (default: creation order)")
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
        print(generate(os.path.abspath(a.data), a.devices, a.records, a.seed, a.id_order)[0])
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
    folder, files = generate(os.path.abspath(a.data), a.devices, a.records, a.seed, a.id_order)
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
        comparison = [c for c in ("cold", "python", "jq") if c in cases]
        if comparison:
            wait_for_load(a.wait_load, a.wait_max)
        for i in range(a.repeat if comparison else 0):
            if "cold" in cases:
                if shared:
                    shutil.rmtree(os.path.dirname(shared))
                base = os.path.join(work, f"cold-{i}")
                shared, state = os.path.join(base, "shared"), os.path.join(base, "state")
                copy_folder(files, shared)
                sample, report, argv = merge_sample(shared, state, "--device", "bench")
                status = statuses(report)
                check(sum(1 for s in status.values() if s == "merged") == a.devices, "every peer merged", report)
                check(report.get("added", 0) + report.get("deleted", 0) == a.records and report.get("publishedGeneration"),
                      "every record added (live or deleted), published", report)
                commands["cold"] = "cp GEN/*.json SHARED/ && " + shell_line(argv).replace(shared, "SHARED").replace(state, "NEW_STATE")
                record("cold", sample)
            if "python" in cases:
                out = os.path.join(work, "naive-python.json")
                argv = [sys.executable, os.path.join(ROOT, "bench", "baselines", "naive_merge.py"), folder, out]
                sample, _ = run.timed(argv)
                if i == 0:
                    with open(out, encoding="utf-8") as f:
                        check(len(json.load(f)["records"]) == a.records, "python baseline: every id once", {})
                commands["python"] = shell_line(argv).replace(folder, "GEN").replace(out, "OUT").replace(ROOT + "/", "")
                record("python", sample)
            if "jq" in cases:
                out = os.path.join(work, "naive-jq.json")
                argv = ["jq", "-c", "-n", "-f", os.path.join(ROOT, "bench", "baselines", "naive_merge.jq")] + files
                sample, _ = run.timed(argv, stdout=out)
                if i == 0:
                    with open(out, encoding="utf-8") as f:
                        check(len(json.load(f)["records"]) == a.records, "jq baseline: every id once", {})
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
            log(f"finding records every peer holds in the same version (to edit in {PEER}.json)")
            doc, candidates = plain_ids([os.path.join(shared, os.path.basename(f)) for f in files], a.repeat)
            picks = random.Random(a.seed).sample(candidates, a.repeat)
            wait_for_load(a.wait_load, a.wait_max)
            last_ms = 0
            for i, n in enumerate(picks):
                r = dict(doc["records"][n])
                vector = dict(r["versionVector"])
                vector[PEER] = vector.get(PEER, 0) + 1
                last_ms, written = stamp_now(last_ms)
                fields = dict(r["fields"])
                fields["note"] = f"{fields.get('note', '')} — edited by the benchmark ({i})"
                r.update(versionVector=vector, lastModified=written, modifiedBy=PEER, fields=fields)
                doc["records"][n] = r
                doc["generation"] += 1
                doc["writtenAt"] = written
                temporary = os.path.join(shared, f".{PEER}.json.bench.tmp")
                with open(temporary, "w", encoding="utf-8") as f:
                    json.dump(doc, f, ensure_ascii=False, separators=(",", ":"))
                    f.flush()
                    os.fsync(f.fileno())
                os.rename(temporary, os.path.join(shared, f"{PEER}.json"))
                os.sync()
                sample, report, argv = merge_sample(shared, state)
                status = statuses(report)
                check(status.get(f"{PEER}.json") == "merged" and list(status.values()).count("merged") == 1,
                      f"only {PEER}.json read", report)
                check(report.get("changed") == 1 and report.get("added") == 0 and report.get("publishedGeneration"),
                      "one record changed, bench.json published", report)
                commands["incremental"] = shell_line(argv).replace(shared, "SHARED").replace(state, "STATE")
                record("incremental", sample)
            del doc

        if "publish" in cases:
            wait_for_load(a.wait_load, a.wait_max)
            own = os.path.join(shared, "bench.json")
            for i in range(a.repeat):
                before = os.stat(own).st_ino
                fields = json.dumps({"name": f"Benchmark item {i} — Crème fraîche 🍅", "amount": str(i + 1),
                                     "details": {"aisle": 7, "done": False}}, ensure_ascii=False).encode()
                argv = [syncctl, "put", "--type", TYPE, "--shared", shared, "--state", state, "--json"]
                sample, out = run.timed(argv, stdin=fields)
                report = json.loads(out)
                merge = report.get("merge", {})
                sample["phases"] = merge.get("timings")
                check(set(statuses(merge).values()) == {"unchanged"} and report.get("publishedGeneration")
                      and os.stat(own).st_ino != before, "nothing read, bench.json rewritten", report)
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
        if "faster_than_python" in limits and "python" in summary:
            verdicts.append(summary["python"]["median_ms"] / s["median_ms"] >= limits["faster_than_python"])
        s["target"] = describe(limits)
        s["met"] = all(verdicts) if verdicts else None
    ratios = {}
    if "cold" in summary:
        for base in ("python", "jq"):
            if base in summary:
                ratios[f"cold/{base}"] = round(summary["cold"]["median_ms"] / summary[base]["median_ms"], 3)
    out = {"benchmark": "SnapshotSync bench/run.py", "argv": sys.argv[1:], "machine": info,
           "folder": {"devices": a.devices, "records": a.records, "seed": a.seed, "id_order": a.id_order, "files": len(files),
                      "bytes": size},
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
    if "faster_than_python" in limits:
        parts.append(f"≥ {limits['faster_than_python']:g}× faster than python")
    return ", ".join(parts)


NAMES = {"cold": "cold merge", "noop": "merge, nothing changed", "incremental": "incremental merge",
         "publish": "publish (put)", "python": "naive merge, python", "jq": "naive merge, jq"}


def print_table(out):
    m, f = out["machine"], out["folder"]
    print(f"SnapshotSync benchmark — {f['devices']} devices × {f['records']:,} records "
          f"({f['bytes'] / 1e6:.0f} MB), median of {out['repeat']}")
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
