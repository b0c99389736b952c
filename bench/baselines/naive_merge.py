#!/usr/bin/env python3
"""The merge a user would script instead of SnapshotSync: a plain baseline for bench/run.py.

Reads every *.json snapshot in DIR, groups the records by id and keeps, for each id, the one
with the newest lastModified (records without one, or with null, count as oldest; compared as
strings; on a tie the one read last wins, as in naive_merge.jq). No version vectors, no conflicts, no validation, no store: writes the merged records as
one JSON document to OUT (or standard output). bench/run.py runs it as the case "python-json";
naive_merge_orjson.py is the same merge with orjson (the case "python").

  python3 bench/baselines/naive_merge.py DIR [OUT]
"""
import glob, json, os, sys


def main():
    folder = sys.argv[1]
    newest = {}
    for path in sorted(glob.glob(os.path.join(folder, "*.json"))):
        with open(path, encoding="utf-8") as f:
            for record in json.load(f)["records"]:
                kept = newest.get(record["id"])
                if kept is None or (record.get("lastModified") or "") >= (kept.get("lastModified") or ""):
                    newest[record["id"]] = record
    out = open(sys.argv[2], "w", encoding="utf-8") if len(sys.argv) > 2 else sys.stdout
    with out:
        json.dump({"records": list(newest.values())}, out, ensure_ascii=False, separators=(",", ":"))


if __name__ == "__main__":
    main()
