#!/usr/bin/env python3
"""Checks syncctl's merge against bench/reference_merge.py, an independent reading of the
contract (../shared/spec/snapshot-format.md), on folders from any generator.

For each folder:
  (a) copies it (links, FIFOs and all, `cp -a`) into a temporary directory and runs
      `SYNCCTL merge --shared COPY --state STATE --device zzcheck --json` with a fresh state and
      an empty configuration (exit status 0, or 3 when some file or record was rejected);
  (b) reads what zzcheck published into COPY (`zzcheck.json` or its parts `zzcheck.<prefix>.json`,
      format 2, signed): its whole merged view, each record with its conflicts. The files are
      checked too: accepted by the reference reader, every id once, in its part, prefixes that
      are leaves of one tree covering every id, ids in upper case and timestamps in the written
      form (and, as notes, record lines that are not the RFC 8785 form of their normal form);
  (c) runs the reference merge on the ORIGINAL folder;
  (d) compares id by id: the set of ids, the winner's normal form and the conflicts' normal
      forms in order (as RFC 8785 bytes), and which files merged (the --json report).
Prints a summary and the first differences in full (both sides); exits 1 on any difference.

    python3 bench/spec_check.py FOLDER [FOLDER ...] [--incremental]
    python3 bench/spec_check.py --generate [--vectors] [--quick] [--hostile-only] [--incremental] [--keep]
    python3 bench/spec_check.py --vectors

--generate builds folders under a /tmp/speccheck-gen-* directory (removed at the end unless
--keep): bench/generate.py at a few seeds, sizes (3 devices x 3,000 and x 20,000), styles
(uniform, varied) and layouts (file, parts of 1, 2 and 3 digits); bench/shapes.py's shapes
made small (its SHAPES table is patched in memory, the file is not touched; at most 3 devices);
hand-made hostile folders (spellings of one version, the JCS tie-break, vector-less versions,
dominated conflict entries, sync-tool copies and misnamed files, parts, file-level I-JSON rules
and formats, timestamps, record validation, string bytes at every alignment, number literals,
duplicate keys, lines laid out like SnapshotSync's but not in normal form, one record's bytes in
good and bad files, large counts and a wide antichain, deep nesting, the vectors' file names);
randomized folders (random versions spread over files and conflict entries, each copy spelled
anew); and three 10 MB files read in pieces. The folder hostile-ambiguous holds readings the
contract leaves open: their differences are shown but do not fail the run.
--vectors adds the contract's conformance vector folders (merge/*, random/*).
--quick leaves out the 20,000-record folders.
--incremental also merges every folder in two stages with one state (first an earlier state of
it: a third of its files missing, the rest with 60 % of their records) and, with --generate,
three random folders that share ids in three stages; these are compared with the reference's
merge_stages (the store's versions merged with each stage's).
Only one syncctl runs at a time.
"""
import argparse
import glob
import importlib.util
import json
import os
import random
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # leave no __pycache__ in bench/
import reference_merge as R  # noqa: E402

DEFAULT_SYNCCTL = os.path.join(ROOT, ".build-static", "release", "syncctl")
# The conformance vectors: $SNAPSHOT_VECTORS, else ../shared/spec/vectors beside the repository
# (where the tests look too).
VECTORS = os.environ.get("SNAPSHOT_VECTORS") or os.path.join(os.path.dirname(ROOT), "shared", "spec", "vectors")


# ---------------------------------------------------------------------------------------------
# Running syncctl and reading what it published


def syncctl_env(work):
    env = {k: v for k, v in os.environ.items() if not k.startswith("SYNCD_")}
    env.update(HOME=work, XDG_STATE_HOME=os.path.join(work, "xdg-state"),
               XDG_CONFIG_HOME=os.path.join(work, "xdg-config"))
    return env


def copy_into(src_folder, dest, names=None):
    """cp -a (links, FIFOs and directories as they are), then make the copy writable."""
    names = sorted(os.listdir(src_folder)) if names is None else names
    if names:
        subprocess.run(["cp", "-a", "--"] + [os.path.join(src_folder, n) for n in names] + [dest + "/"], check=True)
    for dirpath, dirnames, filenames in os.walk(dest):  # vector folders are read-only
        os.chmod(dirpath, os.lstat(dirpath).st_mode | stat.S_IWUSR | stat.S_IXUSR | stat.S_IRUSR)


def merge_once(syncctl, copy, work, device, timeout):
    """One `syncctl merge` of copy with the state under work. Returns (rc, stdout, stderr)."""
    config = os.path.join(work, "config.json")
    if not os.path.exists(config):
        with open(config, "w") as f:
            f.write("{}\n")
    argv = [syncctl, "merge", "--shared", copy, "--state", os.path.join(work, "state"),
            "--device", device, "--config", config, "--json"]
    try:
        done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=syncctl_env(work), timeout=timeout)
        return done.returncode, done.stdout.decode("utf-8", "replace"), done.stderr.decode("utf-8", "replace")
    except subprocess.TimeoutExpired as e:
        return None, (e.stdout or b"").decode("utf-8", "replace"), (e.stderr or b"").decode("utf-8", "replace")


def run_syncctl(syncctl, folder, work, device, timeout):
    """Copy folder into work/shared, merge there as `device`. Returns (rc, stdout, stderr, copy)."""
    copy = os.path.join(work, "shared")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(copy)
    copy_into(folder, copy)
    return merge_once(syncctl, copy, work, device, timeout) + (copy,)


def run_syncctl_stages(syncctl, stages, work, device, timeout):
    """Merge stage after stage with one state: before each stage, the files of the previous one
    (not the device's own) are removed and the stage's files copied in, as a sync tool would
    replace, add and delete them. Returns (rcs, last stdout, all stderr, copy)."""
    copy = os.path.join(work, "shared")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(copy)
    rcs, err_all, out = [], "", ""
    for folder in stages:
        for name in os.listdir(copy):
            if not (name.startswith(device + ".") or name.startswith("." + device)):
                path = os.path.join(copy, name)
                if os.path.isdir(path) and not os.path.islink(path):
                    shutil.rmtree(path)
                else:
                    os.unlink(path)
        copy_into(folder, copy)
        rc, out, err = merge_once(syncctl, copy, work, device, timeout)
        rcs.append(rc)
        err_all += err
    return rcs, out, err_all, copy


def union_folder(stages, dest):
    """The last stage's files, and each earlier stage's files that differ, renamed as sync-tool
    copies of themselves ("x (stage1).json"): a folder whose one-shot merge is what a device that
    merged every stage in turn holds (for writers that keep the clock rule)."""
    os.makedirs(dest)
    last = stages[-1]
    copy_into(last, dest)
    for k, folder in enumerate(stages[:-1], 1):
        for name in sorted(os.listdir(folder)):
            src = os.path.join(folder, name)
            if not name.endswith(".json") or name.startswith(".") or not stat.S_ISREG(os.lstat(src).st_mode):
                continue
            final = os.path.join(last, name)
            if os.path.exists(final) and stat.S_ISREG(os.lstat(final).st_mode):
                with open(src, "rb") as a, open(final, "rb") as b:
                    if a.read() == b.read():
                        continue
            shutil.copyfile(src, os.path.join(dest, name[:-5] + f" (stage{k}).json"))
    return dest


def read_published(copy, device):
    """What `device` published: id -> (winner nf, [conflict nfs]), and a list of problems."""
    problems, result, where = [], {}, {}
    names = sorted(n for n in os.listdir(copy)
                   if n == device + ".json" or re.fullmatch(re.escape(device) + r"\.[0-9A-F]{1,4}\.json", n))
    if not names:
        return result, [f"{device} published no file"], names
    prefixes = []
    for name in names:
        with open(os.path.join(copy, name), "rb") as f:
            data = f.read()
        try:
            doc, dev, part = R.read_file_bytes(name, data)
        except (R.SkipFile, R.RejectFile) as e:
            problems.append(f"published {name} is not accepted by the reference reader: {e}")
            continue
        if part is not None:
            prefixes.append(part)
        for i, rec in enumerate(doc["records"]):
            try:
                nf = R.normal_form(rec)
            except R.BadVersion as e:
                problems.append(f"published {name} record {i} invalid: {e}")
                continue
            rid = nf["id"]
            spelled = spelling_problems(rec)
            conflicts = []
            for j, entry in enumerate(rec.get("conflicts") or []):
                try:
                    cnf = R.normal_form(entry, is_entry=True)
                    if cnf["id"] != rid:
                        raise R.BadVersion("another id")
                    conflicts.append(cnf)
                    spelled += spelling_problems(entry)
                except R.BadVersion as e:
                    problems.append(f"published {name} record {rid} conflict {j} invalid: {e}")
            for s in spelled:
                problems.append(f"published {name} record {rid}: {s}")
            if part is not None and not rid.startswith(part):
                problems.append(f"published {name} holds {rid}, outside its part")
            if rid in result:
                problems.append(f"published {rid} twice ({where[rid]} and {name})")
            result[rid] = (nf, conflicts)
            where[rid] = name
    if prefixes:
        if len(names) != len(prefixes):
            problems.append(f"published both a whole file and parts: {names}")
        for p in prefixes:
            for q in prefixes:
                if p != q and q.startswith(p):
                    problems.append(f"published prefixes {p} and {q} overlap")
        if sum(16 ** (4 - len(p)) for p in set(prefixes)) != 16 ** 4:
            problems.append(f"published prefixes do not cover every id: {sorted(prefixes)}")
    return result, problems, names


def spelling_problems(obj):
    """A writer writes ids in upper case and timestamps in the written form."""
    out = []
    if isinstance(obj.get("id"), str) and obj["id"] != obj["id"].upper():
        out.append(f"id written as {obj['id']!r}")
    lm = obj.get("lastModified")
    if isinstance(lm, str):
        ms = R.parse_timestamp(lm)
        if ms is not None and R.written_form(ms) != lm:
            out.append(f"lastModified written as {lm!r}, not {R.written_form(ms)!r}")
    return out


# ---------------------------------------------------------------------------------------------
# Comparing


def canon(nf):
    return R.jcs(nf).decode("utf-8")


def compare(ref, got):
    """Differences between the reference merge and syncctl's published view."""
    diffs = []
    for rid in sorted(set(ref) | set(got)):
        if rid not in got:
            w, c = ref[rid]
            diffs.append(("missing in syncctl", rid, show(w, c), None))
        elif rid not in ref:
            w, c = got[rid]
            diffs.append(("extra in syncctl", rid, None, show(w, c)))
        else:
            rw, rc = ref[rid]
            gw, gc = got[rid]
            if canon(rw) != canon(gw):
                diffs.append(("winner differs", rid, show(rw, rc), show(gw, gc)))
            elif [canon(x) for x in rc] != [canon(x) for x in gc]:
                diffs.append(("conflicts differ", rid, show(rw, rc), show(gw, gc)))
    return diffs


def show(winner, conflicts, width=4000):
    def cut(text):
        return text if len(text) <= width else text[:width] + f"... ({len(text)} characters)"
    return "winner:    " + cut(canon(winner)) + "".join(f"\n  conflict {i}: " + cut(canon(c)) for i, c in enumerate(conflicts))


def file_statuses(stdout):
    """name -> status from syncctl's --json report (merged, skipped, rejected, ...)."""
    try:
        report = json.loads(stdout)
    except ValueError:
        return None
    out = {s.get("name"): s.get("status") for s in report.get("sources", [])}
    for name in report.get("ignoredNames", []) or []:
        out.setdefault(name, "ignored")
    return out


def make_stage1(folder, dest, seed):
    """An earlier state of folder, for --incremental: about a third of its files missing, the rest
    holding a random 60 % of their records (and of those records' conflict entries), rewritten
    compactly; files that are not valid snapshots are kept as they are or left out."""
    rng = random.Random(seed)
    os.makedirs(dest)
    for name in sorted(os.listdir(folder)):
        src = os.path.join(folder, name)
        if rng.random() < 0.33:
            continue
        if not name.endswith(".json") or name.startswith(".") or not stat.S_ISREG(os.lstat(src).st_mode):
            copy_into(folder, dest, [name])
            continue
        with open(src, "rb") as f:
            data = f.read()
        try:
            doc = R.strict_loads(data)
            records = doc["records"]
            assert isinstance(records, list)
        except Exception:
            copy_into(folder, dest, [name])
            continue
        kept = []
        for rec in records:
            if rng.random() < 0.4:
                continue
            if isinstance(rec, dict) and isinstance(rec.get("conflicts"), list):
                rec = dict(rec, conflicts=[e for e in rec["conflicts"] if rng.random() < 0.7])
            kept.append(rec)
        doc["records"] = kept
        text = json.dumps(doc, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        with open(os.path.join(dest, name), "w", encoding="utf-8") as f:
            f.write(text + "\n")
    return dest


def check_folder(folder, args, label=None, stages=None):
    """Merge folder with syncctl (or, with stages, each stage in turn with one state) and compare
    what it published with the reference merge of folder (for stages, of their union)."""
    label = label or folder
    work = tempfile.mkdtemp(prefix="speccheck-run-", dir=args.tmp)
    try:
        sources = stages or [folder]
        existing = [n for f in sources for n in os.listdir(f) if n.startswith(args.device)]
        if existing:
            return {"label": label, "ids": 0, "conflicted": 0, "versions": 0,
                    "diffs": [("setup", "-", f"folder already holds {existing}", None)], "notes": []}
        t0 = time.time()
        if stages:
            rcs, out, err, copy = run_syncctl_stages(args.syncctl, stages, work, args.device, args.timeout)
        else:
            rc, out, err, copy = run_syncctl(args.syncctl, folder, work, args.device, args.timeout)
            rcs = [rc]
        t1 = time.time()
        statuses = {}
        diffs, notes = [], []
        if stages:
            ref = R.merge_stages(stages)
            union = R.merge_folder(union_folder(stages, os.path.join(work, "union")))[0]
            if union != ref:
                notes.append(f"merging the stages in turn differs from merging them at once for "
                             f"{sum(1 for k in set(ref) | set(union) if ref.get(k) != union.get(k))} ids "
                             f"(writers that break the clock rule): compared with the former")
        else:
            ref, report = R.merge_folder(folder, statuses=statuses)
        t2 = time.time()
        for rc in rcs:
            if rc not in (0, 3):
                diffs.append(("syncctl exit status", "-", "0 or 3", f"{rc}\nstderr: {err.strip()[:3000]}"))
        if err.strip():
            notes.append("stderr: " + err.strip()[:600].replace("\n", "\n        "))
        got, problems, names = read_published(copy, args.device)
        for p in problems:
            diffs.append(("published file", "-", None, p))
        diffs += compare(ref, got)
        notes += published_spelling_notes(copy, names)
        sync_status = file_statuses(out)
        if stages:
            pass  # the last run's report covers only what changed
        elif sync_status is not None:
            for name in sorted(set(statuses) | set(sync_status)):
                r = statuses.get(name, "not considered")
                s = sync_status.get(name, "not listed")
                if (r == "merged") != (s == "merged") and not (r == "ignored" and s == "not listed"):
                    diffs.append(("file status", name, r, s))
                elif r not in ("merged", "ignored") and s not in ("merged", "ignored", "not listed") and r != s:
                    notes.append(f"{name}: reference says {r}, syncctl says {s}")
        else:
            notes.append("syncctl --json output not readable")
        return {"label": label, "ids": len(ref), "conflicted": sum(1 for w, c in ref.values() if c),
                "versions": sum(1 + len(c) for w, c in ref.values()), "diffs": diffs, "notes": notes,
                "rc": rcs[-1] if len(rcs) == 1 else rcs, "times": (t1 - t0, t2 - t1), "published": len(names)}
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"  kept {work}")


