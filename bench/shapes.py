#!/usr/bin/env python3
"""Cold merge on folders shaped as other generators shape them, against the orjson merge.

bench/generate.py makes one family of folders (varied in spelling, layout and irregularities);
a folder written by another program can differ in what dominates it. Each shape below makes
one thing dominate, so that a cost that grows with it shows:

  small    3 x 100,000 records with tiny fields (a title and a flag): per-record costs
  text     3 x 30,000 records each with 0.5-3.5 KB of prose: per-byte costs in long strings
  many     12 devices x 25,000 records: many files, long version vectors
  numbers  3 x 60,000 records of 20 doubles each, in every magnitude: number parsing and writing
  pretty   3 x 100,000 records, indented by Python's json.dump(indent=2): whitespace
  parts    3 x 40,000 small records, each device's in format 2 parts of 3 hex digits (4,096
           files a device, as a writer that always splits three digits deep must write them,
           about 10 records a file): per-file costs
  keys     3 x 10,000 records of 60 namespaced fields in no order ("org.example.settings.…",
           as a program that does not sort its keys writes them): key sorting for RFC 8785
  concurrent  3 x 60,000 small records, every one edited by every device concurrently: the
           devices' copies all differ, so each version is parsed and every record is in conflict
  escaped  the records of `text`, written with json.dump's default ensure_ascii=True (every
           character beyond ASCII as a backslash-u escape, as Python and many other writers do by
           default): decoding escapes in long strings
  mixed    4 x 50,000 records as different programs write them: each device its own layout
           (indented, json.dumps's ", " and ": ", compact with backslash-u escapes, compact with
           keys in any order), fields nested in objects and arrays, numbers in exponent form,
           tombstones, legacy records without a vector, unknown keys. No element is written
           byte for byte alike on two devices, so every version is read and normalized

Every device holds every record; 5 % of each device's records are its own later edit (with
three devices, some are concurrent: conflicts; all of them for `concurrent`). Format 1 files as json.dump writes them (format
2 parts for `parts`).

For each shape: a first merge by syncctl into a fresh state directory, and
bench/baselines/naive_merge_orjson.py on the same folder, interleaved, --runs times each;
prints the medians and the ratio.

    python3 bench/shapes.py --syncctl .build-static/release/syncctl [--shapes text,small] [--runs 3]

Folders are generated once under --data (default: $BENCH_DATA, else ../bench-data)/shapes/.
"""
import argparse
import datetime
import glob
import hashlib
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORDS = ("apple banana cherry milk bread eggs cheese butter rice pasta tomato onion garlic pepper "
         "salt sugar Käse Crème brûlée 寿司 Σπανάκι Хлеб").split()


def stamp(ms):
    seconds, millis = divmod(ms, 1000)
    day = datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc)
    return day.strftime("%Y-%m-%dT%H:%M:%S") + f".{millis:03d}Z"


SHAPES = {
    # name: (devices, records, fields(rng), indent)
    "small": (3, 100_000, lambda r: {"title": r.choice(WORDS), "done": r.random() < 0.5}, None),
    "text": (3, 30_000, lambda r: {"title": r.choice(WORDS),
                                   "body": " ".join(r.choice(WORDS) for _ in range(r.randrange(100, 600)))}, None),
    "many": (12, 25_000, lambda r: {"title": r.choice(WORDS), "qty": r.randrange(10), "price": r.random() * 100}, None),
    "numbers": (3, 60_000, lambda r: {"values": [r.random() * 10 ** r.randrange(-5, 8) for _ in range(20)],
                                      "n": r.randrange(1 << 40)}, None),
    "pretty": (3, 100_000, lambda r: {"title": r.choice(WORDS), "tags": [r.choice(WORDS) for _ in range(3)],
                                      "meta": {"a": r.randrange(100), "b": r.choice(WORDS)}}, 2),
    "parts": (3, 40_000, lambda r: {"title": r.choice(WORDS), "done": r.random() < 0.5}, None),
    "keys": (3, 10_000, lambda r: {f"org.example.settings.{r.choice(WORDS)}.{n}": r.randrange(1000)
                                   for n in r.sample(range(200), 60)}, None),
    "concurrent": (3, 60_000, lambda r: {"title": r.choice(WORDS), "done": r.random() < 0.5}, None),
    "escaped": (3, 30_000, lambda r: {"title": r.choice(WORDS),
                                      "body": " ".join(r.choice(WORDS) for _ in range(r.randrange(100, 600)))}, None),
    "mixed": (4, 50_000, lambda r: mixed_fields(r), None),
}
# Shapes written with every character beyond ASCII escaped (json.dump's default).
ASCII_ONLY = {"escaped"}
# The share of each device's records that are its own later edit (default 5 %).
EDIT_SHARE = {"concurrent": 1.0}
# Shapes written as format 2 parts: how many hex digits their prefixes have.
PART_DIGITS = {"parts": 3}


