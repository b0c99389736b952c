#!/usr/bin/env python3
"""Times `syncctl merge` on shared folders of hostile shapes, each at two sizes, N and 10N.

A file in the shared folder is input from anyone who can write there. Each shape below is
written at size N and 10N into a folder of its own, then merged by a fresh device:

  syncctl merge --shared FOLDER --state STATE --device bench

  conflicts        one record with N concurrent versions as conflict entries, each with a
                   device of its own ({"d17": 1})
  conflicts-2dev   one record with N concurrent versions of the same two devices
                   ({"a": i, "b": N - i}): no device of their own to tell them apart
  repeated-id      N versions of one id repeated across one file, each a record of its own
  wide-vector      one record whose vector, and its one conflict's, hold N devices
  conflict-copies  N sync-tool conflict copies of one device's file, each an older version
  long-strings     one record with a field name and a field value of N/2 KB each
  files            N device files of one record each

Growth from N to 10N is what matters: near 10 is linear, near 100 quadratic. Each run is
stopped after --timeout seconds (60 by default); when the run at N was stopped, or its time
times 100 (quadratic growth) would pass the timeout by far, the 10N run is skipped and the
table says so. Memory is the run's peak resident set.

  python3 bench/adversarial.py --syncctl .build/release/syncctl [--json out.json]
      [--only conflicts,files] [--size conflicts=10000] [--timeout 60] [--work DIR] [--keep]

The same arguments give the same folders. Files are format 1, which every reader reads.
"""
import argparse, json, os, shutil, signal, subprocess, sys, tempfile, time, uuid

BASE_MS = 1795000000000  # 2026-11-18T11:06:40Z: in the past, so no clock warnings
RECORD_ID = "3F2504E0-4F89-41D3-9A0C-0305E82C3301"

# Each shape's N by default: the format 1 binary merges each in well under a minute at N.
DEFAULT_SIZES = {
    "conflicts": 1000, "conflicts-2dev": 1000, "repeated-id": 1000, "wide-vector": 1000,
    "conflict-copies": 100, "long-strings": 1000, "files": 100,
}
UNITS = {"long-strings": "KB", "files": "files", "conflict-copies": "copies", "wide-vector": "devices"}


def stamp(ms):
    s, m = divmod(ms, 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(s)) + f".{m:03d}Z"


def version(ms, by, vector, fields, record_id=RECORD_ID):
    return {"id": record_id, "type": "Note", "lastModified": stamp(BASE_MS + ms), "modifiedBy": by,
            "versionVector": vector, "fields": fields}


def snapshot(device, records, generation=1):
    return {"format": 1, "device": device, "generation": generation, "writtenAt": stamp(BASE_MS), "records": records}


def write(folder, name, document):
    """Writes one JSON file as a device would: a dot-prefixed temporary file renamed into place."""
    temporary = os.path.join(folder, "." + name + ".tmp")
    with open(temporary, "w", encoding="utf-8") as out:
        json.dump(document, out, ensure_ascii=False, separators=(",", ":"))
    os.replace(temporary, os.path.join(folder, name))


def make_conflicts(folder, n):
    conflicts = [version(i, f"d{i}", {f"d{i}": 1}, {"n": i}) for i in range(n)]
    top = version(n, "peer", {"peer": 1}, {"n": -1})
    write(folder, "peer.json", snapshot("peer", [dict(top, conflicts=conflicts)]))


def make_conflicts_2dev(folder, n):
    conflicts = [version(i, "a", {"a": i + 1, "b": n - i}, {"n": i}) for i in range(n)]
    top = version(n, "b", {"a": n + 1, "b": 1}, {"n": -1})
    write(folder, "peer.json", snapshot("peer", [dict(top, conflicts=conflicts)]))


def make_repeated_id(folder, n):
    write(folder, "peer.json", snapshot("peer", [version(i, f"d{i}", {f"d{i}": 1}, {"n": i}) for i in range(n)]))


def make_wide_vector(folder, n):
    wide = {f"d{i}": 2 for i in range(n)}
    top = version(1, "d0", dict(wide, d0=3, d1=1), {"n": 1})
    conflict = version(0, "d1", dict(wide, d0=1, d1=3), {"n": 0})
    write(folder, "peer.json", snapshot("peer", [dict(top, conflicts=[conflict])]))


def make_conflict_copies(folder, n):
    ids = [str(uuid.UUID(int=(0x1000 + k) << 64)).upper() for k in range(10)]
    for copy in range(n + 1):
        records = [version(copy, "peer", {"peer": copy + 1}, {"copy": copy}, record_id=rid) for rid in ids]
        name = "peer.json" if copy == n else f"peer.sync-conflict-20261128-{copy:06d}-ABCDEFG.json"
        write(folder, name, snapshot("peer", records, generation=copy + 1))