def number_tokens(text):
    """The number literals of a JSON text, outside strings."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            i += 1
            while text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            i += 1
        elif c in "-0123456789":
            j = i + 1
            while j < n and text[j] in "0123456789.eE+-":
                j += 1
            out.append(text[i:j])
            i = j
        else:
            i += 1
    return out


def published_spelling_notes(copy, names, limit=3):
    """Notes (not differences) when a published record line is not the RFC 8785 form of its
    normal form (numbers as ECMAScript writes them, except integral values beyond 2^53-1, which a
    file may only hold with an exponent)."""
    notes, count = [], 0
    for name in names:
        with open(os.path.join(copy, name), "rb") as f:
            lines = f.read().decode("utf-8", "replace").split("\n")
        for line in lines[1:]:
            line = line.rstrip(",")
            if not line.startswith("{"):
                continue
            try:
                obj = R.strict_loads(line.encode("utf-8"))
                nf = R.normal_form(obj)
                conflicts = [R.normal_form(e, is_entry=True) for e in obj.get("conflicts") or []]
            except (R.InvalidJSON, R.BadVersion):
                continue
            if conflicts:
                nf["conflicts"] = conflicts
            want = R.jcs(nf).decode("utf-8")
            ok = True
            toks_got, toks_want = number_tokens(line), number_tokens(want)
            if len(toks_got) != len(toks_want):
                ok = False
            else:
                for g, w in zip(toks_got, toks_want):
                    if g != w and not (float(g) == float(w) and abs(float(g)) > R.MAX_SAFE and float(g).is_integer()):
                        ok = False
            if ok:
                # compare the rest with each number replaced by its JCS form
                ok = re.sub(r"(?<=[:\[,])-?[0-9][0-9.eE+-]*", "#", line) == re.sub(r"(?<=[:\[,])-?[0-9][0-9.eE+-]*", "#", want)
            if not ok:
                count += 1
                if count <= limit:
                    notes.append(f"published line not in RFC 8785 form ({name}):\n          got:  {line[:600]}\n          want: {want[:600]}")
    if count > limit:
        notes.append(f"... {count} published lines not in RFC 8785 form in all")
    return notes


# ---------------------------------------------------------------------------------------------
# Generated folders


def gen_generate_py(root, quick):
    plans = [
        ("gen-uniform-file-3k-s11", 3000, 11, "uniform", "file", []),
        ("gen-varied-file-3k-s12", 3000, 12, "varied", "file", []),
        ("gen-varied-parts-3k-s13", 3000, 13, "varied", "parts", []),
        ("gen-uniform-parts1-3k-s14", 3000, 14, "uniform", "parts", ["--part-digits", "1"]),
        ("gen-varied-file-idorder-3k-s15", 3000, 15, "varied", "file", ["--id-order"]),
        ("gen-varied-parts3-3k-s16", 3000, 16, "varied", "parts", ["--part-digits", "3"]),
    ]
    if not quick:
        plans += [
            ("gen-varied-file-20k-s21", 20000, 21, "varied", "file", []),
            ("gen-varied-parts-20k-s22", 20000, 22, "varied", "parts", []),
            ("gen-uniform-file-20k-s23", 20000, 23, "uniform", "file", []),
        ]
    out = []
    for name, records, seed, style, layout, extra in plans:
        path = os.path.join(root, name)
        subprocess.run([sys.executable, os.path.join(HERE, "generate.py"), path, "--devices", "3",
                        "--records", str(records), "--seed", str(seed), "--style", style,
                        "--layout", layout] + extra, check=True, stdout=subprocess.DEVNULL)
        out.append(path)
    return out


def gen_shapes(root, quick):
    spec = importlib.util.spec_from_file_location("bench_shapes", os.path.join(HERE, "shapes.py"))
    shapes = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(shapes)
    sizes = {"small": 6000, "text": 1500, "many": 3000, "numbers": 3000, "pretty": 4000}
    out = []
    for name, (devices, count, fields, indent) in list(shapes.SHAPES.items()):
        small = (min(devices, 3), min(count, sizes.get(name, 2000) // (3 if quick else 1)), fields, indent)
        shapes.SHAPES[name] = small  # in memory only
        path = os.path.join(root, f"shape-{name}")
        shapes.generate(path, name, seed=7)
        out.append(path)
    return out


# ---------------------------------------------------------------------------------------------
# Hand-made hostile folders

def uid(n, tag=0xA):
    return f"{n:08X}-{tag:04X}-4000-8000-{n:012X}"


def J(obj):
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def snapshot(device, records, fmt=1, part=None, gen=1, head_extra="", tail=""):
    """A file from record texts (strings, spelled by hand) or objects."""
    texts = [r if isinstance(r, str) else J(r) for r in records]
    head = f'{{"format":{fmt},"device":{J(device)},"generation":{gen}'
    if part is not None:
        head += f',"part":{J(part)}'
    return (head + head_extra + ',"records":[\n' + ",\n".join(texts) + "\n]" + tail + "}\n").encode("utf-8")


def write_folder(root, name, files):
    path = os.path.join(root, name)
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    for fname, content in files.items():
        full = os.path.join(path, fname)
        if isinstance(content, tuple):
            kind = content[0]
            if kind == "symlink":
                os.symlink(content[1], full)
            elif kind == "dir":
                os.makedirs(full)
            elif kind == "fifo":
                os.mkfifo(full)
        else:
            with open(full, "wb") as f:
                f.write(content)
    return path


SIG = ',"signature":"ed25519:' + "A" * 86 + '=="'
KEY = ',"key":"ed25519:' + "B" * 43 + '="'
T0 = "2026-11-22T10:00:00.000Z"


def hostile_spellings(root):
    """The same versions in every file, spelled as different writers spell them."""
    a, b, c = uid(1), uid(2), uid(3)
    d, e, f_ = uid(4), uid(5), uid(6)
    canonical = {
        "a": [
            {"id": a, "type": "Item", "schemaVersion": 2, "lastModified": "2026-11-22T10:00:00.123Z",
             "modifiedBy": "a", "versionVector": {"a": 3, "b": 1},
             "fields": {"n": 100, "x": 1e21, "s": "é😀\u2028", "m": None, "z": -0.0, "q": [1.5, 2]},
             "x-k": {"b": 1, "a": [1.0]}},
            {"id": b, "type": "Legacy", "lastModified": "2026-11-22T10:00:01.000Z", "fields": {"v": 0.1}},
            {"id": c, "type": "Item", "lastModified": "2026-11-22T10:00:02.500Z", "modifiedBy": "b",
             "versionVector": {"b": 2}, "deleted": True},
            {"id": d, "type": "Item", "schemaVersion": 3, "versionVector": {"c": 7}, "fields": {"k": {}}},
            {"id": e, "type": "Ünï", "lastModified": "2016-12-31T23:59:60.250Z", "modifiedBy": "c",
             "versionVector": {"c": 1}, "fields": {"emoji": "\U0001F600", "ctl": "\u0001\u007f\u0085"}, "x-s": "a/b"},
            {"id": f_, "type": "Item", "lastModified": T0, "modifiedBy": "a", "versionVector": {"a": 1},
             "fields": {"big": 9007199254740991, "neg": -9007199254740991, "f": 9007199254740992.0}},
        ]}
    # b: lower-case ids, exponents, \u escapes, spelled-out defaults, nulls, key order shuffled
    bfile = snapshot("b", [
        '{"fields":{"q":[15e-1,2.0],"z":-0,"m":null,"s":"\\u00e9\\ud83d\\ude00\\u2028","x":1E+21,"n":1e2},'
        '"versionVector":{"b":1.0,"a":3e0},"modifiedBy":"a","schemaVersion":2.0,"x-k":{"a":[1],"b":1e0},'
        '"lastModified":"2026-11-22T11:00:00.123456+01:00","conflicts":[],"deleted":false,"id":"' + a.lower() + '","type":"Item"}',
        '{"id":"' + b + '","type":"Legacy","schemaVersion":1,"lastModified":"2026-11-22t10:00:01z",'
        '"modifiedBy":null,"versionVector":{},"deleted":false,"fields":{"v":1e-1},"conflicts":null,"x-removed":null}',
        '{"\\u0069d":"' + c.lower() + '","type":"Item","lastModified":"2026-11-22T05:00:02.5-05:00","modifiedBy":"b",'
        '"versionVector":{"b":2},"deleted":true,"fields":{}}',
        '{"id":"' + d + '","type":"Item","schemaVersion":30e-1,"lastModified":null,"versionVector":{"c":0.7e1},'
        '"fields":{"k":{}},"conflicts":[]}',
        '{"id":"' + e + '","type":"\\u00dcn\\u00ef","lastModified":"2017-01-01T00:00:00.250999Z","modifiedBy":"c",'
        '"versionVector":{"c":1},"fields":{"ctl":"\\u0001\\u007F\\u0085","emoji":"\\uD83D\\uDE00"},"x-s":"a/b"}',
        '{"id":"' + f_ + '","type":"Item","lastModified":"2026-11-22T10:00:00Z","modifiedBy":"a","versionVector":{"a":1},'
        '"fields":{"big":9007199254740991.0,"neg":-9.007199254740991e15,"f":9.007199254740992E15}}',
    ], gen=4)
    # c: indented, CRLF, escaped slashes, other offsets and digit counts
    c_records = [
        '{\r\n  "type" : "Item",\r\n  "id" : "' + a + '",\r\n  "lastModified" : "2026-11-22T10:00:00.1239999Z",\r\n'
        '  "modifiedBy" : "a",\r\n  "versionVector" : { "a" : 3, "b" : 1 },\r\n  "schemaVersion" : 2,\r\n'
        '  "fields" : { "n" : 100.0, "x" : 1000000000000000000000.0, "s" : "é😀\u2028", "m" : null, "z" : -0.0,'
        ' "q" : [ 1.50, 2 ] },\r\n  "x-k" : { "b" : 1, "a" : [ 1.0 ] }\r\n}',
        '{"id":"' + b + '","type":"Legacy","lastModified":"2026-11-22T10:00:01.000+00:00","fields":{"v":0.1000}}',
        '{"id":"' + c + '","type":"Item","lastModified":"2026-11-23T00:00:02.500999+14:00","modifiedBy":"b",'
        '"versionVector":{"b":2},"deleted":true,"fields":null}',
        '{"id":"' + d + '","type":"Item","schemaVersion":3,"versionVector":{"c":7},"fields":{"k":{}},"x-null":null}',
        '{"id":"' + e + '","type":"Ünï","lastModified":"2017-01-01T00:59:60.25+01:00","modifiedBy":"c",'
        '"versionVector":{"c":1},"fields":{"emoji":"\U0001F600","ctl":"\\u0001\u007f\u0085"},"deleted":null,"x-s":"a\\/b"}',
        '{"id":"' + f_.lower() + '","type":"Item","lastModified":"2026-11-22T09:00:00-01:00","modifiedBy":"a",'
        '"versionVector":{"a":1},"fields":{"neg":-9007199254740991,"big":9007199254740991,"f":9007199254740992.000}}',
    ]
    head = '{\r\n  "records" : [\r\n' + ",\r\n".join(c_records) + '\r\n  ],\r\n  "device" : "c",\r\n' \
           '  "format" : 1.0,\r\n  "generation" : 2e0,\r\n  "writtenAt" : "2026-11-22T12:00:00+00:00"\r\n}\r\n'
    files = {
        "a.json": snapshot("a", canonical["a"], gen=3),
        "b.json": bfile,
        "c.json": head.encode("utf-8"),
        # copies, with BOM and format 2 + key + signature
        "a (1).json": b"\xef\xbb\xbf" + snapshot("a", canonical["a"], gen=2),
        "b.sync-conflict-20261122-101010-ABCDEFG.json": snapshot("b", canonical["a"], fmt=2, gen=9,
                                                                head_extra=KEY, tail=SIG),
        "c_conflict-20261122-101010.json": snapshot("c", list(reversed(canonical["a"])), gen=1),
    }
    return write_folder(root, "hostile-spellings", files)


def hostile_jcs(root):
    """Versions with equal lastModified, modifiedBy and deleted: the JCS bytes decide."""
    pairs = [
        ({"n": 1e21}, {"n": 1e20}),
        ({"n": 1e-7}, {"n": 1e-6}),
        ({"a": -0.0, "b": 2}, {"a": 0, "b": 1}),
        ({"n": 0.1 + 0.2}, {"n": 0.3}),
        ({"n": 5e-324}, {"n": 1e-323}),
        ({"n": 1.7976931348623157e308}, {"n": 9.999999999999999e307}),
        ({"n": 1}, {"n": 10}),
        ({"n": 9007199254740992.0}, {"n": 9007199254740991}),
        ({"n": 123456789012345680000.0}, {"n": 1.2345678901234568e21}),
        ({"n": 0.000001}, {"n": 1e-6, "o": None}),
        ({"s": "\U0001F600"}, {"s": "\uFB33"}),
        ({"s": "\uFFFF"}, {"s": "\U00010000"}),
        ({"\U0001F600": 2, "\uFB33": 1}, {"\U0001F600": 1, "\uFB33": 2}),
        ({"\uFFFF": 1, "\U00010000": 2}, {"\uFFFF": 2, "\U00010000": 1}),
        ({"é": 1, "z": 2}, {"é": 2, "z": 1}),
        ({"s": "a\u0000"}, {"s": "a\u001f"}),
        ({"s": "\u007f"}, {"s": "\u0080"}),
        ({"s": "\"q"}, {"s": "\\q"}),
        ({"s": "\n"}, {"s": "\t"}),
        ({"k": []}, {"k": {}}),
        ({"k": [None]}, {"k": [False]}),
        ({"k": True}, {"k": "true"}),
        ({"": 1}, {"A": 1}),
    ]
    a_recs, b_recs, c_recs = [], [], []
    n = 100
    for left, right in pairs:
        # concurrent (vectored) pair, a legacy pair, and a pair with top-level unknown keys
        n += 1
        a_recs.append({"id": uid(n), "type": "T", "lastModified": T0, "modifiedBy": "c", "versionVector": {"a": 1}, "fields": left})
        b_recs.append({"id": uid(n), "type": "T", "lastModified": T0, "modifiedBy": "c", "versionVector": {"b": 1}, "fields": right})
        n += 1
        a_recs.append({"id": uid(n), "type": "T", "lastModified": T0, "modifiedBy": "c", "fields": left})
        b_recs.append({"id": uid(n), "type": "T", "lastModified": T0, "modifiedBy": "c", "fields": right})
        n += 1
        a_recs.append(dict({"id": uid(n), "type": "T", "lastModified": T0, "versionVector": {"a": 1}}, **{"x-" + k: v for k, v in left.items()}))
        b_recs.append(dict({"id": uid(n), "type": "T", "lastModified": T0, "versionVector": {"b": 1}}, **{"x-" + k: v for k, v in right.items()}))
    # vectors as the tie-break: {"a":10} vs {"a":9,"b":1}; identical content
    n += 1
    a_recs.append({"id": uid(n), "type": "T", "lastModified": T0, "modifiedBy": "a", "versionVector": {"a": 10}})
    b_recs.append({"id": uid(n), "type": "T", "lastModified": T0, "modifiedBy": "a", "versionVector": {"a": 9, "b": 1}})
    # vector-less vs vectored, same everything else: the vector-less one is greater (ends earlier)
    n += 1
    a_recs.append({"id": uid(n), "type": "T", "lastModified": T0, "modifiedBy": "a", "versionVector": {"a": 1}})
    b_recs.append({"id": uid(n), "type": "T", "lastModified": T0, "modifiedBy": "a"})
    # deleted beats live at equal lastModified/modifiedBy; schemaVersion and type decide otherwise
    n += 1
    a_recs.append({"id": uid(n), "type": "T", "lastModified": T0, "modifiedBy": "a", "versionVector": {"a": 1}, "deleted": True})
    b_recs.append({"id": uid(n), "type": "T", "lastModified": T0, "modifiedBy": "a", "versionVector": {"b": 1}, "fields": {"z": "zzz"}})
    n += 1
    a_recs.append({"id": uid(n), "type": "T", "lastModified": T0, "modifiedBy": "a", "versionVector": {"a": 1}, "schemaVersion": 10})
    b_recs.append({"id": uid(n), "type": "T", "lastModified": T0, "modifiedBy": "a", "versionVector": {"b": 1}, "schemaVersion": 9})
    n += 1
    a_recs.append({"id": uid(n), "type": "T\U0001F600", "lastModified": T0, "modifiedBy": "a", "versionVector": {"a": 1}})
    b_recs.append({"id": uid(n), "type": "T\uFB33", "lastModified": T0, "modifiedBy": "a", "versionVector": {"b": 1}})
    # three-way with a third device, all concurrent: order of conflicts by JCS
    n += 1
    for recs, dev, val in ((a_recs, "a", 1e21), (b_recs, "b", 1e20), (c_recs, "c", 99)):
        recs.append({"id": uid(n), "type": "T", "lastModified": T0, "modifiedBy": "a", "versionVector": {dev: 1}, "fields": {"n": val}})
    # missing modifiedBy / lastModified are least
    n += 1
    a_recs.append({"id": uid(n), "type": "T", "lastModified": T0, "versionVector": {"a": 1}, "fields": {"n": 9}})
    b_recs.append({"id": uid(n), "type": "T", "lastModified": T0, "modifiedBy": "a", "versionVector": {"b": 1}, "fields": {"n": 1}})
    c_recs.append({"id": uid(n), "type": "T", "modifiedBy": "z", "versionVector": {"c": 1}, "fields": {"n": 99}})
    files = {"a.json": snapshot("a", a_recs), "b.json": snapshot("b", b_recs), "c.json": snapshot("c", c_recs)}
    # the same folder with the two sides swapped between files (order must not matter)
    return [write_folder(root, "hostile-jcs-tiebreak", files),
            write_folder(root, "hostile-jcs-tiebreak-swapped",
                         {"a.json": snapshot("a", b_recs), "b.json": snapshot("b", a_recs), "c.json": snapshot("c", c_recs)})]


def hostile_vectorless(root):
    """Versions without vectors mixed with vectored ones."""
    A, B, C = [], [], []
    n = 300

    def add(*versions):
        nonlocal n
        n += 1
        for recs, v in zip((A, B, C), versions):
            if v is not None:
                recs.append(dict({"id": uid(n), "type": "T"}, **v))

    add({"lastModified": "2026-11-22T10:00:05Z", "modifiedBy": "a"},                       # legacy, newest
        {"lastModified": "2026-11-22T10:00:01Z", "modifiedBy": "b", "versionVector": {"b": 1}},
        {"lastModified": "2026-11-22T10:00:02Z", "modifiedBy": "c", "versionVector": {"c": 1}})
    add({"lastModified": "2026-11-22T10:00:00Z", "modifiedBy": "a"},                       # legacy, oldest: dropped
        {"lastModified": "2026-11-22T10:00:01Z", "modifiedBy": "b", "versionVector": {"b": 1}},
        {"lastModified": "2026-11-22T10:00:02Z", "modifiedBy": "c", "versionVector": {"c": 1}})
    add({"lastModified": "2026-11-22T10:00:01.5Z", "modifiedBy": "a"},                     # legacy between
        {"lastModified": "2026-11-22T10:00:01Z", "modifiedBy": "b", "versionVector": {"b": 1}},
        {"lastModified": "2026-11-22T10:00:02Z", "modifiedBy": "c", "versionVector": {"c": 1}})
    add({"fields": {"x": 1}},                                                               # no timestamp at all
        {"modifiedBy": "b", "fields": {"x": 2}},
        {"lastModified": "1970-01-01T00:00:00Z", "fields": {"x": 3}})
    add({"modifiedBy": "a", "fields": {"x": 1}},                                            # legacy only, ties
        {"modifiedBy": "a", "fields": {"x": 2}},
        {"modifiedBy": "a", "fields": {"x": 2}, "deleted": True})
    add({"lastModified": T0, "modifiedBy": "a"},                                            # legacy == vectored but vector
        {"lastModified": T0, "modifiedBy": "a", "versionVector": {"a": 1}},
        {"lastModified": T0, "modifiedBy": "a", "versionVector": {"a": 2}})
    add({"lastModified": "2026-11-22T10:00:09Z", "modifiedBy": "a", "versionVector": {"a": 1},  # legacy in conflicts
         "conflicts": [{"id": uid(n + 1), "type": "T", "lastModified": "2026-11-22T10:00:10Z", "modifiedBy": "z"}]},
        {"lastModified": "2026-11-22T10:00:08Z", "modifiedBy": "b", "versionVector": {"b": 1}},
        None)
    add({"lastModified": "2026-11-22T10:00:10Z", "modifiedBy": "z",                          # legacy winner holding vectored conflicts
         "conflicts": [{"id": uid(n + 1), "type": "T", "lastModified": "2026-11-22T10:00:09Z", "modifiedBy": "a", "versionVector": {"a": 1}},
                       {"id": uid(n + 1), "type": "T", "lastModified": "2026-11-22T10:00:01Z", "modifiedBy": "a", "versionVector": {"a": 1, "b": 1}}]},
        {"lastModified": "2026-11-22T10:00:11Z", "modifiedBy": "b", "versionVector": {"a": 1, "b": 2}},
        {"lastModified": "2026-11-22T10:00:12Z", "modifiedBy": "c"})
    add({"lastModified": "2026-11-22T10:00:10Z", "modifiedBy": "z", "versionVector": {}},   # {} is no vector
        {"lastModified": "2026-11-22T10:00:09Z", "modifiedBy": "b", "versionVector": None, "fields": {"q": 1}},
        {"lastModified": "2026-11-22T10:00:08Z", "modifiedBy": "c", "versionVector": {"c": 1}})
    add({"lastModified": "2026-11-22T10:00:00Z", "deleted": True},                           # legacy tombstone vs vectored
        {"lastModified": "2026-11-22T10:00:00Z", "versionVector": {"b": 1}, "deleted": True},
        {"lastModified": "2026-11-22T10:00:00Z", "versionVector": {"c": 1}})
    return write_folder(root, "hostile-vectorless-mix",
                        {"a.json": snapshot("a", A), "b.json": snapshot("b", B), "c.json": snapshot("c", C)})


def hostile_dominated(root):
    """Dominated versions arriving inside `conflicts`, and entries that dominate their record."""
    A, B, C = [], [], []
    n = 400
    lm = lambda s: f"2026-11-22T10:00:{s:02d}Z"  # noqa: E731

    def v(s, by, vec, **kw):
        return dict({"type": "T", "lastModified": lm(s), "modifiedBy": by, "versionVector": vec}, **kw)

    def rec(i, top, *entries):
        r = dict({"id": uid(i)}, **top)
        if entries:
            r["conflicts"] = [dict({"id": uid(i).lower() if k % 2 else uid(i)}, **e) for k, e in enumerate(entries)]
        return r

    n += 1  # b's conflict entry dominated by a's top-level
    A.append(rec(n, v(5, "a", {"a": 2, "b": 1})))
    B.append(rec(n, v(6, "b", {"b": 2}), v(4, "a", {"a": 1})))
    n += 1  # an entry dominating its own record's top-level version
    A.append(rec(n, v(5, "a", {"a": 1}), v(3, "b", {"a": 1, "b": 1})))
    n += 1  # entry with the same vector as the top-level, greater content
    A.append(rec(n, v(5, "a", {"a": 1}, fields={"x": 1}), v(5, "a", {"a": 1}, fields={"x": 2})))
    B.append(rec(n, v(4, "b", {"b": 1})))
    n += 1  # all of a record's entries dominated by another file's version; a chain
    A.append(rec(n, v(9, "a", {"a": 3}), v(8, "b", {"a": 1, "b": 1}), v(7, "c", {"a": 1, "c": 1})))
    B.append(rec(n, v(10, "b", {"a": 3, "b": 2, "c": 1})))
    C.append(rec(n, v(1, "c", {"a": 2, "c": 1})))
    n += 1  # a clock that ran ahead: the dominated version is later
    A.append(rec(n, v(59, "a", {"a": 1}), v(58, "c", {"c": 5})))
    B.append(rec(n, v(2, "b", {"a": 1, "b": 1}), v(3, "c", {"c": 6})))
    n += 1  # same version as a top-level in one file and as an entry in another
    A.append(rec(n, v(20, "a", {"a": 2}), v(10, "b", {"a": 1, "b": 1}, fields={"k": "v"})))
    B.append(rec(n, v(10, "b", {"a": 1, "b": 1}, fields={"k": "v"}), v(20, "a", {"a": 2})))
    C.append(rec(n, v(15, "c", {"a": 1, "c": 1}), v(20, "a", {"a": 2}), v(10, "b", {"b": 1, "a": 1}, fields={"k": "v"})))
    n += 1  # conflict entries with null/[] conflicts, a bad entry (own conflicts) among them, another id
    A.append(rec(n, v(30, "a", {"a": 1}), v(29, "b", {"b": 1}, conflicts=[]), v(28, "c", {"c": 1}, conflicts=None),
                 v(31, "c", {"c": 2}, conflicts=[{"id": uid(n), "type": "T"}])))
    A[-1]["conflicts"].append(dict(v(27, "b", {"b": 3}), id=uid(n + 1000)))
    n += 1  # many concurrent with a vector-less in conflicts
    A.append(rec(n, v(40, "a", {"a": 1}), v(41, "b", {"b": 1}), v(42, "c", {"c": 1}), dict(v(43, "c", None), versionVector=None)))
    n += 1  # a rejected record's valid entries still merge
    bad = rec(n, v(40, "a", {"a": 1}, schemaVersion=0), v(41, "b", {"b": 1}), v(42, "c", {"c": 1}, deleted="no"))
    A.append(bad)
    return write_folder(root, "hostile-dominated-conflicts",
                        {"a.json": snapshot("a", A), "b.json": snapshot("b", B), "c.json": snapshot("c", C)})


def hostile_copies(root):
    """Sync-tool copies of files and of parts; misnamed files; links, FIFOs, directories."""
    def one(n, dev, s, extra=None):
        return dict({"id": uid(n), "type": "T", "lastModified": f"2026-11-22T10:00:{s:02d}Z", "modifiedBy": dev,
                     "versionVector": {dev: s}}, **(extra or {}))

    def bad(k):
        return {"id": f"BADBADBA-{k:04X}-4BAD-8BAD-{k:012X}", "type": "Poison", "lastModified": T0,
                "modifiedBy": "a", "versionVector": {"a": 1}}

    files = {
        "a.json": snapshot("a", [one(1, "a", 1), one(2, "a", 1)], gen=5),
        "a (1).json": snapshot("a", [one(1, "a", 2)], gen=4),
        "a 2.json": snapshot("a", [one(3, "a", 1)], gen=3),
        "a(1).json": snapshot("a", [one(4, "a", 1)], gen=3),
        "a (Alice's conflicted copy 2026-11-22).json": snapshot("a", [one(5, "a", 1)]),
        "a (Alice\u2019s conflicted copy 2026-11-22).json": snapshot("a", [one(6, "a", 1)]),
        "a_conflict-20261122-101010.json": snapshot("a", [one(7, "a", 1)]),
        "a.sync-conflict-20261122-101010-ABCDEFG.json": snapshot("a", [one(8, "a", 1)]),
        "a.sync-conflict-20261122-101010-ABCDEFG.sync-conflict-20261123-111111-QRSTUV2.json": snapshot("a", [one(9, "a", 1)]),
        "a .json": snapshot("a", [one(10, "a", 1)]),
        "a.sync-conflict-x.json": snapshot("a.sync-conflict-x", [one(11, "b", 1)]),  # own file of that device
        "b.3F.json": snapshot("b", [one(0x3F000001, "b", 1)], fmt=2, part="3F"),
        "b.3F (1).json": snapshot("b", [one(0x3F000001, "b", 2)], fmt=2, part="3F"),
        "b.3F.sync-conflict-20261122-101010-ABCDEFG.json": snapshot("b", [one(0x3F000002, "b", 1)], fmt=2, part="3F"),
        "b.3F_conflict-1.json": snapshot("b", [one(0x3F000003, "b", 1)], fmt=2, part="3F", head_extra=KEY, tail=SIG),
        "b.37.json": snapshot("b.37", [one(0x37000001, "b", 1)]),  # device b.37's own file
        # rejected (names that do not fit the device/part inside) and skipped
        "a-2.json": snapshot("a", [bad(1)]),
        "a_2.json": snapshot("a", [bad(2)]),
        "a.backup.json": snapshot("a", [bad(3)]),
        "c.json": snapshot("a", [bad(4)]),
        "A.json": snapshot("A", [bad(5)]),
        "b.3E.json": snapshot("b", [bad(6)], fmt=2, part="3F"),
        "b.json": snapshot("b", [bad(7)], fmt=2, part="3F"),
        "b.3f.json": snapshot("b", [bad(8)], fmt=2, part="3f"),
        "c.3F.json": snapshot("c", [bad(9)], fmt=2),
        "c.3F (1).json": snapshot("c", [bad(10)], fmt=1, part="3F"),
        "b.3F.backup.json": snapshot("b", [bad(11)], fmt=2, part="3F"),
        "b.3F2.json": snapshot("b", [bad(12)], fmt=2, part="3F"),
        "b.3F1234.json": snapshot("b", [bad(13)], fmt=2, part="3F1234"),
        "sig-first.json": ('{"signature":"ed25519:' + "A" * 86 + '==","format":2,"device":"sig-first","generation":1,'
                           '"records":[' + J(bad(14)) + ']}').encode(),
        "sig-middle.json": snapshot("sig-middle", [bad(15)], fmt=2, head_extra=SIG),
        "sig-after.json": snapshot("sig-after", [bad(16)], fmt=2, tail=SIG + ',"x":1'),
        ".a.json": snapshot("a", [bad(18)]),
        "a.JSON": snapshot("a", [bad(19)]),
        "a.json.tmp": snapshot("a", [bad(20)]),
        "a.json~": snapshot("a", [bad(21)]),
        ".d-target": snapshot("d", [bad(22)]),
        "d.json": ("symlink", ".d-target"),
        "dir.json": ("dir",),
        "fifo.json": ("fifo",),
    }
    return write_folder(root, "hostile-copies-and-names", files)


def hostile_parts(root):
    """Parts: unions, stale parts, nested prefixes, 4-digit parts, records outside their part."""
    def one(idn, dev, s, extra=None):
        return dict({"id": idn, "type": "T", "lastModified": f"2026-11-22T10:00:{s:02d}Z", "modifiedBy": dev,
                     "versionVector": {dev: s}}, **(extra or {}))
    i3 = "3F2504E0-4F89-41D3-9A0C-0305E82C3301"
    i7 = "7C9E6679-7425-40DE-944B-E07FC1F90AE7"
    i0 = "0000ABCD-0000-4000-8000-000000000001"
    iF = "FFFF0000-0000-4000-8000-000000000001"
    files = {
        "a.3.json": snapshot("a", [one(i3, "a", 1), one(i7, "a", 9)], fmt=2, part="3"),  # i7 outside: rejected
        "a.3F.json": snapshot("a", [one(i3, "a", 2), one(i3.lower().replace("3f", "3e", 1), "a", 3)], fmt=2, part="3F"),
        "a.3F25.json": snapshot("a", [one(i3, "a", 3, {"conflicts": [one(i3, "b", 4, {"versionVector": {"b": 1}})]})],
                                fmt=2, part="3F25"),
        "a.7.json": snapshot("a", [one(i7.lower(), "a", 1, {"conflicts": [one(i7, "c", 1)]})], fmt=2, part="7"),
        "a.0.json": snapshot("a", [one(i0, "a", 1, {"conflicts": [one(i0, "c", 1)]}), one(iF, "a", 5)], fmt=2, part="0"),
        "a.json": snapshot("a", [one(iF, "a", 2)], fmt=2),  # a whole file beside parts: merged too
        "b.7C9E.json": snapshot("b", [one(i7, "b", 2, {"conflicts": [one(i7, "c", 1), one("7C9E6679-7425-40DE-944B-E07FC1F90AE8", "c", 2)]})],
                                fmt=2, part="7C9E"),
        "b.F.json": snapshot("b", [one(iF, "b", 3)], fmt=2, part="F", gen=2),
        "b.F (1).json": snapshot("b", [one(iF, "b", 4), one(i3, "b", 5)], fmt=2, part="F", gen=1),  # i3 outside
        "c.json": snapshot("c", [one(i3, "c", 6, {"part": "3F"})], fmt=1, part="3F"),  # format 1: part is unknown
    }
    return write_folder(root, "hostile-parts", files)


def hostile_ambiguous(root):
    """Cases where the contract leaves room (see the report): kept apart from the others."""
    def one(idn, dev, s, extra=None):
        return dict({"id": idn, "type": "T", "lastModified": f"2026-11-22T10:00:{s:02d}Z", "modifiedBy": dev,
                     "versionVector": {dev: s}}, **(extra or {}))
    files = {
        # a part's record outside its prefix: are its conflict entries (same id, so also outside) merged?
        "a.E.json": snapshot("a", [one(uid(801), "a", 9, {"conflicts": [one(uid(801), "b", 9)]})], fmt=2, part="E"),
        # format 1 with `key`/`signature` members that are not format 2's: unknown keys?
        "f1key.json": snapshot("f1key", [one(uid(802), "a", 1)], head_extra=',"key":7,"signature":"whatever"'),
        # format 2 with a signature member at the end whose value is not 64 bytes of base64
        "sigshort.json": snapshot("sigshort", [one(uid(803), "a", 1)], fmt=2, tail=',"signature":"ed25519:AAAA"'),
        # format 2 with a malformed key (no signature)
        "badkey.json": snapshot("badkey", [one(uid(804), "a", 1)], fmt=2, head_extra=',"key":"rsa:xyz"'),
        # integral values beyond 2^53-1 where an integer is required (schemaVersion, generation)
        "big.json": snapshot("big", [J(one(uid(805), "a", 1))[:-1] + ',"schemaVersion":9007199254740992.0}',
                                     J(one(uid(806), "a", 1))[:-1] + ',"schemaVersion":1e300}']),
        "biggen.json": snapshot("biggen", [one(uid(807), "a", 1)], gen="9007199254740992.0"),
        # a number that underflows to 0
        "under.json": snapshot("under", [one(uid(808), "a", 1, {"fields": {"u": "X"}})]).replace(b'"X"', b"1e-400"),
        # `part` null in a format 2 file named as a plain file
        "pnull.json": snapshot("pnull", [one(uid(809), "a", 1)], fmt=2, head_extra=',"part":null'),
        # a record nested 904 levels deep (the contract sets no limit; syncctl rejects a record deeper
        # than 512 levels on its own, docs/format.md), beside a plain one that must merge either way
        "deep.json": snapshot("deep", [J(one(uid(810), "a", 1))[:-1] + ',"fields":{"x":' + "[" * 900 + "1" + "]" * 900 + "}}",
                                       one(uid(811), "a", 1)]),
    }
    return write_folder(root, "hostile-ambiguous", files)


def hostile_formats(root):
    """File-level rules: formats, I-JSON, top-level keys. Each bad file carries a poison record."""
    good = {"id": uid(500), "type": "T", "lastModified": T0, "modifiedBy": "a", "versionVector": {"a": 1}}

    def p(k):
        return {"id": f"BADBADBA-{k:04X}-4BAD-8BAD-{k:012X}", "type": "Poison", "lastModified": T0,
                "modifiedBy": "a", "versionVector": {"a": 1}}

    def raw(device, record_text, fmt="1", gen="1", extra=""):
        return ('{"format":' + fmt + ',"device":"' + device + '","generation":' + gen + extra +
                ',"records":[' + record_text + ']}').encode("utf-8")

    okrec = lambda k, fields: ('{"id":"' + uid(k) + '","type":"T","lastModified":"' + T0 +  # noqa: E731
                               '","modifiedBy":"b","versionVector":{"b":1},"fields":' + fields + '}')
    badrec = lambda k, fields: ('{"id":"BADBADBA-' + f"{k:04X}" + '-4BAD-8BAD-' + f"{k:012X}" +  # noqa: E731
                                '","type":"Poison","lastModified":"' + T0 + '","versionVector":{"b":1},"fields":' + fields + '}')
    files = {
        "a.json": snapshot("a", [good]),
        "f3.json": snapshot("f3", [p(1)], fmt=3),
        "f30.json": raw("f30", J(p(2)), fmt="3.0"),
        "f0.json": raw("f0", J(p(3)), fmt="0"),
        "fs.json": raw("fs", J(p(4)), fmt='"2"'),
        "fhalf.json": raw("fhalf", J(p(5)), fmt="1.5"),
        "fnull.json": raw("fnull", J(p(6)), fmt="null"),
        "nofmt.json": b'{"device":"nofmt","generation":1,"records":[' + J(p(7)).encode() + b"]}",
        "g0.json": raw("g0", J(p(8)), gen="0"),
        "gneg.json": raw("gneg", J(p(9)), gen="-1"),
        "gfrac.json": raw("gfrac", J(p(10)), gen="1.5"),
        "gstr.json": raw("gstr", J(p(11)), gen='"1"'),
        "norecs.json": b'{"format":1,"device":"norecs","generation":1}',
        "recsobj.json": b'{"format":1,"device":"recsobj","generation":1,"records":{}}',
        "toparr.json": b'[{"format":1,"device":"toparr","generation":1,"records":[]}]',
        "duptop1.json": raw("duptop1", J(p(12)), extra=',"generation":1'),
        "duptop.json": raw("duptop", J(p(13)), extra=',"writtenAt":"x","writtenAt":"x"'),
        "dupfield.json": raw("dupfield", badrec(14, '{"a":1,"\\u0061":2}')),
        "dupnested.json": raw("dupnested", badrec(15, '{"a":[{"k":1,"k":1}]}')),
        "lone.json": raw("lone", badrec(16, '{"s":"\\ud800"}')),
        "lonelow.json": raw("lonelow", badrec(17, '{"s":"\\udc00x"}')),
        "reversed.json": raw("reversed", badrec(18, '{"s":"\\ude00\\ud83d"}')),
        "lonekey.json": raw("lonekey", badrec(19, '{"\\ud83d":1}')),
        "big.json": raw("big", badrec(20, '{"n":9007199254740992}')),
        "bigneg.json": raw("bigneg", badrec(21, '{"n":-9007199254740992}')),
        "bigunknown.json": raw("bigunknown", badrec(22, '{}')[:-1] + ',"x-n":123456789012345678901}'),
        "inf.json": raw("inf", badrec(23, '{"n":1e400}')),
        "ninf.json": raw("ninf", badrec(24, '{"n":-1.8e308}')),
        "nan.json": raw("nan", badrec(25, '{"n":NaN}')),
        "infinity.json": raw("infinity", badrec(26, '{"n":Infinity}')),
        "trunc.json": raw("trunc", badrec(27, '{}'))[:-30],
        "trailing.json": raw("trailing", badrec(28, '{}')) + b"x",
        "twodocs.json": raw("twodocs", badrec(29, '{}')) + b"{}",
        "ctl.json": raw("ctl", badrec(30, '{"s":"a\x01b"}')),
        "badutf8.json": raw("badutf8", badrec(31, '{"s":"ok"}')).replace(b"ok", b"o\xffk"),
        "cesu.json": raw("cesu", badrec(32, '{"s":"ok"}')).replace(b"ok", b"\xed\xa0\x80"),
        "overlong.json": raw("overlong", badrec(33, '{"s":"ok"}')).replace(b"ok", b"\xc0\xaf"),
        "singlequote.json": raw("singlequote", badrec(34, "{'s':1}")),
        "comment.json": raw("comment", badrec(35, '{"s":1 /* c */}')),
        "trailingcomma.json": raw("trailingcomma", badrec(36, '{"s":1,}')),
        "leadingzero.json": raw("leadingzero", badrec(37, '{"n":01}')),
        "plus.json": raw("plus", badrec(38, '{"n":+1}')),
        "dot.json": raw("dot", badrec(39, '{"n":.5}')),
        "hex.json": raw("hex", badrec(40, '{"n":0x10}')),
        "badescape.json": raw("badescape", badrec(41, '{"s":"\\x41"}')),
        "emptyfile.json": b"",
        "ws.json": b"   \n",
        # accepted ones
        "bom.json": b"\xef\xbb\xbf" + raw("bom", okrec(501, '{"n":9007199254740991,"m":-9007199254740991}')),
        "f2.json": raw("f2", okrec(502, '{"x":9007199254740992.0,"y":1.7976931348623157e308,"z":-1.7976931348623157e308}'), fmt="2.0"),
        "f1e0.json": raw("f1e0", okrec(503, '{"pair":"\\ud83d\\ude00","nul":"\\u0000","sl":"\\/"}'), fmt="1e0", gen="3.0e0"),
        "f1ws.json": (' \t\r\n' + raw("f1ws", okrec(504, '{ "a" : [ 1 , 2 ] }')).decode().replace(",", " ,\n ") + "\n\n").encode(),
        "wa.json": raw("wa", okrec(505, '{}'), extra=',"writtenAt":"yesterday","unknownTop":{"a":[1,{"b":null}]}'),
        "wanum.json": raw("wanum", okrec(506, '{}'), extra=',"writtenAt":12345,"writtenAt2":null'),
        "f2key.json": raw("f2key", okrec(508, '{}'), fmt="2", extra=KEY),  # signed-style key, no signature
        "f2signed.json": snapshot("f2signed", [okrec(509, '{}')], fmt=2, head_extra=KEY, tail=SIG),
        "f2signednl.json": snapshot("f2signednl", [okrec(510, '{}')], fmt=2, head_extra=KEY, tail=SIG)[:-1],  # no \n
    }
    return write_folder(root, "hostile-formats-and-ijson", files)


def hostile_timestamps(root):
    """Orders decided by offsets, leap seconds, fractional digits, truncation; invalid ones."""
    groups = [
        # (a's lastModified, b's lastModified): same record, concurrent vectors, modifiedBy a/b
        ("2026-11-22T10:00:00.1239Z", "2026-11-22T10:00:00.123Z"),
        ("2026-11-22T10:00:00.9999999Z", "2026-11-22T10:00:01Z"),
        ("2016-12-31T23:59:60.250Z", "2017-01-01T00:00:00.250Z"),
        ("2016-12-31T23:59:60Z", "2016-12-31T23:59:59.999999999999Z"),
        ("2026-11-22T09:59:60.5Z", "2026-11-22T10:00:00.499Z"),
        ("2026-11-23T00:30:00.5+14:00", "2026-11-22T10:30:00.500Z"),
        ("2026-11-21T10:00:58.123-23:59", "2026-11-22T09:59:58.123Z"),
        ("2026-11-22t09:59:58.123z", "2026-11-22T09:59:58.123+00:00"),
        ("2026-11-22T09:59:58.123-00:00", "2026-11-22T04:29:58.123123123-05:30"),
        ("1969-12-31T23:59:59.9999Z", "1970-01-01T00:00:00Z"),
        ("1969-12-31T23:59:59.9991Z", "1969-12-31T23:59:59.999Z"),
        ("0000-01-01T00:00:00Z", "0000-01-01T00:30:00-01:00"),
        ("9999-12-31T23:59:59.999999Z", "9999-12-31T23:30:00-00:29"),
        ("2024-02-29T12:00:00Z", "2000-02-29T12:00:00Z"),
        ("2026-11-22T10:00:00.000000000001Z", "2026-11-22T10:00:00Z"),
        ("2026-11-22T10:00:00.00099Z", "2026-11-22T10:00:00.001Z"),
        ("1900-03-01T00:00:00+23:59", "1900-02-28T00:01:00Z"),
    ]
    invalid = ["2026-02-30T00:00:00Z", "9999-12-31T23:59:60Z", "0000-01-01T00:30:00+01:00",
               "9999-12-31T23:59:59-00:01", "2026-11-22T09:59:58", "2026-11-22T09:59:58.Z",
               "2026-11-22T24:00:00Z", "2026-11-22T09:59:61Z", "2026-11-22T09:59:58+24:00",
               "2026-11-22T09:59:58+02:60", "2026-11-22 09:59:58Z", "2026-11-22T09:59:58ZZ",
               "2025-02-29T00:00:00Z", "1900-02-29T00:00:00Z", "10000-01-01T00:00:00Z",
               "2026-11-22T09:59:\uff15\uff18Z", "+2026-11-22T09:59:58Z", "2026-11-22T09:59:58,123Z",
               "2026-11-22T09:59:58+0200", "2026-11-22T09:59:58.123+02:00Z", "", 1764066598123, True]
    A, B = [], []
    n = 600
    for la, lb in groups:
        n += 1
        A.append({"id": uid(n), "type": "T", "lastModified": la, "modifiedBy": "a", "versionVector": {"a": 1}})
        B.append({"id": uid(n), "type": "T", "lastModified": lb, "modifiedBy": "b", "versionVector": {"b": 1}})
        n += 1  # vector-less: one wins alone
        A.append({"id": uid(n), "type": "T", "lastModified": la, "modifiedBy": "b"})
        B.append({"id": uid(n), "type": "T", "lastModified": lb, "modifiedBy": "a"})
    for k, t in enumerate(invalid):
        A.append({"id": f"BADBADBA-{k:04X}-4BAD-8BAD-{k:012X}", "type": "Poison", "lastModified": t,
                  "modifiedBy": "a", "versionVector": {"a": 1}})
        n += 1  # an invalid timestamp on a conflict entry: the entry alone is rejected
        B.append({"id": uid(n), "type": "T", "lastModified": T0, "modifiedBy": "b", "versionVector": {"b": 1},
                  "conflicts": [{"id": uid(n), "type": "T", "lastModified": t, "modifiedBy": "a", "versionVector": {"a": 1}}]})
    return write_folder(root, "hostile-timestamps", {"a.json": snapshot("a", A), "b.json": snapshot("b", B)})


def hostile_records(root):
    """Record-level validation: each bad record rejected on its own; integers as 1.0 / 1e0."""
    good = []
    n = 700
    spellings_ok = [
        '"schemaVersion":1e0', '"schemaVersion":2.0', '"schemaVersion":1E1', '"schemaVersion":0.5e1',
        '"schemaVersion":9007199254740991', '"schemaVersion":9.007199254740991e15',
        '"versionVector":{"a":1e0}', '"versionVector":{"a":2.00}', '"versionVector":{"a":9007199254740991}',
        '"versionVector":{"a":9.007199254740991E+15}', '"versionVector":{"a.b-c_d":1,"9":1}',
        '"type":"' + "T" * 128 + '"', '"type":"' + "\U0001F600" * 128 + '"', '"type":"' + "e\u0301" * 64 + '"',
        '"modifiedBy":"' + "m" * 64 + '"', '"fields":{"":null,"a":{"b":[]}}', '"deleted":true,"fields":{"kept":1}',
        '"x-obj":{}', '"x-arr":[]', '"x-false":false', '"x-zero":0', '"x-str":""', '"schemaVersion":null',
        '"Conflicts":[1]', '"ID":"nope"',
    ]
    spellings_bad = [
        '"schemaVersion":0', '"schemaVersion":-1', '"schemaVersion":1.5', '"schemaVersion":"2"',
        '"schemaVersion":true',
        '"versionVector":{"a":0}', '"versionVector":{"a":-1}', '"versionVector":{"a":1.5}', '"versionVector":{"a":"1"}',
        '"versionVector":{"A":1}', '"versionVector":{"":1}', '"versionVector":{"-a":1}', '"versionVector":{"a":null}',
        '"versionVector":{"a":9007199254740992.0}', '"versionVector":{"a":1e16}', '"versionVector":[]',
        '"versionVector":{"' + "v" * 65 + '":1}', '"versionVector":{"a":true}',
        '"type":""', '"type":"' + "T" * 129 + '"', '"type":"' + "\U0001F600" * 129 + '"', '"type":null', '"type":1',
        '"modifiedBy":""', '"modifiedBy":"A"', '"modifiedBy":"' + "m" * 65 + '"', '"modifiedBy":"a b"', '"modifiedBy":1',
        '"modifiedBy":"_a"', '"deleted":"yes"', '"deleted":0', '"deleted":"false"', '"fields":[]', '"fields":"x"',
        '"fields":1', '"conflicts":{}', '"conflicts":"x"', '"lastModified":1764066598123', '"lastModified":""',
    ]
    recs = []
    for s in spellings_ok:
        n += 1
        base = {"id": uid(n), "type": "T", "lastModified": T0, "modifiedBy": "a", "versionVector": {"b": 1}}
        key = s.split('"')[1]
        base.pop(key, None)
        recs.append(J(base)[:-1] + "," + s + "}")
    for k, s in enumerate(spellings_bad):
        base = {"id": f"BADBADBA-{k:04X}-4BAD-8BAD-{k:012X}", "type": "T", "lastModified": T0, "modifiedBy": "a",
                "versionVector": {"b": 1}}
        key = s.split('"')[1]
        base.pop(key, None)
        recs.append(J(base)[:-1] + "," + s + "}")
    bad_ids = ["BADBADBA-D000-4BAD-8BAD", "{BADBADBA-D000-4BAD-8BAD-000000000012}", "BADBADBAD0004BAD8BAD000000000013",
               "BADBADBA-D000-4BAD-8BAD-00000000001G", "BADBADBA-D000-4BAD-8BAD-0000000000014",
               " BADBADBA-D000-4BAD-8BAD-000000000015", "BADBADBA_D000-4BAD-8BAD-000000000016",
               "BADBADBA-D000-4BAD-8BAD-00000000001\uff17"]
    for rid in bad_ids:
        recs.append(J({"id": rid, "type": "T", "lastModified": T0, "versionVector": {"b": 1}}))
    recs += [J({"type": "T"}), '"string"', "null", "42", "[]", "true", J({"id": None, "type": "T"}), J({"id": 7, "type": "T"})]
    # a valid id in lower case with mixed case
    n += 1
    recs.append(J({"id": uid(n).lower()[:10] + uid(n)[10:], "type": "T", "versionVector": {"a": 2}}))
    good += recs
    return write_folder(root, "hostile-record-validation", {"a.json": snapshot("a", good)})


def lookalike(device, lines, part=None, gen=1, signed=True):
    """A file laid out as SnapshotSync's writer lays one out: header, one record a line, footer."""
    head = {"format": 2, "device": device}
    if part is not None:
        head["part"] = part
    head.update(generation=gen, writtenAt="2026-11-22T12:00:00.000Z")
    text = J(head)[:-1] + (KEY if signed else "") + ',"records":[\n' + ",\n".join(lines) + "\n]"
    return (text + (SIG if signed else "") + "}\n").encode("utf-8")