def mixed_fields(r):
    """Fields as apps write them: text, numbers of every magnitude (Python writes 1e-07 and
    1.5e+300 with exponents), nested objects and arrays, flags and nulls."""
    fields = {"title": " ".join(r.choice(WORDS) for _ in range(r.randrange(1, 6))),
              "amount": r.choice([r.randrange(-1000, 1000), r.random() * 10 ** r.randrange(-12, 25), r.random()]),
              "done": r.random() < 0.5}
    if r.random() < 0.5:
        fields["tags"] = [r.choice(WORDS) for _ in range(r.randrange(4))]
    if r.random() < 0.3:
        fields["meta"] = {"rank": r.random() * 1e-9, "by": r.choice(WORDS), "list": [r.randrange(100), None, True]}
    return fields


def mixed_base(record, r):
    """A record of the `mixed` shape as every device holds it: 1 % legacy (no lastModified, no
    vector), 2 % with an unknown key of a newer app."""
    roll = r.random()
    if roll < 0.01:
        del record["lastModified"], record["versionVector"]
    elif roll < 0.03:
        record["x-app"] = {"client": r.choice(WORDS), "build": r.randrange(10 ** 6), "flags": [True, None]}
    return record


def mixed_tombstone(record, name, stamp_text):
    """`name`'s deletion of `record`: a later version with no fields."""
    vector = dict(record.get("versionVector") or {})
    vector[name] = vector.get(name, 0) + 1
    return dict(record, deleted=True, fields={}, modifiedBy=name, lastModified=stamp_text, versionVector=vector)


# How each device of the `mixed` shape writes its file: json.dump's options and whether the
# keys of each record come in a random order.
MIXED_STYLES = [dict(indent=2, ensure_ascii=False), dict(indent=None, ensure_ascii=False),
                dict(indent=None, ensure_ascii=True, separators=(",", ":")),
                dict(indent=None, ensure_ascii=False, separators=(",", ":"), shuffle=True)]


def shuffled(value, r):
    if isinstance(value, dict):
        items = list(value.items())
        r.shuffle(items)
        return {k: shuffled(v, r) for k, v in items}
    if isinstance(value, list):
        return [shuffled(v, r) for v in value]
    return value


