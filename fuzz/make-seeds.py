#!/usr/bin/env python3
"""Makes the fuzz targets' seed corpora from the conformance vectors and samples/shared.

    python3 fuzz/make-seeds.py --vectors ../shared/spec/vectors --samples samples/shared --out .build-fuzz/seeds

One folder per target under --out, each seed named by the SHA-1 of its bytes (as libFuzzer names
its own), so running it again changes nothing. scripts/fuzz.sh runs it before each run; the
seeds are made, not kept in git (the vectors stay the one copy of their data).
"""

import argparse
import hashlib
import json
import os
import re
import shutil

UUID = re.compile(rb"[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}")
PART_NAME = re.compile(r"^(.+)\.([0-9A-F]{1,4})(\.json|[ (].*|_conflict-.*|\.sync-conflict-.*)$")
# Snapshot files larger than this are cut to their first records (libFuzzer's -max_len for the reader is 4 KiB).
LARGEST_SNAPSHOT = 3 * 1024


def regular_files(folder):
    """The regular files directly in `folder` (no links, no directories), sorted, with their bytes."""
    if not os.path.isdir(folder):
        return []
    found = []
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if os.path.isfile(path) and not os.path.islink(path):
            with open(path, "rb") as handle:
                found.append((name, handle.read()))
    return found


def shared_folders(vectors, samples):
    """Every shared folder of the vectors (merge and random inputs) and the samples."""
    folders = []
    for group in ("merge", "random"):
        base = os.path.join(vectors, group)
        for case in sorted(os.listdir(base)) if os.path.isdir(base) else []:
            folders.append(os.path.join(base, case, "input"))
    folders.append(samples)
    return folders


def cut(data):
    """A large snapshot cut to its first records, written as SnapshotSync writes; None if not JSON."""
    try:
        document = json.loads(data)
    except ValueError:
        return None
    if not isinstance(document, dict) or not isinstance(document.get("records"), list):
        return None
    records = document.pop("records")
    head = json.dumps(document, separators=(",", ":"))[:-1]
    pieces, size = [], len(head)
    for record in records:
        line = json.dumps(record, separators=(",", ":"))
        if size + len(line) > LARGEST_SNAPSHOT and pieces:
            break
        pieces.append(line)
        size += len(line) + 2
    return (head + ',"records":[\n' + ",\n".join(pieces) + "\n]}\n").encode()


def seeds(vectors, samples):
    """Each target's seeds, as {target: [bytes]}."""
    made = {"json": [], "reader": [], "timestamp": [], "recordid": [], "filename": []}
    for folder in ("input", "output", "invalid"):
        made["json"] += [data for _, data in regular_files(os.path.join(vectors, "jcs", folder))]
    ids = set()
    for folder in shared_folders(vectors, samples):
        for name, data in regular_files(folder):
            ids.update(UUID.findall(data))
            if len(data) > LARGEST_SNAPSHOT:
                data = cut(data)
                if data is None:
                    continue
            made["reader"].append(data)
            if len(data) <= 4096:
                made["json"].append(data)
            # The file's name with the device and part inside, for the file-name rules.
            try:
                top = json.loads(data)
                device = top.get("device") if isinstance(top, dict) else None
                part = top.get("part", "") if isinstance(top, dict) else ""
            except ValueError:
                device, part = None, ""
            if isinstance(device, str):
                made["filename"].append(f"{name}\n{device}\n{part if isinstance(part, str) else ''}".encode())
    with open(os.path.join(vectors, "timestamps.json"), encoding="utf-8") as handle:
        for case in json.load(handle):
            text = case["input"] if isinstance(case["input"], str) else json.dumps(case["input"])
            made["timestamp"].append(text.encode())
    with open(os.path.join(vectors, "filenames.json"), encoding="utf-8") as handle:
        for case in json.load(handle):
            match = PART_NAME.match(case["name"])
            part = match.group(2) if match and match.group(1) == case["deviceInside"] else ""
            made["filename"].append(f"{case['name']}\n{case['deviceInside']}\n{part}".encode())
    for uuid in sorted(ids)[:64]:
        made["recordid"] += [uuid, uuid.lower(), uuid.upper()]
    return made


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vectors", required=True, help="the conformance vectors (shared/spec/vectors)")
    parser.add_argument("--samples", required=True, help="the bundled sample folder (samples/shared)")
    parser.add_argument("--out", required=True, help="where the targets' seed folders go")
    arguments = parser.parse_args()
    for target, inputs in seeds(arguments.vectors, arguments.samples).items():
        folder = os.path.join(arguments.out, target)
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(folder)
        for data in inputs:
            with open(os.path.join(folder, hashlib.sha1(data).hexdigest()), "wb") as handle:
                handle.write(data)


if __name__ == "__main__":
    main()