def poison_id(k):
    return f"BADBADBA-{k >> 16 & 0xFFFF:04X}-4BAD-8BAD-{k:012X}"


def hostile_strings(root):
    """String bytes at every alignment: raw control characters and ill-formed UTF-8 (file skipped),
    escapes and well-formed multi-byte characters (merged, value checked) in every string slot."""
    files, k, n = {}, 0, 900
    bad_bytes = [b"\x00", b"\x01", b"\x09", b"\x0a", b"\x0d", b"\x1f", b"\x80", b"\xbf", b"\xc0\xaf", b"\xc1\xbf",
                 b"\xe0\x80\xaf", b"\xed\xa0\x80", b"\xed\xbf\xbf", b"\xf0\x80\x80\xaf", b"\xf4\x90\x80\x80",
                 b"\xf5\x80\x80\x80", b"\xf8\x88\x80\x80\x80", b"\xff", b"\xfe", b"\xc3", b"\xe2\x82", b"\xf0\x9f\x98",
                 b"\xc3\x28", b"\xe2\x28\xa1"]
    for bi, bad in enumerate(bad_bytes):
        for off in range(0, 17):
            k += 1
            text = b"x" * off + bad + b"y" * (17 - off)
            rec = J({"id": poison_id(k), "type": "T", "lastModified": T0, "modifiedBy": "a",
                     "versionVector": {"a": 1}, "fields": {"s": "@@"}}).encode().replace(b"@@", text)
            name = f"s{bi:02d}o{off:02d}"
            files[name + ".json"] = b'{"format":1,"device":"' + name.encode() + b'","generation":1,"records":[\n' + rec + b"\n]}\n"
    good = ["\u007f", "\u0080", "\u07ff", "\u0800", "\uffff", "\ufffe", "\U00010000", "\U0010ffff", "\u2028",
            "\u2029", "\ufeff", "\u00e9", "e\u0301", "\U0001F600"]
    escapes = ['\\"', "\\\\", "\\/", "\\b", "\\f", "\\n", "\\r", "\\t", "\\u0000", "\\u001f", "\\u007F",
               "\\ud83d\\ude00", "\\uDBFF\\uDFFF", "\\uFFFF", "\\u00E9", "\\u0041"]
    lines = []
    for g in good + [None] * 0:
        for off in range(0, 17):
            n += 1
            lines.append(J({"id": uid(n), "type": "T", "lastModified": T0, "modifiedBy": "a", "versionVector": {"a": 1},
                            "fields": {"s": "x" * off + g + "y" * (17 - off), "x" * off + g: 1}}))
    for e in escapes:
        for off in range(0, 17):
            n += 1
            lines.append(J({"id": uid(n), "type": "T", "lastModified": T0, "modifiedBy": "a", "versionVector": {"a": 1},
                            "fields": {"s": "@@", "k": 1}}).replace("@@", "x" * off + e + "y" * (17 - off))
                         .replace('"k":1', '"' + "x" * off + e + '":1'))
    files["a.json"] = snapshot("a", lines)
    # escapes inside the known string members: id, type, lastModified, modifiedBy, vector keys
    esc = lambda s: "".join("\\u%04x" % ord(c) for c in s)  # noqa: E731
    e_lines = []
    for i in range(8):
        n += 1
        rid, t, mb = uid(n), "Type/é", "b.dev"
        fields = [('"id"', '"' + (esc(rid) if i & 1 else rid) + '"'),
                  ('"type"', '"' + (esc(t) if i & 2 else "Type\\/\\u00e9") + '"'),
                  ('"lastModified"', '"' + (esc(T0) if i & 4 else T0.replace("T", "\\u0054")) + '"'),
                  ('"modifiedBy"', '"' + (esc(mb) if i & 1 else mb) + '"'),
                  ('"versionVector"', '{"' + (esc("b.dev") if i & 2 else "b\\u002edev") + '":1,"a":' + str(i + 1) + "}"),
                  ('"' + esc("fields") + '"' if i & 4 else '"fields"', '{"i":' + str(i) + "}")]
        e_lines.append("{" + ",".join(k_ + ":" + v_ for k_, v_ in fields) + "}")
    files["b.dev.json"] = snapshot("b.dev", e_lines)
    # the same in SnapshotSync's layout
    files["c.json"] = lookalike("c", [ln.replace("b.dev", "c") for ln in e_lines[:0]] + [
        '{"fields":{"s":"\\u00e9\\/\\u0041"},"id":"' + uid(990, 0xC) + '","lastModified":"' + T0 +
        '","modifiedBy":"c","type":"T","versionVector":{"c":1}}',
        '{"fields":{"s":"' + "\U0001F600" * 9 + '\\ud83d\\ude00"},"id":"' + uid(991, 0xC) + '","lastModified":"' + T0 +
        '","modifiedBy":"c","type":"\\u0054","versionVector":{"c":1}}'])
    return write_folder(root, "hostile-strings-bytes", files)


