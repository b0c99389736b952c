#!/usr/bin/env python3
"""What one edit costs among devices in step: the blocks a file-sync engine moves, and the time.

For each size M (--records, comma-separated), with the real syncctl:

 1. bench/generate.py makes a folder of D devices x M records (format 1, --id-order, uniform
    style; cached under --data like bench/run.py's folders), copied into a work folder F.
 2. D devices get in step: each device-i runs `syncctl merge --shared F --state S_i --device
    device-i` (state directories outside F), then a second round of the same merges, so that
    every device has merged everyone's output and published its own snapshot.
 3. The SHA-256 of every block (--block-size, default 128 KiB, Syncthing's block size for files
    under 256 MiB) of every *.json file in F is recorded, at its offset.
 4. One edit: `syncctl put --type ShoppingItem --shared F --state S_0 --id ID` of one new record
    (its fields as JSON on standard input), then `syncctl merge` on device-1, device-2, ... and
    last device-0 again, in turn: the edit reaches everyone and everyone republishes. The new
    ids are random but drawn from --seed (the same for every size, run and engine, so that
    before and after compare edits at the same places in the id space); with --syncctl-ids
    syncctl picks them.
 5. Over all *.json files, the blocks that are new or differ from the block at the same offset
    before are counted, with the bytes they hold: what upstream Syncthing (no rolling hash since
    2025) sends. A file that disappeared counts 0; a new file counts all its blocks. Blocks are
    also attributed to the device whose files they are (<device>.json and its parts
    <device>.<prefix>.json).
 6. Steps 4-5 repeat --edits times (default 5), each from the state the previous one left.

Reported per size: the median and max over the edits of blocks, bytes and the wall time of the
put and the merges together, and per device (its blocks and bytes, the wall time of its step),
as a table and, with --json FILE, as JSON with every edit's numbers.

  bench/edit_cost.py --records 1000,100000 [--edits 5] [--json FILE]
  bench/edit_cost.py --syncctl PATH ...     # use this binary, do not build

Before format 2 parts, main measured 9 blocks per edit at 1,000 records and 444 (58 MB) at
100,000 (58 MB; the transfer notes of the format 2 work): a record inserted in the middle of a
one-file snapshot shifts every byte after it, in every device's file.

Without --syncctl, syncctl is built as bench/run.py builds it (scripts/build-release.sh
--scratch-path .build-bench --product syncctl: as the Debian package ships it). Data goes under
--data (default $BENCH_DATA, else ../bench-data next to the repository): folders/ (generated,
kept) and work/ (this run's folder and stores, removed at the end unless --keep).
"""
import argparse, datetime, glob, hashlib, json, os, random, re, shutil, statistics, subprocess, sys, time, uuid

sys.dont_write_bytecode = True  # no bench/__pycache__ in the work tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run as bench  # noqa: E402  (bench/run.py: generation cache, machine facts, timed commands)

TYPE = "ShoppingItem"
OWNER = re.compile(r"^(.+?)(\.[0-9A-F]{1,4})?\.json$")  # <device>.json or <device>.<prefix>.json


def log(*parts):
    print(*parts, file=sys.stderr, flush=True)


def block_hashes(folder, block_size):
    """name -> [(sha256, length)] for every block of every *.json file (not dot files) in folder."""
    out = {}
    for path in sorted(glob.glob(os.path.join(folder, "*.json"))):
        blocks = []
        with open(path, "rb") as f:
            while True:
                chunk = f.read(block_size)
                if not chunk:
                    break
                blocks.append((hashlib.sha256(chunk).digest(), len(chunk)))
        out[os.path.basename(path)] = blocks
    return out


def owner(name, devices):
    """The device whose file (or part) this is, else the name itself."""
    m = OWNER.match(name)
    if m and m.group(1) in devices:
        return m.group(1)
    base = name[:-5]
    return base if base in devices else name


