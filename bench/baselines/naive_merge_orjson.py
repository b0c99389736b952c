#!/usr/bin/env python3
"""The merge a user would script instead of SnapshotSync, as fast as a scripter gets it: the
main plain baseline for bench/run.py (case "python").

The same naive merge as naive_merge.py (the stdlib-json version, case "python-json"): reads
every *.json in DIR (one-file snapshots and format 2 parts alike: every file has "records"),
groups the records by id and keeps, for each id, the one with the newest lastModified (records
without one, or with null, count as oldest; compared as strings; on a tie the one read last
wins, as in naive_merge.jq). No version vectors, no conflicts, no validation, no store: writes
the merged records as one JSON document to OUT (or standard output). Parsing and writing go
through orjson (Rust, SIMD), single-threaded.

  python3 bench/baselines/naive_merge_orjson.py DIR [OUT]      # pip install orjson
"""
import glob, os, sys

import orjson


def main():
    folder = sys.argv[1]
    newest = {}  # id -> (lastModified, record)
    for path in sorted(glob.glob(os.path.join(folder, "*.json"))):
        with open(path, "rb") as f:
            records = orjson.loads(f.read())["records"]
        for record in records:
            stamp = record.get("lastModified") or ""
            kept = newest.get(record["id"])
            if kept is None or stamp >= kept[0]:
                newest[record["id"]] = (stamp, record)
        del records
    data = orjson.dumps({"records": [record for _, record in newest.values()]})
    if len(sys.argv) > 2:
        with open(sys.argv[2], "wb") as out:
            out.write(data)
    else:
        sys.stdout.buffer.write(data)


if __name__ == "__main__":
    main()