def hostile_numbers(root):
    """Number literals: valid spellings (merged, the double checked), invalid ones (file skipped),
    integral spellings where integers are required, overflow of the literal's parts."""
    good = ["0", "-0", "0.0", "-0.0", "1", "1.0", "1.50", "1e2", "1E2", "1e+2", "1E-2", "0.1e1", "100e-2", "1e21",
            "1e+21", "1E21", "1e-7", "1e-07", "0.0000001", "0.000001", "123456789012345680000.0", "1.2345678901234568e20",
            "9007199254740991", "-9007199254740991", "9007199254740992.0", "9007199254740993.0", "9007199254740995.0",
            "9.007199254740993e15", "0.30000000000000004", "0.3000000000000000444", "0.10000000000000001",
            "0.1000000000000000055511151231257827", "5e-324", "4.9406564584124654e-324", "2.4703282292062328e-324",
            "2.2250738585072011e-308", "2.2250738585072014e-308", "1.7976931348623157e308", "1.7976931348623158e308",
            "-1.7976931348623157e+308", "1e0000000000000000000001", "0e999999999999999999", "0.0e-999999999999999",
            "1" + "0" * 300 + ".0e-300", "0." + "0" * 300 + "1e301", "1." + "0" * 400 + "1", "123456789012345678.9",
            "12345678901234567890123456789e-20", "1.0000000000000002", "1.00000000000000011102230246251565404236316680908203125",
            "1.00000000000000011102230246251565404236316680908203124", "1.00000000000000011102230246251565404236316680908203126",
            "4503599627370497.5", "4503599627370496.5", "18014398509481985.0", "18014398509481987.0",
            "295147905179352825856.0", "295147905179352834048.0", "7.2057594037927933e16", "3.5e-322", "1e23",
            "8.41e21", "5e22", "9.999999999999999e22", "1e-5", "1.5e-6", "123e-9", "0.00001234", "-1e-7",
            "1234567.0e-3", "2.5E-3", "6.02214076e23", "1e308", "1e-308", "1e-320"]
    files, n, k = {}, 1000, 0x2000
    lines = []
    for lit in good:
        n += 1
        lines.append(J({"id": uid(n), "type": "T", "lastModified": T0, "modifiedBy": "a", "versionVector": {"a": 1},
                        "fields": {"n": 0, "a": [0], "o": {"v": 0}}})
                     .replace('"n":0', '"n":' + lit).replace("[0]", "[" + lit + "," + lit + "]").replace('"v":0', '"v":' + lit))
    files["a.json"] = snapshot("a", lines)
    # integers where integers are required, in integral spellings (merged), and not (rejected alone)
    req_ok = ["1e0", "1E+0", "10e-1", "0.00001e5", "1.0", "1.00000", "9007199254740991.0", "9.007199254740991e15",
              "900719925474099.1e1", "2", "3e0", "0.3e1", "30000000000e-10"]
    req_bad = ["0", "-1", "0.5", "1.5", "1e-1", "9007199254740992.0", "9.007199254740992e15", "1e16", "-0.0", "0e5"]
    lines = []
    for lit in req_ok:
        n += 1
        lines.append(J({"id": uid(n), "type": "T", "lastModified": T0, "modifiedBy": "b", "versionVector": {"b": 1, "a": 2}})
                     .replace('"b":1,', '"b":' + lit + ",") [:-1] + ',"schemaVersion":' + lit + "}")
    for lit in req_bad:
        k += 1
        lines.append(J({"id": poison_id(k), "type": "T", "lastModified": T0, "modifiedBy": "b", "versionVector": {"b": 1}})
                     .replace('"b":1}', '"b":' + lit + "}"))
        k += 1
        lines.append(J({"id": poison_id(k), "type": "T", "lastModified": T0, "modifiedBy": "b", "versionVector": {"b": 1}})[:-1]
                     + ',"schemaVersion":' + lit + "}")
    files["b.json"] = snapshot("b", lines)
    # the file-level integers, in integral spellings
    files["c.json"] = (b'{"format":1.0e0,"device":"c","generation":1E1,"records":[' +
                       J({"id": uid(1099), "type": "T", "versionVector": {"c": 1}}).encode() + b"]}")
    # invalid literals: each in its own file, which is skipped whole
    bad = ["9007199254740992", "-9007199254740992", "90071992547409910", "18446744073709551616",
           "18446744073709551617", "-9223372036854775809", "9223372036854775808", "1" + "0" * 30,
           "1e400", "-1e400", "1.8e308", "1e999999999999999999", "1e18446744073709551626", "1e+9223372036854775808",
           "1" + "0" * 400 + ".0", "179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017977587207096330286416692887910946555547851940402630657488671505820681908902000708383676273854845817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711559699508093042880177904174497792.0",
           "00", "01", "-01", "-", "+1", ".5", "1.", "1.e5", "1e", "1e+", "1E-", "--1", "1ee5", "1.5.", "0x10",
           "1_000", "NaN", "Infinity", "-Infinity", "1e5.5", "٣", "１"]
    for i, lit in enumerate(bad):
        k += 1
        name = f"n{i:02d}"
        rec = J({"id": poison_id(k), "type": "T", "lastModified": T0, "modifiedBy": "a", "versionVector": {"a": 1},
                 "fields": {"a": [1, {"b": "@@"}]}}).replace('"@@"', lit)
        files[name + ".json"] = ('{"format":1,"device":"' + name + '","generation":1,"records":[' + rec + "]}").encode("utf-8")
    return write_folder(root, "hostile-numbers", files)