def generate(folder, shape, seed=1):
    devices, count, fields, indent = SHAPES[shape]
    rng = random.Random(seed)
    names = [f"dev-{i}" for i in range(devices)]
    base = 1_790_000_000_000
    records = []
    for i in range(count):
        creator = rng.choice(names)
        records.append({"id": str(uuid.UUID(int=rng.getrandbits(128), version=4)).upper(), "type": "Item",
                        "lastModified": stamp(base + i), "modifiedBy": creator, "versionVector": {creator: 1},
                        "fields": fields(rng)})
        if shape == "mixed":
            mixed_base(records[-1], rng)
    partial = folder + ".partial"
    shutil.rmtree(partial, ignore_errors=True)
    os.makedirs(partial)
    for name in names:
        held = []
        for record in records:
            if rng.random() < EDIT_SHARE.get(shape, 0.05):  # this device's later edit
                record = dict(record, modifiedBy=name, fields=fields(rng),
                              lastModified=stamp(base + count + rng.randrange(100_000)),
                              versionVector=dict(record.get("versionVector", {}),
                                                 **{name: record.get("versionVector", {}).get(name, 0) + 1}))
            if shape == "mixed":
                if rng.random() < 0.02:
                    record = mixed_tombstone(record, name, stamp(base + count + rng.randrange(100_000)))
                if MIXED_STYLES[names.index(name)].get("shuffle"):
                    record = shuffled(record, rng)
            held.append(record)
        digits = PART_DIGITS.get(shape)
        if digits is None:
            files = {name + ".json": {"format": 1, "device": name, "generation": 1, "writtenAt": stamp(base + 10**7),
                                      "records": held}}
        else:
            # Every prefix of that many digits, empty or not: together they must cover every id.
            files = {f"{name}.{prefix:0{digits}X}.json": {"format": 2, "device": name, "generation": 1,
                                                         "part": f"{prefix:0{digits}X}", "records": []}
                     for prefix in range(16 ** digits)}
            for record in held:
                files[f"{name}.{record['id'][:digits]}.json"]["records"].append(record)
        for file_name, document in files.items():
            with open(os.path.join(partial, file_name), "w", encoding="utf-8") as f:
                if shape == "mixed":
                    style = MIXED_STYLES[names.index(name)]
                    json.dump(document, f, ensure_ascii=style["ensure_ascii"], indent=style["indent"],
                              separators=style.get("separators"))
                else:
                    json.dump(document, f, ensure_ascii=shape in ASCII_ONLY, indent=indent,
                              separators=None if indent else (",", ":"))
    os.rename(partial, folder)


def timed(argv):
    start = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr.strip()[:2000]}")
    return time.perf_counter() - start


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--syncctl", required=True, help="the syncctl binary to measure (a release build)")
    p.add_argument("--shapes", default=",".join(SHAPES), help=f"comma-separated, of: {','.join(SHAPES)}")
    p.add_argument("--runs", type=int, default=3, help="runs of each (default 3)")
    p.add_argument("--data", default=os.environ.get("BENCH_DATA", os.path.join(os.path.dirname(ROOT), "bench-data")))
    a = p.parse_args()
    with open(os.path.abspath(__file__), "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:8]
    baseline = os.path.join(ROOT, "bench", "baselines", "naive_merge_orjson.py")
    print("| shape | MB | syncctl merge (median) | orjson merge (median) | faster |")
    print("|---|---|---|---|---|")
    for shape in a.shapes.split(","):
        folder = os.path.join(a.data, "shapes", f"{shape}-{digest}")
        if not os.path.isdir(folder):
            print(f"generating {shape} into {folder}", file=sys.stderr)
            generate(folder, shape)
        files = sorted(glob.glob(os.path.join(folder, "*.json")))
        megabytes = sum(os.path.getsize(f) for f in files) / 1e6
        work = tempfile.mkdtemp(prefix="snapshotsync-shapes-")
        try:
            ours, theirs = [], []
            for run in range(a.runs):
                shared, state = os.path.join(work, f"shared-{run}"), os.path.join(work, f"state-{run}")
                os.makedirs(shared)
                for f in files:
                    shutil.copy(f, shared)
                os.sync()
                ours.append(timed([a.syncctl, "merge", "--shared", shared, "--state", state, "--device", "bench", "--json"]))
                theirs.append(timed([sys.executable, baseline, folder, os.path.join(work, "orjson.json")]))
                # The runs' copies and stores are removed at the end, not here: files created
                # within ~30 s of deletions cost more on ext4 without a journal (see bench/run.py's
                # cold case).
            m, o = statistics.median(ours), statistics.median(theirs)
            print(f"| {shape} | {megabytes:.0f} | {m * 1000:.0f} ms | {o * 1000:.0f} ms | {o / m:.1f}× |", flush=True)
        finally:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
