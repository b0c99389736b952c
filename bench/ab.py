#!/usr/bin/env python3
"""Compares syncctl builds on one folder, runs interleaved (A B A B ...), on a busy machine.

A first merge of FOLDER's *.json into a fresh state directory, or (with --noop) merges with
nothing changed after one first merge, by each build in turn (the order reversed every other
round), so that whatever else the machine does weighs on every build alike. Prints each build's
median and minimum wall time and median CPU time (user + system), and its paired ratio to the
first build: the median over the rounds of its time divided by the first build's in the same
round, which the host's drift between rounds does not move.

    python3 bench/ab.py FOLDER OLD_SYNCCTL NEW_SYNCCTL [--runs 7] [--noop]

FOLDER is a generated folder, e.g. ../bench-data/folders/d3-r100000-s1-305b6f91 (bench/run.py
makes and keeps them). A copy of it per build and the stores go in a temporary directory (under
$TMPDIR), removed at the end.
"""
import argparse
import glob
import os
import resource
import shutil
import statistics
import subprocess
import tempfile
import time


def merge(binary, shared, state):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([binary, "merge", "--shared", shared, "--state", state, "--device", "bench", "--json"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{binary} merge failed ({done.returncode}): {done.stderr.strip()}")
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("folder")
    p.add_argument("builds", nargs="+", help="syncctl binaries to compare")
    p.add_argument("--runs", type=int, default=7, help="runs of each build (default 7)")
    p.add_argument("--noop", action="store_true", help="time merges with nothing changed instead of first merges")
    a = p.parse_args()
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
                if not a.noop or not os.path.exists(state):
                    shutil.rmtree(state, ignore_errors=True)
                    for name in set(os.listdir(shared)) - peers:
                        os.remove(os.path.join(shared, name))
                    if a.noop:
                        merge(build, shared, state)  # the first merge, not timed
                wall, cpu = merge(build, shared, state)
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