def hostile_keys(root):
    """Duplicate keys, also through escapes and at every level (file skipped), and keys that only
    look alike (merged)."""
    files, k, n = {}, 0x3000, 1200
    base = '{"id":"@ID","type":"T","lastModified":"' + T0 + '","modifiedBy":"a","versionVector":{"a":1},"fields":{"f":1}}'
    dups = [
        ('"type":"T"', '"type":"T","type":"T"'), ('"type":"T"', '"type":"T","\\u0074ype":"T"'),
        ('"id":"@ID"', '"id":"@ID","id":"@ID"'), ('"id":"@ID"', '"\\u0069d":"@ID","id":"@ID"'),
        ('{"a":1}', '{"a":1,"a":1}'), ('{"a":1}', '{"a":1,"\\u0061":2}'), ('{"f":1}', '{"f":1,"f":1}'),
        ('{"f":1}', '{"f":{"g":[{"h":1,"h":2}]}}'), ('"fields"', '"x":1,"x":1,"fields"'),
        ('"fields"', '"x-\\ud83d\\ude00":1,"x-\U0001F600":1,"fields"'), ('"fields"', '"fields":null,"fields"'),
        ('"fields"', '"conflicts":[],"conflicts":[],"fields"'), ('"fields"', '"deleted":false,"deleted":false,"fields"'),
    ]
    for i, (old, new) in enumerate(dups):
        k += 1
        name = f"d{i:02d}"
        rec = base.replace(old, new, 1).replace("@ID", poison_id(k))
        files[name + ".json"] = ('{"format":1,"device":"' + name + '","generation":1,"records":[' + rec + "]}").encode("utf-8")
    k += 1
    files["dtop.json"] = ('{"format":1,"device":"dtop","generation":1,"records":[' + base.replace("@ID", poison_id(k)) +
                          '],"records":[]}').encode()
    k += 1
    files["dtop2.json"] = ('{"format":1,"device":"dtop2","generation":1,"\\u0072ecords":[],"records":[' +
                           base.replace("@ID", poison_id(k)) + "]}").encode()
    # keys that only look alike: not duplicates
    alike = ['{"é":1,"e\\u0301":2}', '{"a":1,"A":2}', '{"a":1,"a ":2}', '{"":1," ":2}', '{"\\u0000":1,"\\u0000\\u0000":2}',
             '{"\\ud83d\\ude00":1,"\\ud83d\\ude01":2}', '{"\\uFB33":1,"\\uFFFF":2,"\\ud800\\udc00":3}']
    lines = []
    for a in alike:
        n += 1
        lines.append(base.replace('{"f":1}', a).replace("@ID", uid(n)))
    files["a.json"] = snapshot("a", lines)
    return write_folder(root, "hostile-keys", files)