def make_long_strings(folder, n):
    # Escapes and non-ASCII text on the way, so that the parser's slow paths are part of it.
    chunk = "Crème fraîche \"quoted\" line\\n 寿司 ☕ tab\t end. "
    half = n * 512
    text = (chunk * (half // len(chunk) + 1))[:half]
    name = ("k" * 64 + "-") * (half // 65 + 1)
    write(folder, "peer.json", snapshot("peer", [version(0, "peer", {"peer": 1}, {name[:half]: text})]))


def make_files(folder, n):
    for i in range(n):
        rid = str(uuid.UUID(int=(0x2000 + i) << 64)).upper()
        write(folder, f"dev-{i}.json", snapshot(f"dev-{i}", [version(i, f"dev-{i}", {f"dev-{i}": 1}, {"n": i}, rid)]))


SHAPES = {
    "conflicts": make_conflicts, "conflicts-2dev": make_conflicts_2dev, "repeated-id": make_repeated_id,
    "wide-vector": make_wide_vector, "conflict-copies": make_conflict_copies, "long-strings": make_long_strings,
    "files": make_files,
}


def folder_bytes(folder):
    return sum(os.path.getsize(os.path.join(folder, name)) for name in os.listdir(folder))


def run_merge(syncctl, shared, state, timeout):
    """Runs one merge; returns (seconds, exit status or None when stopped, peak RSS in KB, stderr's last line)."""
    with tempfile.TemporaryFile() as stderr:
        started = time.monotonic()
        process = subprocess.Popen(
            [syncctl, "merge", "--shared", shared, "--state", state, "--device", "bench"],
            stdout=subprocess.DEVNULL, stderr=stderr, start_new_session=True)
        status = None
        while True:
            # wait4 gives this child's own peak memory, where getrusage would give every child's.
            pid, raw, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                status = os.waitstatus_to_exitcode(raw)
                break
            if time.monotonic() - started > timeout:
                os.killpg(process.pid, signal.SIGKILL)
                _, _, usage = os.wait4(process.pid, 0)
                break
            time.sleep(0.005)
        seconds = time.monotonic() - started
        process.returncode = status if status is not None else -signal.SIGKILL
        stderr.seek(0)
        lines = stderr.read().decode("utf-8", "replace").strip().splitlines()
    return seconds, status, usage.ru_maxrss, (lines[-1][:200] if lines else "")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--syncctl", required=True, help="the syncctl binary to time")
    p.add_argument("--json", help="write the results to this file as JSON")
    p.add_argument("--only", help="comma-separated shapes (default: all)")
    p.add_argument("--size", action="append", default=[], help="SHAPE=N: the smaller size of a shape")
    p.add_argument("--timeout", type=float, default=60, help="seconds before a run is stopped (default 60)")
    p.add_argument("--work", help="where to write the folders (default: a temporary directory)")
    p.add_argument("--keep", action="store_true", help="keep the folders afterwards")
    a = p.parse_args()

    sizes = dict(DEFAULT_SIZES)
    for given in a.size:
        shape, _, n = given.partition("=")
        if shape not in SHAPES or not n.isdigit():
            p.error(f"--size {given}: expected SHAPE=N with SHAPE one of {', '.join(SHAPES)}")
        sizes[shape] = int(n)
    shapes = a.only.split(",") if a.only else list(SHAPES)
    for shape in shapes:
        if shape not in SHAPES:
            p.error(f"unknown shape {shape}: choose from {', '.join(SHAPES)}")
    syncctl = os.path.abspath(a.syncctl)
    work = a.work or tempfile.mkdtemp(prefix="adversarial-")
    os.makedirs(work, exist_ok=True)

    results = []
    print(f"{'shape':<16} {'size':>16} {'bytes':>12} {'seconds':>9} {'growth':>7} {'peak MB':>8}  exit / note", flush=True)
    try:
        for shape in shapes:
            previous = None
            for n in (sizes[shape], 10 * sizes[shape]):
                unit = UNITS.get(shape, "versions")
                row = {"shape": shape, "n": n, "unit": unit}
                if previous is not None and (previous["status"] is None or previous["seconds"] * 100 > 10 * a.timeout):
                    row.update(status=None, seconds=None, note=(
                        f"skipped: {previous['n']} took {previous['seconds']:.1f} s, "
                        f"{10 * previous['n']} could take up to 100 times that"))
                    results.append(row)
                    print(f"{shape:<16} {n:>10,} {unit:<5} {'':>12} {'':>9} {'':>7} {'':>8}  {row['note']}", flush=True)
                    continue
                shared = os.path.join(work, f"{shape}-{n}", "shared")
                state = os.path.join(work, f"{shape}-{n}", "state")
                shutil.rmtree(os.path.dirname(shared), ignore_errors=True)
                os.makedirs(shared)
                SHAPES[shape](shared, n)
                row["bytes"] = folder_bytes(shared)
                seconds, status, rss, tail = run_merge(syncctl, shared, state, a.timeout)
                row.update(seconds=round(seconds, 3), status=status, peak_rss_kb=rss)
                row["note"] = f"stopped after {a.timeout:.0f} s" if status is None else (f"exit {status}" + (f": {tail}" if status else ""))
                growth = f"{seconds / previous['seconds']:.1f}x" if previous and previous.get("seconds") else ""
                print(f"{shape:<16} {n:>10,} {unit:<5} {row['bytes']:>12,} {seconds:>9.3f} {growth:>7} {rss / 1024:>8.0f}  {row['note']}", flush=True)
                results.append(row)
                previous = row
                if not a.keep:
                    shutil.rmtree(os.path.dirname(shared), ignore_errors=True)
    finally:
        if not a.keep and not a.work:
            shutil.rmtree(work, ignore_errors=True)
    if a.json:
        with open(a.json, "w") as out:
            json.dump({"syncctl": syncctl, "timeout": a.timeout, "results": results}, out, indent=2)
            out.write("\n")


if __name__ == "__main__":
    main()