def moved(before, after, devices):
    """Blocks new or different at the same offset, and their bytes: in total and per device."""
    total = {"blocks": 0, "bytes": 0, "files_changed": 0, "files_new": 0,
             "files_removed": sum(1 for n in before if n not in after)}
    per_device = {d: {"blocks": 0, "bytes": 0} for d in devices}
    for name, blocks in after.items():
        old = before.get(name)
        if old is None:
            total["files_new"] += 1
            old = []
        changed = [n for i, (h, n) in enumerate(blocks) if i >= len(old) or old[i][0] != h]
        if changed or len(blocks) != len(old):
            total["files_changed"] += 1
        who = per_device.setdefault(owner(name, devices), {"blocks": 0, "bytes": 0})
        for n in changed:
            total["blocks"] += 1
            total["bytes"] += n
            who["blocks"] += 1
            who["bytes"] += n
    return total, per_device


def spread(values):
    return {"median": statistics.median(values), "max": max(values)}


def measure(a, syncctl, records, data, runner, work):
    devices = [f"device-{i}" for i in range(a.devices)]
    gen_folder, files = bench.generate(data, a.devices, records, a.seed, id_order=True)
    base = os.path.join(work, f"r{records}")
    shared = os.path.join(base, "shared")
    states = {d: os.path.join(base, f"state-{d}") for d in devices}
    bench.copy_folder(files, shared)
    size = sum(os.path.getsize(f) for f in files)
    log(f"{records:,} records: {len(files)} files, {size / 1e6:.1f} MB generated; getting {a.devices} devices in step")

    def merge(device, first=False):
        argv = [syncctl, "merge", "--shared", shared, "--state", states[device], "--json"]
        if first:
            argv[6:6] = ["--device", device]
        sample, out = runner.timed(argv)
        report = json.loads(out)
        sample["published"] = report.get("publishedGeneration")
        sample["added"] = report.get("added", 0)
        sample["changed"] = report.get("changed", 0)
        return sample, report

    setup = []
    started = time.perf_counter()
    for round_ in (1, 2):
        for d in devices:
            sample, report = merge(d, first=(round_ == 1))
            bad = [s["name"] for s in report.get("sources", []) if s.get("status") not in ("merged", "unchanged")]
            rejected = sum(len(s.get("rejectedRecords") or []) for s in report.get("sources", []))
            if bad or rejected:
                raise SystemExit(f"setup merge of {d}: files not merged {bad}, {rejected} records rejected")
            setup.append(dict(sample, device=d, round=round_))
    log(f"  in step after {time.perf_counter() - started:.1f} s "
        f"(round 2 published: {[s['device'] for s in setup if s['round'] == 2 and s['published']] or 'nothing'})")
    os.sync()
    before = block_hashes(shared, a.block_size)
    folder_after_setup = {"files": len(before), "bytes": sum(n for blocks in before.values() for _, n in blocks),
                          "blocks": sum(len(blocks) for blocks in before.values())}

    edits = []
    id_rng = random.Random(f"{a.seed}/edit-cost")
    for r in range(a.edits):
        new_id = str(uuid.UUID(int=id_rng.getrandbits(128), version=4)).upper()
        fields = json.dumps({"name": f"Edit {r} — Crème fraîche 🍅", "amount": str(r + 1), "unit": "Stück",
                             "note": "added by bench/edit_cost.py", "tags": ["fresh", "weekly"],
                             "details": {"aisle": 7, "price": 2.49, "done": False,
                                         "store": {"name": "Marché Saint-Germain", "floor": 0}}},
                            ensure_ascii=False).encode()
        steps = []
        put_argv = [syncctl, "put", "--type", TYPE, "--shared", shared, "--state", states[devices[0]], "--json"]
        if not a.syncctl_ids:
            put_argv += ["--id", new_id]
        sample, out = runner.timed(put_argv, stdin=fields)
        report = json.loads(out)
        new_id = report.get("id")
        if not new_id or not report.get("publishedGeneration"):
            raise SystemExit(f"put did not publish a new record: {out[:2000]}")
        steps.append(dict(sample, step="put", device=devices[0], published=report.get("publishedGeneration")))
        for d in devices[1:] + devices[:1]:
            sample, report = merge(d)
            expected = 0 if d == devices[0] else 1
            if sample["added"] != expected or sample["changed"]:
                raise SystemExit(f"edit {r}: merge on {d} added {sample['added']} and changed {sample['changed']} "
                                 f"records (expected {expected} and 0)")
            steps.append(dict(sample, step="merge", device=d))
        after = block_hashes(shared, a.block_size)
        total, per_device = moved(before, after, devices)
        before = after
        wall = round(sum(s["wall_ms"] for s in steps), 1)
        edits.append({"id": new_id, **total, "wall_ms": wall, "per_device": per_device, "steps": steps})
        log(f"  edit {r}: {total['blocks']} blocks ({total['bytes'] / 1e6:.2f} MB), {wall:.0f} ms: "
            + ", ".join(f"{s['step']} {s['device']} {s['wall_ms']:.0f} ms" for s in steps)
            + "; blocks " + ", ".join(f"{d} {v['blocks']}" for d, v in per_device.items()))
        os.sync()

    summary = {"blocks": spread([e["blocks"] for e in edits]), "bytes": spread([e["bytes"] for e in edits]),
               "wall_ms": spread([e["wall_ms"] for e in edits]), "per_device": {}}
    for i, d in enumerate(devices):
        summary["per_device"][d] = {
            "blocks": spread([e["per_device"][d]["blocks"] for e in edits]),
            "bytes": spread([e["per_device"][d]["bytes"] for e in edits]),
            # device-0 runs the put and the last merge
            "wall_ms": spread([sum(s["wall_ms"] for s in e["steps"] if s["device"] == d) for e in edits]),
            "steps": "put, then the last merge" if i == 0 else "merge"}
    summary["steps_wall_ms"] = {
        f"{s['step']} {s['device']}": spread([e["steps"][k]["wall_ms"] for e in edits])
        for k, s in enumerate(edits[0]["steps"])}
    return {"records": records, "generated": {"folder": os.path.basename(gen_folder), "files": len(files), "bytes": size},
            "after_setup": folder_after_setup, "setup": setup, "edits": edits, "summary": summary}