def hostile_lookalike(root):
    """Lines laid out as SnapshotSync writes them but not in normal form: the tie-break must use
    the normal form. Each A line is a spelling of the version whose normal form is the B line;
    both get a last member "zz" (1 or 2) so that the normal forms' JCS order is decided there,
    while a comparison of the lines as written is decided earlier, at the spelling. Versions of
    one id have identical vectors (or none), so only the greatest is kept."""
    I = lambda n: f"ABCD{n:04X}-ABCD-4EEE-8FFF-ABCDEF{n:06X}"  # noqa: E731
    tail_v = '"modifiedBy":"a","type":"T","versionVector":{"a":1}'
    f1 = '{"fields":{"n":1},"id":"@","lastModified":"' + T0 + '",'
    a_spellings = [
        f1 + tail_v + ',"x-z":null}',
        '{"deleted":false,"fields":{"n":2},"id":"@","lastModified":"' + T0 + '",' + tail_v + "}",
        f1 + '"modifiedBy":"a","schemaVersion":1,"type":"T","versionVector":{"a":1}}',
        f1 + '"modifiedBy":"a","schemaVersion":1.0,"type":"T","versionVector":{"a":1}}',
        f1 + '"modifiedBy":"a","schemaVersion":2.0,"type":"T","versionVector":{"a":1}}',
        f1 + '"modifiedBy":"a","schemaVersion":3e0,"type":"T","versionVector":{"a":1}}',
        '{"fields":{},"id":"@","lastModified":"' + T0 + '",' + tail_v + "}",
        '{"fields":null,"id":"@","lastModified":"' + T0 + '",' + tail_v + "}",
        '{"fields":{"n":1},"id":"@lower","lastModified":"' + T0 + '",' + tail_v + "}",
        '{"fields":{"n":1},"id":"@","lastModified":"2026-11-22T11:00:00.000+01:00",' + tail_v + "}",
        '{"fields":{"n":1},"id":"@","lastModified":"2026-11-22T10:00:00.0009Z",' + tail_v + "}",
        '{"fields":{"n":1},"id":"@","lastModified":"2026-11-22t10:00:00.000z",' + tail_v + "}",
        '{"fields":{"n":1},"id":"@","lastModified":"2026-11-22T10:00:00Z",' + tail_v + "}",
        '{"fields":{"n":1},"id":"@","lastModified":"2026-11-22T09:59:60Z",' + tail_v + "}",
        '{"fields":{"n":1},"id":"@","lastModified":"' + T0 + '","modifiedBy":"a","type":"T","versionVector":{"b":1,"a":1}}',
        '{"fields":{"n":1},"id":"@","lastModified":"' + T0 + '","modifiedBy":"a","type":"T","versionVector":{"a":1.0}}',
        '{"fields":{"n":1},"id":"@","lastModified":"' + T0 + '","modifiedBy":"a","type":"T","versionVector":{"a":1e0}}',
        '{"id":"@","lastModified":"' + T0 + '","modifiedBy":"a","type":"T","versionVector":{}}',
        '{"id":"@","lastModified":"' + T0 + '","modifiedBy":"a","type":"T","versionVector":null}',
        '{"conflicts":[],"fields":{"n":1},"id":"@","lastModified":"' + T0 + '",' + tail_v + "}",
        '{"conflicts":null,"fields":{"n":1},"id":"@","lastModified":"' + T0 + '",' + tail_v + "}",
        '{"deleted":null,"fields":{"n":1},"id":"@","lastModified":"' + T0 + '",' + tail_v + "}",
        '{"fields":{"n":1},"id":"@","lastModified":"' + T0 + '","modifiedBy":"a","schemaVersion":null,"type":"T","versionVector":{"a":1}}',
        '{"fields":{"n":1},"id":"@","lastModified":"' + T0 + '","modifiedBy":"a","type":"T","versionVector":{"a":1},"x":null}',
        '{"a":null,"fields":{"n":1},"id":"@","lastModified":"' + T0 + '",' + tail_v + "}",
        '{"fields":{"b":1,"a":1},"id":"@","lastModified":"' + T0 + '",' + tail_v + "}",
        '{"fields":{"\U0001F600":1,"\uFB33":1},"id":"@","lastModified":"' + T0 + '",' + tail_v + "}",
        '{"fields":{"\uFB33":1,"\U0001F600":1},"id":"@","lastModified":"' + T0 + '",' + tail_v + "}",
        '{"fields":{"x":{"b":[{"d":1,"c":1}],"a":1}},"id":"@","lastModified":"' + T0 + '",' + tail_v + "}",
        '{"id":"@","fields":{"n":1},"lastModified":"' + T0 + '",' + tail_v + "}",
        '{"type":"T","versionVector":{"a":1},"modifiedBy":"a","lastModified":"' + T0 + '","id":"@","fields":{"n":1}}',
        '{ "fields" : { "n" : 1 } , "id" : "@" , "lastModified" : "' + T0 + '" , ' + tail_v.replace(",", " , ").replace(":", " : ") + " }",
        '{"fields":{"n":1},"id":"@","lastModified":"' + T0 + '",\t' + tail_v + "\r\n}",
    ]
    for lit in ("1E2", "1e2", "100.0", "1e+21", "1E21", "1e21", "1e-07", "0.0000001", "-0", "-0.0", "2.50",
                "9007199254740993.0", "1e20", "0.10000000000000001", "1.0e-6", "0.1e-5", "5e-324", "4.9e-324",
                "1.7976931348623157e308", "0.30000000000000004", "3.0000000000000004e-1", "123456789012345678.9"):
        a_spellings.append(f1.replace('"n":1', '"n":' + lit) + tail_v + "}")
        a_spellings.append(f1.replace('{"n":1}', '{"n":[' + lit + "," + lit + "]}") + tail_v + "}")
    for esc_ in ("\\u0041", "\\u00e9", "\\/", "\\ud83d\\ude00", "\\u007f", "\\u001F", "\\u0008", "\\u2028", "\\uFFFF",
                 "\\u00E9\\u0301", "\\\\", '\\"', "\\b\\f\\n\\r\\t"):
        a_spellings.append(f1.replace('"n":1', '"s":"' + esc_ + '"') + tail_v + "}")
        a_spellings.append(f1.replace('"n":1', '"' + esc_ + '":1') + tail_v + "}")
        a_spellings.append(f1 + tail_v + ',"x-' + esc_ + '":"' + esc_ + '"}')

    def canonical(line):
        nf = R.normal_form(R.strict_loads(line.encode("utf-8")))
        text = R.jcs(nf).decode("utf-8")
        # JCS writes integral doubles >= 2^53 as digits, which a file may not hold: use an exponent
        return re.sub(r"(?<=[:\[,])(-?[0-9]{16,})(?=[,}\]])", lambda m: repr(float(m.group(1))), text)

    a_lines, b_lines, n = [], [], 0
    for spelled in a_spellings:
        for variant in range(8):
            n += 1
            rid = I(n)
            al = spelled.replace('"@lower"', '"' + rid.lower() + '"').replace('"@"', '"' + rid + '"')
            if variant & 1:  # without vectors
                al = re.sub(r',?\s*"versionVector"\s*:\s*(\{[^}]*\}|null)', "", al).replace("{,", "{")
            bl = canonical(al)
            za, zb = ("1", "2") if variant & 2 else ("2", "1")
            al = al[:al.rindex("}")] + ',"zz":' + za + "}"
            bl = bl[:-1] + ',"zz":' + zb + "}"
            if variant & 4:
                al, bl = bl, al
            a_lines.append(al)
            b_lines.append(bl)
    files = {"a.A.json": lookalike("a", a_lines, part="A"), "b.json": lookalike("b", b_lines, signed=False),
             "c.A.json": lookalike("c", b_lines, part="A"), "c.json": snapshot("c", a_lines)}
    return write_folder(root, "hostile-lookalike", files)


