#!/usr/bin/env python3
"""What a peer's part costs to merge the first and the second time it changes, two builds interleaved.

A generated folder's peers never take in the merged state: about a sixth of each of their parts
holds versions other than the lines this device stores (older versions, the other side of a
conflict). Since 26 November a part keeps the digests of those elements once a change of it
merges, so that its next change parses and merges only what changed; since 27 November a first
merge keeps them too (it reads parts by id, then digests the elements that are not its lines),
so that the first change costs what the second does. This compares two builds:

 1. For each build B (OLD, NEW): FOLDER's *.json copied into a work folder of its own and merged
    once by B (not timed): B's store and this device's ("bench") parts.
 2. For each round, for each build B in turn: a part P of the peer device-1 not changed before
    (the same P for both builds, each in its own folder); one record of P edited (its vector
    advanced, a new note, the file renamed into place) and merged by B ("first change"); then
    another record of P edited and merged by B ("second change").
 3. Each merge must report exactly one record changed.

    python3 bench/part_again.py ../bench-data/folders/d3-r1000000-s1-idorder-parts2-305b6f91 \\
        OLD/syncctl NEW/syncctl [--rounds 10]

The work folders and states go in a temporary directory (under $TMPDIR), removed at the end.
"""
import argparse
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run as bench  # noqa: E402  (bench/run.py: a peer's document published as its device would)

PEER = "device-1"


def edit(path, index, stamp):
    """Edits record `index` of the part at `path` as its device would, and renames it into place."""
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    record = doc["records"][index]
    vector = dict(record.get("versionVector") or {})
    vector[PEER] = vector.get(PEER, 0) + 1
    now = int(time.time() * 1000)
    written = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now / 1000)) + ".%03dZ" % (now % 1000)
    fields = dict(record.get("fields") or {})
    fields["note"] = f"edited by bench/part_again.py ({stamp})"
    record.update(versionVector=vector, lastModified=written, modifiedBy=PEER, fields=fields)
    doc["generation"] += 1
    doc["writtenAt"] = written
    bench.publish_as_peer(path, doc)


def merge(binary, shared, state):
    start = time.perf_counter()
    done = subprocess.run([binary, "merge", "--shared", shared, "--state", state, "--device", "bench", "--json"],
                          capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{binary} merge failed ({done.returncode}): {done.stderr.strip()}")
    changed = json.loads(done.stdout)["changed"]
    if changed != 1:
        raise SystemExit(f"{binary}: {changed} records changed, expected 1")
    return wall


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("folder")
    p.add_argument("old")
    p.add_argument("new")
    p.add_argument("--rounds", type=int, default=10, help="parts changed twice by each build (default 10)")
    a = p.parse_args()
    files = sorted(glob.glob(os.path.join(a.folder, "*.json")))
    parts = sorted(os.path.basename(f) for f in files if os.path.basename(f).startswith(PEER + "."))
    if len(parts) < a.rounds:
        raise SystemExit(f"{a.folder}: {len(parts)} parts of {PEER}, {a.rounds} needed (a folder in parts)")
    work = tempfile.mkdtemp(prefix="snapshotsync-part-again-")
    try:
        builds = (a.old, a.new)
        places = {}
        for i, build in enumerate(builds):
            shared, state = os.path.join(work, f"shared-{i}"), os.path.join(work, f"state-{i}")
            os.makedirs(shared)
            for f in files:
                shutil.copy(f, shared)
            subprocess.run([build, "merge", "--shared", shared, "--state", state, "--device", "bench"],
                           stdout=subprocess.DEVNULL, check=True)
            places[build] = (shared, state)
        first, second = {b: [] for b in builds}, {b: [] for b in builds}
        # Parts spread over the prefixes, each changed in one round only.
        order = [parts[(i * 37) % len(parts)] for i in range(a.rounds)]
        for i, name in enumerate(order):
            for build in builds:
                shared, state = places[build]
                path = os.path.join(shared, name)
                edit(path, 11, f"round {i}, first")
                first[build].append(merge(build, shared, state))
                edit(path, 23, f"round {i}, second")
                second[build].append(merge(build, shared, state))
        for build in builds:
            print(f"{build}: first change of a part: median {statistics.median(first[build]) * 1000:.1f} ms "
                  f"(min {min(first[build]) * 1000:.1f}); second change: median "
                  f"{statistics.median(second[build]) * 1000:.1f} ms (min {min(second[build]) * 1000:.1f})")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
