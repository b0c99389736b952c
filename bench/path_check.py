#!/usr/bin/env python3
"""Does a store reached step by step hold what a first merge of the final folder holds?

A pass skips what it merged before (elements whose digest is a line the store holds, or one a
file's earlier merge kept), so a bug there would show as a store that differs from one built
from scratch. This checks that, with one build:

 1. FOLDER's peer files copied into a work folder and merged by SYNCCTL into state A (a first
    merge, device "bench").
 2. --files of the peers' files picked at random (--seed), --edits records of each edited as its
    device would (bench/part_again.py's edit: vector advanced, a new note, renamed into place),
    then one merge into state A. Repeated --rounds times (a part's first change, then later ones).
 3. The peers' files alone (not bench's own) copied into a second folder and merged by SYNCCTL
    into a fresh state B.
 4. The records of A and B compared: id and stored line, every one. Exit status 1 if any differs.

Every edit advances its record's vector, so each old version is dominated by the new one: the
two stores must hold the same records, line for line.

    python3 bench/path_check.py .build-static/release/syncctl ../bench-data/folders/FOLDER [--seed 1]

The work directory goes under $TMPDIR and is removed at the end (--keep keeps it).
"""
import argparse
import glob
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import part_again  # noqa: E402  (edits a record as its device would)


def merge(binary, shared, state):
    done = subprocess.run([binary, "merge", "--shared", shared, "--state", state, "--device", "bench", "--json"],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{binary} merge failed ({done.returncode}): {done.stderr.strip()}")
    return json.loads(done.stdout)


def rows(state):
    with sqlite3.connect(os.path.join(state, "store.sqlite")) as db:
        return db.execute("SELECT id, line FROM record ORDER BY id").fetchall()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("syncctl")
    p.add_argument("folder")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--files", type=int, default=8, help="files edited per round (default 8)")
    p.add_argument("--edits", type=int, default=3, help="records edited per file (default 3)")
    p.add_argument("--rounds", type=int, default=2, help="rounds of edits, each merged (default 2)")
    p.add_argument("--keep", action="store_true", help="keep the work directory")
    args = p.parse_args()

    work = tempfile.mkdtemp(prefix="path-check-")
    try:
        shared = os.path.join(work, "shared")
        os.makedirs(shared)
        peers = sorted(os.path.basename(f) for f in glob.glob(os.path.join(args.folder, "*.json")))
        for name in peers:
            shutil.copy(os.path.join(args.folder, name), shared)
        merge(args.syncctl, shared, os.path.join(work, "A"))
        rng = random.Random(args.seed)
        for round_ in range(args.rounds):
            for name in rng.sample(peers, min(args.files, len(peers))):
                path = os.path.join(shared, name)
                with open(path, encoding="utf-8") as f:
                    count = len(json.load(f)["records"])
                for edit in range(args.edits):
                    part_again.edit(path, rng.randrange(count), f"path_check {round_}.{edit}")
            report = merge(args.syncctl, shared, os.path.join(work, "A"))
            print(f"round {round_ + 1}: {report['changed']} changed, {report['added']} added")
        fresh = os.path.join(work, "fresh")
        os.makedirs(fresh)
        for name in peers:
            shutil.copy(os.path.join(shared, name), fresh)
        merge(args.syncctl, fresh, os.path.join(work, "B"))
        stepwise, scratch = rows(os.path.join(work, "A")), rows(os.path.join(work, "B"))
        differing = [a[0] for a, b in zip(stepwise, scratch) if a != b]
        print(f"{len(stepwise)} records step by step, {len(scratch)} from scratch; "
              f"{len(differing) + abs(len(stepwise) - len(scratch))} differ")
        for record_id in differing[:5]:
            print(f"  differs: {record_id}")
        return 1 if differing or len(stepwise) != len(scratch) else 0
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