def hostile_shared_elements(root):
    """The same record bytes in a file that is rejected or skipped late (or where the record is
    rejected by its part) and in a valid file: the valid file's copy must merge."""
    files, lines_by_kind = {}, {}
    n = 1400
    kinds = ["sig-after", "dup-top", "lone-end", "trunc", "format3", "misnamed", "outside-part", "big-int-end", "gen0"]
    for kind in kinds:
        lines = []
        for j in range(5):
            n += 1
            lines.append(J({"id": f"7C{n:06X}-0000-4000-8000-{n:012X}", "type": "T", "lastModified": T0, "modifiedBy": "a",
                            "versionVector": {"a": 1}, "fields": {"kind": kind, "j": j}}))
        lines_by_kind[kind] = lines
    L = lines_by_kind
    files["a.json"] = lookalike("a", L["sig-after"], signed=False)[:-3] + (SIG + ',"x":1}\n').encode()
    files["b.json"] = lookalike("b", L["dup-top"], signed=False)[:-3] + b',"generation":2}\n'
    files["c.json"] = lookalike("c", L["lone-end"], signed=False)[:-3] + b',"x":"\\ud800"}\n'
    files["d.json"] = lookalike("d", L["trunc"], signed=False)[:-4]
    files["e.json"] = lookalike("e", L["format3"], signed=False).replace(b'"format":2', b'"format":3')
    files["f.json"] = lookalike("g", L["misnamed"], signed=False)
    files["h.3.json"] = lookalike("h", L["outside-part"], part="3", signed=False)
    files["i.json"] = lookalike("i", L["big-int-end"], signed=False)[:-3] + b',"x":9007199254740992}\n'
    files["j.json"] = lookalike("j", L["gen0"], signed=False).replace(b'"generation":1', b'"generation":0')
    # the valid holders, named to come after (z) and before (0) the bad ones
    everything = [ln for kind in kinds for ln in L[kind]]
    files["z.json"] = lookalike("z", everything, signed=False)
    files["0.7.json"] = lookalike("0", everything, part="7", signed=False)
    return write_folder(root, "hostile-shared-elements", files)


# ---- randomized folders: random versions, spread over files and conflict entries, respelled


def spell_number(x, rng):
    """A random valid spelling of a JSON number with the value x (int within 2^53, or float)."""
    if isinstance(x, int) and not isinstance(x, bool):
        choices = [str(x), f"{x}.0", f"{x}e0", f"{x}E+0", f"{x * 10}e-1", f"{x}.000"]
        if x == 0:
            choices += ["-0", "0e5", "-0.0"]
        return rng.choice(choices)
    if x == 0:
        return rng.choice(["0.0", "-0.0", "0e-3", "-0E+7"])
    es = R.es_number(x)
    if "e" in es or abs(x) >= 2 ** 53:
        forms = [repr(x), "%.17g" % x, "%.17e" % x, "%.20e" % x]
    else:
        forms = [es, repr(x), "%.17g" % x, "%.17e" % x, "%.20e" % x, es + ("0" if "." in es else ".0")]

    def fits(f):
        if float(f) != x:
            return False
        if re.fullmatch(r"-?[0-9]+", f):  # written as an integer: only within +-(2^53-1)
            return abs(int(f)) <= R.MAX_SAFE
        return True
    return rng.choice([f for f in forms if fits(f)])


def spell_string(s_, rng):
    if rng.random() < 0.15:
        return '"' + "".join(c if 0x20 <= ord(c) < 0x7F and c not in '"\\' else
                             "".join("\\u%04x" % u for u in struct_utf16(c)) for c in s_) + '"'
    return json.dumps(s_, ensure_ascii=False)


def struct_utf16(c):
    b = c.encode("utf-16-be")
    return [int.from_bytes(b[i:i + 2], "big") for i in range(0, len(b), 2)]


def spell_json(v, rng, shuffle=0.2):
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, (int, float)):
        return spell_number(v, rng)
    if isinstance(v, str):
        return spell_string(v, rng)
    if isinstance(v, list):
        return "[" + ",".join(spell_json(x, rng) for x in v) + "]"
    items = list(v.items())
    if rng.random() < shuffle:
        rng.shuffle(items)
    return "{" + ",".join(spell_string(k, rng) + ":" + spell_json(x, rng) for k, x in items) + "}"


def spell_timestamp(ms, rng):
    r = rng.random()
    if r < 0.7:
        return R.written_form(ms)
    offset = rng.choice([0, 60, -60, 330, -330, 840, -720, 23 * 60 + 59, -(23 * 60 + 59)])
    local = ms + offset * 60000
    text = R.written_form(local)[:-5]  # up to seconds
    digits = rng.choice([3, 3, 4, 6, 9, 12]) if ms % 1000 else rng.choice([0, 3, 6])
    frac = f"{ms % 1000:03d}" + "".join(rng.choice("0123456789") for _ in range(max(0, digits - 3)))
    text = text + ("." + frac[:max(digits, 3)] if digits else "")
    sign = "+" if offset >= 0 else "-"
    zone = "Z" if offset == 0 and rng.random() < 0.5 else f"{sign}{abs(offset) // 60:02d}:{abs(offset) % 60:02d}"
    if rng.random() < 0.1:
        text, zone = text.replace("T", "t"), zone.replace("Z", "z")
    return text + zone


def spell_version(nf, rng, entry_conflicts=None):
    """A random spelling (JSON text) of a version given by its normal form."""
    items = []
    for key, value in nf.items():
        if key == "id":
            items.append((key, '"' + (value.lower() if rng.random() < 0.1 else value) + '"'))
        elif key == "lastModified":
            items.append((key, '"' + spell_timestamp(R.parse_timestamp(value), rng) + '"'))
        else:
            items.append((key, spell_json(value, rng)))
    present = set(nf)
    for key, default in (("schemaVersion", 1), ("deleted", False), ("fields", {}), ("versionVector", {})):
        if key not in present and rng.random() < 0.06:
            items.append((key, spell_json(default, rng)))
            present.add(key)
    for key in ("lastModified", "modifiedBy", "x-removed", "schemaVersion", "fields"):
        if key not in present and rng.random() < 0.03:
            items.append((key, "null"))
            present.add(key)
    if entry_conflicts is not None:
        if entry_conflicts or rng.random() < 0.05:
            items.append(("conflicts", "[" + ",".join(entry_conflicts) + "]"))
    elif rng.random() < 0.03:
        items.append(("conflicts", rng.choice(["[]", "null"])))
    if rng.random() < 0.3:
        rng.shuffle(items)
    return "{" + ",".join(spell_string(k, rng) + ":" + v for k, v in items) + "}"


FIELD_POOL = [{}, {"n": 1}, {"n": 10}, {"n": 1e21}, {"n": 1e20}, {"n": -0.0, "m": 2}, {"n": 0.1 + 0.2}, {"n": 1e-7},
              {"s": "é"}, {"s": "\U0001F600"}, {"s": "\uFB33"}, {"s": "a\u0000b\u001f"}, {"\U0001F600": 1, "\uFB33": 2},
              {"\uFB33": 1, "\U0001F600": 2}, {"k": [1, {"b": None, "a": True}]}, {"k": "x" * 40},
              {"n": 5e-324}, {"n": 123456789.123456789}, {"": ""}, {"n": None}]
DEVICE_POOL = ["a", "b", "c", "d", "e", "f.g", "h-1", "z", "a0", "a_b"]


def random_versions(rng, rid, clock_ok):
    base = 1_795_000_000_000
    out = []
    for _ in range(rng.choice([1, 2, 2, 3, 3, 4, 5, 6])):
        nf = {"id": rid, "type": rng.choice(["T", "T", "U", "T\U0001F600"])}
        vectored = rng.random() < 0.75
        if vectored:
            pool = DEVICE_POOL[:rng.choice([2, 3, 5, 10])]
            devs = rng.sample(pool, min(len(pool), rng.choice([1, 1, 2, 2, 3])))
            nf["versionVector"] = {d: rng.choice([1, 1, 2, 3]) for d in devs}
        if rng.random() < 0.2:
            nf["schemaVersion"] = rng.choice([2, 3])
        if vectored or rng.random() < 0.85:
            total = sum(nf.get("versionVector", {}).values())
            jitter = rng.choice([0, 0, 0, 1, 999])
            nf["lastModified"] = R.written_form(base + (total * 1000 if clock_ok and vectored else rng.choice([1, 2, 3, 4, 5]) * 1000) + jitter)
        if rng.random() < 0.9:
            nf["modifiedBy"] = rng.choice(DEVICE_POOL[:4])
        if rng.random() < 0.2:
            nf["deleted"] = True
        f = rng.choice(FIELD_POOL)
        if f:
            nf["fields"] = f
        if rng.random() < 0.08:
            nf[rng.choice(["x-a", "_x", "zz", "\U0001F600", "A"])] = rng.choice([0, "v", [1.5, None], {"q": {}}])
        out.append(R.normal_form(json.loads(J(nf))))
    return out


def random_folder(root, name, seed, records, clock_ok=True, parts=False, id_seed=None):
    """Random versions of `records` ids, each version given to 1-3 of the files a, b, c (and
    copies), as the record's top-level version or as a conflict entry, each time spelled anew.
    Folders made with one id_seed share their ids (for staged merges)."""
    rng = random.Random(seed)
    id_rng = rng if id_seed is None else random.Random(id_seed)
    holders = ["a.json", "a (1).json", "b.json", "c.json", "c.sync-conflict-1.json"]
    content = {h: [] for h in holders}
    for i in range(records):
        rid = f"{id_rng.getrandbits(32):08X}-{id_rng.getrandbits(16):04X}-4{id_rng.getrandbits(12):03X}-8{id_rng.getrandbits(12):03X}-{id_rng.getrandbits(48):012X}"
        given = {h: [] for h in holders}
        for nf in random_versions(rng, rid, clock_ok):
            for h in rng.sample(holders, rng.choice([1, 1, 2, 3])):
                given[h].append(nf)
        for h, versions in given.items():
            if not versions:
                continue
            top, entries = versions[0], versions[1:]
            texts = [spell_version(e, rng, entry_conflicts=[] if rng.random() < 0.02 else None) for e in entries]
            content[h].append(spell_version(top, rng, entry_conflicts=texts))
    files = {}
    for h, lines in content.items():
        device = h.split(".")[0].split(" ")[0]
        if parts and h == "b.json":
            for digit in "0123456789ABCDEF":
                mine = [ln for ln in lines if re.search(r'"id":"' + "[" + digit + digit.lower() + "]", ln)
                        or re.search(r'"\\u0069d":"[' + digit + digit.lower() + "]", ln)]
                files[f"b.{digit}.json"] = lookalike("b", mine, part=digit, signed=rng.random() < 0.5)
            continue
        files[h] = snapshot(device, lines, gen=rng.randint(1, 9))
    return write_folder(root, name, files)


