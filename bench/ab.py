#!/usr/bin/env python3
"""Compares syncctl builds on one folder, runs interleaved (A B A B ...), on a busy machine.

A first merge of FOLDER's *.json into a fresh state directory, or, after one first merge, merges
with nothing changed (--noop), merges after one record of a peer's file changed (--incremental:
the same edit in every build's copy, a different file each round), or `syncctl put` of a new
record (--put), by each build in turn (the order reversed every other round), so that whatever
else the machine does weighs on every build alike. Prints each build's
median and minimum wall time and median CPU time (user + system), and its paired ratio to the
first build: the median over the rounds of its time divided by the first build's in the same
round, which the host's drift between rounds does not move.

    python3 bench/ab.py FOLDER OLD_SYNCCTL NEW_SYNCCTL [--runs 7] [--noop | --incremental | --put]

FOLDER is a generated folder, e.g. ../bench-data/folders/d3-r100000-s1-305b6f91 (bench/run.py
makes and keeps them). A copy of it per build and the stores go in a temporary directory (under
$TMPDIR), removed at the end.
"""
import argparse
import glob
import json
import os
import resource
import shutil
import statistics
import subprocess
import tempfile
import time


def merge(binary, shared, state, put=None):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    command = ["merge"] if put is None else ["put", "--type", "ShoppingItem"]
    done = subprocess.run([binary] + command + ["--shared", shared, "--state", state, "--device", "bench", "--json"],
                          input=put, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{binary} {command[0]} failed ({done.returncode}): {done.stderr.strip()}")
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, done.stdout


def edit_one_record(shared, name, round):
    """Rewrites peer file `name` as its device would, with one plain record edited (its device's
    count + 1, a later lastModified, a note): temporary file, then rename."""
    path = os.path.join(shared, name)
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    records = doc["records"]
    start = (round * 7919) % len(records)
    for n in list(range(start, len(records))) + list(range(start)):
        r = records[n]
        if r.get("versionVector") and not r.get("conflicts") and not r.get("deleted"):
            break
    else:
        raise SystemExit(f"no plain record in {name}")
    device = doc["device"]
    r["versionVector"][device] = r["versionVector"].get(device, 0) + 1
    ms = int(time.time() * 1000)
    r["lastModified"] = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + f".{ms % 1000:03d}Z"
    r["modifiedBy"] = device
    r.setdefault("fields", {})["note"] = f"edited by bench/ab.py, round {round}"
    doc["generation"] += 1
    temporary = os.path.join(shared, f".{name}.ab.tmp")
    with open(temporary, "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False, separators=(",", ":"))
    os.rename(temporary, path)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("folder")
    p.add_argument("builds", nargs="+", help="syncctl binaries to compare")
    p.add_argument("--runs", type=int, default=7, help="runs of each build (default 7)")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--noop", action="store_true", help="time merges with nothing changed instead of first merges")
    mode.add_argument("--incremental", action="store_true", help="time merges after one record of a peer's file changed")
    mode.add_argument("--put", action="store_true", help="time syncctl put of a new record")
    a = p.parse_args()
    later = a.noop or a.incremental or a.put
    files = sorted(glob.glob(os.path.join(a.folder, "*.json")))
    if not files:
        raise SystemExit(f"no *.json in {a.folder}")
    work = tempfile.mkdtemp(prefix="snapshotsync-ab-")
    try:
        # Each build its own copy of the folder: the builds publish the same device's files.
        folders = {b: os.path.join(work, f"shared-{i}") for i, b in enumerate(a.builds)}
        for shared in folders.values():
            os.makedirs(shared)
            for f in files:
                shutil.copy(f, shared)
        peers = set(os.path.basename(f) for f in files)
        walls = {b: [] for b in a.builds}
        cpus = {b: [] for b in a.builds}
        states = {b: os.path.join(work, f"state-{i}") for i, b in enumerate(a.builds)}
        for round in range(a.runs):
            for build in a.builds if round % 2 == 0 else a.builds[::-1]:
                shared, state = folders[build], states[build]
                if not later or not os.path.exists(state):
                    shutil.rmtree(state, ignore_errors=True)
                    for name in set(os.listdir(shared)) - peers:
                        os.remove(os.path.join(shared, name))
                    if later:
                        merge(build, shared, state)  # the first merge, not timed
                if a.incremental:
                    edit_one_record(shared, sorted(peers)[(round * 37 + 11) % len(peers)], round)
                wall, cpu, report = merge(build, shared, state, put=f'{{"name": "ab {round}"}}' if a.put else None)
                if a.incremental and json.loads(report).get("changed") != 1:
                    raise SystemExit(f"{build}: the edit did not change exactly one record: {report[:500]}")
                walls[build].append(wall)
                cpus[build].append(cpu)
        base = a.builds[0]
        for build in a.builds:
            wall_ratio = statistics.median(w / b for w, b in zip(walls[build], walls[base]))
            cpu_ratio = statistics.median(c / b for c, b in zip(cpus[build], cpus[base]))
            print(f"{build}: wall median {statistics.median(walls[build]) * 1000:.1f} ms "
                  f"(min {min(walls[build]) * 1000:.1f}), CPU median {statistics.median(cpus[build]) * 1000:.0f} ms; "
                  f"paired ratio to the first: wall {wall_ratio:.3f}, CPU {cpu_ratio:.3f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