def mb(n):
    return f"{n / 1e6:.2f}" if n < 10e6 else f"{n / 1e6:.1f}"


def table(header, rows):
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header))]
    for r in [header, ["-" * w for w in widths]] + rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())


def print_table(out):
    m = out["machine"]
    devices = [f"device-{i}" for i in range(out["devices"])]
    print(f"Edit cost — {out['devices']} devices in step; one new record put on device-0, then merged by "
          f"{', '.join(devices[1:] + devices[:1])}; {out['edits']} edits; {out['block_size'] // 1024} KiB blocks "
          f"new or changed at their offset; median (max)")
    print(f"{m['date']}; {m['nproc']} cores, {m['cpu']}, load {m['load1_at_start']} at the start; syncctl "
          f"{m['syncctl']} ({m['syncctl_from']}, built {m['syncctl_built']})")
    steps = list(out["sizes"][0]["summary"]["steps_wall_ms"])
    rows = []
    for size in out["sizes"]:
        s, f = size["summary"], size["after_setup"]
        rows.append([f"{size['records']:,}", f"{f['files']} files, {mb(f['bytes'])} MB",
                     f"{s['blocks']['median']:g} ({s['blocks']['max']:g})",
                     f"{mb(s['bytes']['median'])} ({mb(s['bytes']['max'])})",
                     f"{bench.ms(s['wall_ms']['median'])} ({bench.ms(s['wall_ms']['max'])})"]
                    + [f"{bench.ms(v['median'])} ({bench.ms(v['max'])})" for v in s["steps_wall_ms"].values()])
    table(["records", "folder after setup", "blocks", "MB moved", "put + merges"] + steps, rows)
    print()
    rows = []
    for size in out["sizes"]:
        for d in devices:
            v = size["summary"]["per_device"][d]
            rows.append([f"{size['records']:,}", d, f"{v['blocks']['median']:g} ({v['blocks']['max']:g})",
                         f"{mb(v['bytes']['median'])} ({mb(v['bytes']['max'])})",
                         f"{bench.ms(v['wall_ms']['median'])} ({bench.ms(v['wall_ms']['max'])})", v["steps"]])
    table(["records", "device", "its blocks", "its MB", "its wall time", "its steps"], rows)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--records", default="1000,100000",
                   help="records per device, comma-separated sizes measured in turn (default 1000,100000)")
    p.add_argument("--devices", type=int, default=3, help="devices in step, device-0 .. device-(D-1) (default 3)")
    p.add_argument("--edits", type=int, default=5, help="edits per size, each from the state the previous left (default 5)")
    p.add_argument("--seed", type=int, default=1, help="the generator's seed, and the new records' ids' (default 1)")
    p.add_argument("--syncctl-ids", action="store_true", help="let syncctl pick the new records' ids (default: seeded ids, passed with --id)")
    p.add_argument("--block-size", type=int, default=128 * 1024,
                   help="bytes per block, as the file-sync engine splits files (default 131072: Syncthing under 256 MiB)")
    p.add_argument("--syncctl", help="the syncctl binary to measure (default: build it with: " + " ".join(bench.BUILD) + ")")
    p.add_argument("--data", default=os.environ.get("BENCH_DATA", os.path.join(os.path.dirname(bench.ROOT), "bench-data")),
                   help="where generated folders and the work folder go (default: $BENCH_DATA, else ../bench-data)")
    p.add_argument("--json", metavar="FILE", help="also write the results, every edit included, as JSON to FILE")
    p.add_argument("--keep", action="store_true", help="keep the work directory (folders and stores)")
    a = p.parse_args()
    sizes = [int(x) for x in a.records.replace("_", "").split(",") if x]
    if a.devices < 2 or a.edits < 1 or not sizes:
        p.error("needs at least 2 devices, 1 edit and one size")

    syncctl = a.syncctl
    if not syncctl:
        log("building: " + " ".join(bench.BUILD))
        subprocess.run(bench.BUILD, cwd=bench.ROOT, check=True, stdout=sys.stderr)
        syncctl = os.path.join(bench.SCRATCH, "release", "syncctl")
    syncctl = os.path.abspath(syncctl)
    info = bench.machine()
    info["syncctl"] = syncctl
    info["syncctl_from"] = ((info["commit"] + (" + modified sources" if info["sources_modified"] else ""))
                            if not a.syncctl else "given with --syncctl (its commit is not known)")
    info["syncctl_built"] = datetime.datetime.fromtimestamp(os.stat(syncctl).st_mtime, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    info["load1_at_start"] = bench.load1()

    data = os.path.abspath(a.data)
    work = os.path.join(data, "work", f"edit-cost-{os.getpid()}")
    os.makedirs(os.path.join(work, "home"))
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.path.join(work, "home"), "LANG": "C.UTF-8",
           "XDG_CONFIG_HOME": os.path.join(work, "home", "config"), "XDG_STATE_HOME": os.path.join(work, "home", "state")}
    runner = bench.Runner(work, env)
    results = []
    try:
        for records in sizes:
            results.append(measure(a, syncctl, records, data, runner, work))
            if not a.keep:
                shutil.rmtree(os.path.join(work, f"r{records}"), ignore_errors=True)
    finally:
        if a.keep:
            log(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
            try:
                os.rmdir(os.path.dirname(work))
            except OSError:
                pass
    out = {"benchmark": "SnapshotSync bench/edit_cost.py", "argv": sys.argv[1:], "machine": info,
           "devices": a.devices, "edits": a.edits, "block_size": a.block_size, "seed": a.seed, "sizes": results}
    print_table(out)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1, ensure_ascii=False)
            f.write("\n")
        log(f"wrote {a.json}")


if __name__ == "__main__":
    main()