def big_folder(root, seed, records=20000):
    """Three files of about 10 MB each (big enough to be read in pieces): one a single line, one a
    record a line, one indented with CRLF; strings that look like record boundaries."""
    rng = random.Random(seed)
    tricky = ['},\n{"id":"', '"},{"id":"00000000-0000-4000-8000-000000000000"}', "\\", "\\\\\"", "]}\n", "\r\n",
              "\u2028", "\U0001F600" * 3, "é" * 7, '{"format":1,"device":"x","generation":1,"records":[',
              '\\"},{\\"id\\":\\"', '"\\', "\u0000\u001f", '\n],"signature":"ed25519:', "\\u0022"]
    base = 1_795_000_000_000
    per = {"a": [], "b": [], "c": []}
    for i in range(records):
        rid = f"{i:08X}-{rng.getrandbits(16):04X}-4000-8000-{rng.getrandbits(48):012X}"
        text = "".join(rng.choice(tricky) + "x" * rng.randint(0, 40) for _ in range(rng.randint(5, 12)))
        if abs(i - records // 2) <= 4:  # long strings around the middle, where a file is cut in pieces
            text = "".join(rng.choice(tricky) + "y" * rng.randint(0, 7) for _ in range(12000))
        v0 = {"id": rid, "type": "Big", "lastModified": R.written_form(base + i), "modifiedBy": "a",
              "versionVector": {"a": 1}, "fields": {"text": text, "n": rng.random() * 10 ** rng.randint(-5, 25)}}
        for dev in per:
            v = v0
            if rng.random() < 0.08:
                v = dict(v0, modifiedBy=dev, lastModified=R.written_form(base + records + rng.randint(0, 2)),
                         versionVector={"a": 1, dev: 2 if dev == "a" else 1}, fields={"text": text[::-1], "d": dev})
            per[dev].append(v)
    a_doc = {"format": 1, "device": "a", "generation": 1, "records": per["a"]}
    files = {
        "a.json": json.dumps(a_doc, ensure_ascii=False, separators=(",", ":")).encode("utf-8"),
        "b.json": snapshot("b", per["b"]),
        "c.json": json.dumps({"records": per["c"], "device": "c", "format": 1, "generation": 2},
                             ensure_ascii=True, indent=1).replace("\n", "\r\n").encode("ascii"),
    }
    return write_folder(root, f"big-pieces-s{seed}", files)


def hostile_deep(root):
    """Deep nesting in fields, up to syncctl's 512 levels (a record nested deeper: hostile-ambiguous)."""
    recs = []
    for n, depth in ((1501, 64), (1502, 200), (1503, 500), (1504, 508)):
        deep = "[" * depth + "1" + "]" * depth
        deep_obj = '{"a":' * depth + "1" + "}" * depth
        recs.append('{"id":"' + uid(n) + '","type":"T","versionVector":{"a":1},"fields":{"x":' + deep + ',"y":' + deep_obj + "}}")
    return write_folder(root, "hostile-deep", {"a.json": snapshot("a", recs)})


def hostile_big(root):
    """Large counts (beyond 32 bits, up to 2^53-1), wide vectors, a wide antichain of concurrent
    versions, the same id twice in one file, entries equal to their record's version."""
    A, B, C = [], [], []
    n = 1600

    def v(vec, s=0, by="a", **kw):
        return dict({"type": "T", "lastModified": f"2026-11-22T10:00:{s:02d}Z", "modifiedBy": by, "versionVector": vec}, **kw)

    for big in (2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1, 2 ** 32, 2 ** 32 + 1, 2 ** 52, 2 ** 53 - 2, 2 ** 53 - 1):
        n += 1  # {a: big} against {a: 2}, {a: big, b: 1}; and the schemaVersion kept exactly
        A.append(dict(v({"a": big}, 5), id=uid(n), schemaVersion=big))
        B.append(dict(v({"a": 2, "b": 1}, 6, "b"), id=uid(n)))
        C.append(dict(v({"a": big - 1 if big > 1 else 1, "c": 1}, 7, "c"), id=uid(n)))
        n += 1
        A.append(dict(v({"a": big}, 5), id=uid(n)))
        B.append(dict(v({"a": big, "b": 1}, 4, "b"), id=uid(n)))  # dominates A's, though earlier
    files_extra = {"big.json": snapshot("big", [dict(v({"big": 1}), id=uid(1699))], gen=2 ** 53 - 1)}
    # wide vectors
    n += 1
    wide = {f"d{i}": i + 1 for i in range(120)}
    A.append(dict(v(wide, 10), id=uid(n)))
    B.append(dict(v(dict(wide, d77=1000), 9, "b"), id=uid(n)))        # dominates, earlier clock
    C.append(dict(v(dict(wide, d3=1, zz=1), 11, "c"), id=uid(n)))      # concurrent (d3 lower, zz new)
    # a wide antichain: 240 concurrent versions of one record, many with equal lastModified
    n += 1
    rid = uid(n)
    versions = [dict(v({f"w{i}": 1}, i % 3, ["a", "b", "c", "a0"][i % 4], fields={"i": i % 7}), id=rid) for i in range(240)]
    A.append(dict(versions[0], conflicts=versions[1:80]))
    B.append(dict(versions[80], conflicts=versions[81:160]))
    C.append(dict(versions[160], conflicts=versions[161:240] + versions[1:10]))
    # the same id twice in one file; an entry equal to its record's version; an entry spelled apart
    n += 1
    A.append(dict(v({"a": 1}, 1), id=uid(n)))
    A.append(dict(v({"b": 1}, 2, "b"), id=uid(n)))
    n += 1
    top = dict(v({"a": 1}, 1), id=uid(n))
    A.append(dict(top, conflicts=[dict(top), dict(top, id=uid(n).lower(), deleted=False)]))
    files = {"a.json": snapshot("a", A), "b.json": snapshot("b", B), "c.json": snapshot("c", C)}
    files.update(files_extra)
    return write_folder(root, "hostile-big", files)


def hostile_filenames(root):
    """Every (name, device inside) pair of the vectors' filenames.json as a real file holding a
    record of its own (a name used twice goes to another folder), plus timestamps with very many
    fractional digits."""
    path = os.path.join(VECTORS, "filenames.json")
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        cases = json.load(f)
    folders = []
    for i, case in enumerate(cases):
        for files in folders:
            if case["name"] not in files:
                break
        else:
            files = {}
            folders.append(files)
        digits = "1234567890" * (1 + i % 5)
        rec = {"id": uid(2000 + i), "type": "T", "lastModified": f"2026-11-22T10:00:00.{digits}Z",
               "modifiedBy": "a", "versionVector": {"a": 1}, "fields": {"name": case["name"]}}
        files[case["name"]] = ('{"format":1,"device":' + json.dumps(case["deviceInside"], ensure_ascii=False) +
                               ',"generation":1,"records":[' + J(rec) + "]}").encode("utf-8")
    return [write_folder(root, f"hostile-filenames-{k}", files) for k, files in enumerate(folders)]


def hostile_all(root):
    out = [hostile_spellings(root)]
    out += hostile_jcs(root)
    out += [hostile_vectorless(root), hostile_dominated(root), hostile_copies(root), hostile_parts(root),
            hostile_formats(root), hostile_timestamps(root), hostile_records(root), hostile_ambiguous(root),
            hostile_strings(root), hostile_numbers(root), hostile_keys(root), hostile_lookalike(root),
            hostile_shared_elements(root), hostile_big(root), hostile_deep(root)]
    out += hostile_filenames(root)
    return out


def vector_folders():
    return sorted(glob.glob(os.path.join(VECTORS, "merge", "*", "input"))) + \
        sorted(glob.glob(os.path.join(VECTORS, "random", "*", "input")))


# ---------------------------------------------------------------------------------------------


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("folders", nargs="*", help="shared folders to check")
    p.add_argument("--syncctl", default=DEFAULT_SYNCCTL)
    p.add_argument("--device", default="zzcheck", help="the device syncctl merges as (default zzcheck)")
    p.add_argument("--generate", action="store_true", help="build test folders and check them")
    p.add_argument("--vectors", action="store_true", help="also check the contract's vector folders")
    p.add_argument("--hostile-only", action="store_true", help="with --generate: only the hand-made folders")
    p.add_argument("--quick", action="store_true", help="with --generate: leave out the 20,000-record folders")
    p.add_argument("--keep", action="store_true", help="keep the work directories")
    p.add_argument("--incremental", action="store_true",
                   help="also merge each folder in two stages with one state (an earlier state of it made by "
                        "make_stage1, then the folder) and compare with the reference merge of both")
    p.add_argument("--show", type=int, default=5, help="differences shown in full per folder (default 5)")
    p.add_argument("--timeout", type=float, default=600, help="seconds per syncctl run")
    p.add_argument("--tmp", default="/tmp", help="where the /tmp/speccheck-* work directories go")
    args = p.parse_args()
    if not os.access(args.syncctl, os.X_OK):
        sys.exit(f"no syncctl binary at {args.syncctl}")
    folders = [(f, f) for f in args.folders]
    gen_root = None
    if args.generate:
        gen_root = tempfile.mkdtemp(prefix="speccheck-gen-", dir=args.tmp)
        print(f"generating under {gen_root}", flush=True)
        made = hostile_all(gen_root)
        made += [random_folder(gen_root, "random-s31", 31, 3000),
                 random_folder(gen_root, "random-s32-parts", 32, 3000, parts=True),
                 random_folder(gen_root, "random-s33-clockless", 33, 3000, clock_ok=False)]
        if not args.hostile_only:
            made += gen_generate_py(gen_root, args.quick)
            made += gen_shapes(gen_root, args.quick)
            if not args.quick:
                made += [random_folder(gen_root, "random-s34-20k", 34, 20000, parts=True), big_folder(gen_root, 35)]
        folders += [(f, os.path.basename(f)) for f in made]
    staged = []
    if args.generate and args.incremental:
        for k, (parts, clock_ok) in enumerate(((False, True), (True, True), (False, False))):
            s1 = random_folder(gen_root, f"staged-{k}-stage1", 50 + 2 * k, 3000, clock_ok=clock_ok, parts=parts, id_seed=60 + k)
            s2 = random_folder(gen_root, f"staged-{k}-stage2", 51 + 2 * k, 3000, clock_ok=clock_ok, parts=parts, id_seed=60 + k)
            staged.append(([s1, s2, s2], f"staged-{k}{'-parts' if parts else ''}{'' if clock_ok else '-clockless'} [3 stages]"))
    if args.vectors:
        folders += [(f, os.path.relpath(os.path.dirname(f), VECTORS)) for f in vector_folders()]
    if not folders and not staged:
        p.error("no folder to check (give folders, --generate or --vectors)")
    total = {"folders": 0, "ids": 0, "versions": 0, "diffs": 0, "failed": 0, "ambiguous": 0}
    try:
        runs = [(stages, label, stages) for stages, label in staged]
        for folder, label in folders:
            runs.append((folder, label, None))
            if args.incremental:
                runs.append((folder, label + " [incremental]", "stages"))
        stage_root = tempfile.mkdtemp(prefix="speccheck-stages-", dir=args.tmp) if args.incremental else None
        for i, (folder, label, mode) in enumerate(runs):
            stages = None
            if mode == "stages":
                stages = [make_stage1(folder, os.path.join(stage_root, f"{i}-stage1"), i), folder]
            elif isinstance(mode, list):
                stages, folder = mode, mode[-1]
            r = check_folder(folder, args, label, stages=stages)
            if mode == "stages":
                shutil.rmtree(stages[0], ignore_errors=True)
            total["folders"] += 1
            total["ids"] += r["ids"]
            total["versions"] += r["versions"]
            ambiguous = label.startswith("hostile-ambiguous")
            if ambiguous:  # readings the contract leaves open: shown, not counted
                total["ambiguous"] += len(r["diffs"])
            else:
                total["diffs"] += len(r["diffs"])
                total["failed"] += bool(r["diffs"])
            times = r.get("times")
            t = f" syncctl {times[0]:.1f}s, reference {times[1]:.1f}s" if times else ""
            print(f"{('AMBIG' if ambiguous else 'FAIL') if r['diffs'] else 'ok  '} {label}: {r['ids']} ids, {r['conflicted']} with conflicts, "
                  f"{r['versions']} versions, exit {r.get('rc')}, {r.get('published', 0)} published files;"
                  f" {len(r['diffs'])} differences;{t}", flush=True)
            for kind, rid, ref, got in r["diffs"][:args.show]:
                print(f"  --- {kind}: {rid}")
                if ref is not None:
                    print("  reference: " + str(ref).replace("\n", "\n             "))
                if got is not None:
                    print("  syncctl:   " + str(got).replace("\n", "\n             "))
            if len(r["diffs"]) > args.show:
                kinds = {}
                for d in r["diffs"]:
                    kinds[d[0]] = kinds.get(d[0], 0) + 1
                print(f"  ... {len(r['diffs']) - args.show} more ({kinds})")
            for note in r["notes"][:8]:
                print("  note: " + note)
    finally:
        if args.incremental and stage_root:
            shutil.rmtree(stage_root, ignore_errors=True)
        if gen_root and not args.keep:
            shutil.rmtree(gen_root, ignore_errors=True)
        elif gen_root:
            print(f"kept {gen_root}")
    print(f"\n{total['folders']} folders, {total['ids']} record ids, {total['versions']} versions checked; "
          f"{total['failed']} folders with differences, {total['diffs']} differences in all"
          + (f" (and {total['ambiguous']} where the contract leaves the reading open)" if total["ambiguous"] else ""))
    sys.exit(1 if total["diffs"] else 0)


if __name__ == "__main__":
    main()
