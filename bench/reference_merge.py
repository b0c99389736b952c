#!/usr/bin/env python3
"""Reference merge: an independent, plain reading of the contract
(../shared/spec/snapshot-format.md, "Snapshot format, version 2"), written from the contract
alone, to serve as an oracle for syncctl's merge. Python 3, standard library only.

    python3 bench/reference_merge.py FOLDER [--out FILE] [--jsonl] [--report]

Reads every source in the shared folder FOLDER and merges them as a device with an empty local
store and an empty trust list would (signatures are not checked; signed and unsigned files
merge alike, but a format 2 file whose `signature` is not its exact last member is rejected).

Output (stdout, or --out FILE): one JSON object, RFC 8785 (JCS) serialized, mapping each record
id (upper case) to {"winner": <normal form>, "conflicts": [<normal forms>, greatest first]}.
With --jsonl: the vectors' expected.jsonl form instead (one line per id, sorted: the winner's
normal form plus "conflicts" when there are any). With --report: what was read, skipped and
rejected, on stderr.

As a module: `merge_folder(path)` returns (merged, report), where merged maps id ->
(winner_normal_form, [conflict_normal_forms]) and normal forms are plain dicts; `jcs(value)`
gives the RFC 8785 bytes of a value; `normal_form(obj)` validates one version and returns its
normal form (raises BadVersion); `read_file_bytes(name, data)` parses and validates a file;
`merge_stages([path, ...])` is what one store holds after merging the folders one after another.

Checked against every conformance vector (jcs/, timestamps.json, filenames.json, merge/*,
random/*: all pass) and its ECMAScript number formatting against node's String(x) on 300,000
doubles.

Readings of the contract that it takes where the text leaves room (see README of the vectors):
  * An integer (where one is required) is any number whose double value is integral and within
    +-(2^53-1): `2.0`, `1e0`, `1E+2` count; `1.5` does not. Numbers written as integers (no
    fraction, no exponent) beyond +-(2^53-1), or any number beyond the double range, anywhere in
    the file, make the whole file invalid (I-JSON). A number that underflows to 0 is accepted.
  * `null` on the top-level `part` is treated as absent (as for optional record keys).
  * For format 2, `key` (if present and not null) must be "ed25519:" and the base64 of 32 bytes,
    and `signature` (if present at top level) the file's exact last member
    `,"signature":"ed25519:<base64 of 64 bytes>"}` (then at most one newline), even though
    signatures are not checked; otherwise the file is not merged. For format 1, `part`, `key` and
    `signature` are unknown top-level keys: ignored.
  * The prefix rule of parts applies to every version in a part (records and their conflict
    entries alike).
  * No limit on nesting depth (the contract names none; syncctl stops at 512 levels).
"""
import base64
import json
import os
import re
import stat
import sys

MAX_SAFE = 2 ** 53 - 1
sys.setrecursionlimit(max(sys.getrecursionlimit(), 20000))  # deeply nested fields (JCS recurses)

# ---------------------------------------------------------------------------------------------
# Strict I-JSON parsing


class InvalidJSON(Exception):
    """The bytes are not complete, valid I-JSON."""


def _pairs(pairs):
    obj = {}
    for key, value in pairs:
        if key in obj:
            raise InvalidJSON(f"duplicate key {key!r}")
        obj[key] = value
    return obj


def _parse_int(text):
    # A number written as an integer (no fraction, no exponent) must be within +-(2^53-1).
    if len(text.lstrip("-")) > 17:
        raise InvalidJSON(f"integer {text[:40]} beyond +-(2^53-1)")
    value = int(text)
    if abs(value) > MAX_SAFE:
        raise InvalidJSON(f"integer {text} beyond +-(2^53-1)")
    return value


def _parse_float(text):
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise InvalidJSON(f"number {text[:40]} beyond the double range")
    return value


def _parse_constant(text):
    raise InvalidJSON(f"{text} is not JSON")


_SURROGATE = re.compile("[\ud800-\udfff]")


def _check_strings(value):
    """No lone surrogates in any string or key (a valid pair decodes to one character)."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            if _SURROGATE.search(v):
                raise InvalidJSON("lone surrogate in a string")
        elif isinstance(v, dict):
            for k, x in v.items():
                if _SURROGATE.search(k):
                    raise InvalidJSON("lone surrogate in a key")
                stack.append(x)
        elif isinstance(v, list):
            stack.extend(v)


def strict_loads(data):
    """Parse bytes as I-JSON: UTF-8 (a leading BOM ignored), no duplicate keys, no lone
    surrogates, numbers within the double range, integers within +-(2^53-1)."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text = data.decode("utf-8")  # strict: encoded surrogates and bad bytes are errors
    except UnicodeDecodeError as e:
        raise InvalidJSON(f"not UTF-8: {e}")
    try:
        value = json.loads(text, object_pairs_hook=_pairs, parse_int=_parse_int,
                           parse_float=_parse_float, parse_constant=_parse_constant)
    except InvalidJSON:
        raise
    except (ValueError, RecursionError) as e:
        raise InvalidJSON(f"not valid JSON: {e}")
    _check_strings(value)
    return value


# ---------------------------------------------------------------------------------------------
# RFC 8785 (JCS) serialization


def es_number(x):
    """ECMA-262 Number::toString(x) for a finite double (RFC 8785 section 3.2.2.3)."""
    if x != x or x in (float("inf"), float("-inf")):
        raise ValueError("not a finite number")
    if x == 0:
        return "0"  # also -0
    if x < 0:
        return "-" + es_number(-x)
    # Python's repr gives the shortest digit string that round-trips, closest to x: the same
    # digits s and exponent n as ECMA-262 asks for. Only the layout differs.
    r = repr(x)
    mantissa, _, exponent = r.partition("e")
    exponent = int(exponent) if exponent else 0
    int_part, _, frac_part = mantissa.partition(".")
    digits = int_part + frac_part
    n = len(int_part) + exponent  # x = 0.digits * 10^n
    stripped = digits.lstrip("0")
    n -= len(digits) - len(stripped)
    digits = stripped.rstrip("0")
    k = len(digits)
    if k <= n <= 21:
        return digits + "0" * (n - k)
    if 0 < n <= 21:
        return digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return "0." + "0" * (-n) + digits
    e = n - 1
    sign = "+" if e >= 0 else "-"
    if k == 1:
        return digits + "e" + sign + str(abs(e))
    return digits[0] + "." + digits[1:] + "e" + sign + str(abs(e))


_SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def _jcs_string(s):
    out = ['"']
    for ch in s:
        if ch in _SHORT_ESCAPES:
            out.append(_SHORT_ESCAPES[ch])
        elif ord(ch) < 0x20:
            out.append("\\u%04x" % ord(ch))
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _jcs_text(v):
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, int):
        if abs(v) <= MAX_SAFE:
            return str(v)
        return es_number(float(v))
    if isinstance(v, float):
        return es_number(v)
    if isinstance(v, str):
        return _jcs_string(v)
    if isinstance(v, list):
        return "[" + ",".join(_jcs_text(x) for x in v) + "]"
    if isinstance(v, dict):
        keys = sorted(v, key=lambda k: k.encode("utf-16-be"))  # UTF-16 code unit order
        return "{" + ",".join(_jcs_string(k) + ":" + _jcs_text(v[k]) for k in keys) + "}"
    raise TypeError(f"not a JSON value: {type(v)}")


def jcs(value):
    """RFC 8785 canonical bytes of a parsed JSON value."""
    return _jcs_text(value).encode("utf-8")


# ---------------------------------------------------------------------------------------------
# Scalars of the format

DEVICE_ID = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
UUID = re.compile(r"[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}")
PREFIX = re.compile(r"[0-9A-F]{1,4}")
TIMESTAMP = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})"
                       r"(?:\.([0-9]+))?([Zz]|[+-][0-9]{2}:[0-9]{2})")
KEY_FORM = re.compile(r"ed25519:[A-Za-z0-9+/]{43}=")
SIGNATURE_TAIL = re.compile(rb',"signature":"ed25519:([A-Za-z0-9+/]{86}==)"\}\n?\Z')
MIN_MS = -62167219200000      # 0000-01-01T00:00:00.000Z
MAX_MS = 253402300799999      # 9999-12-31T23:59:59.999Z


def is_device_id(v):
    return isinstance(v, str) and DEVICE_ID.fullmatch(v) is not None


def integer_value(v):
    """The integer a JSON number stands for where an integer is required, else None."""
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v if abs(v) <= MAX_SAFE else None
    if isinstance(v, float) and v.is_integer() and abs(v) <= MAX_SAFE:
        return int(v)
    return None


def _days_from_civil(y, m, d):
    """Days since 1970-01-01 in the proleptic Gregorian calendar (year 0 included)."""
    y -= m <= 2
    era = y // 400  # floor division (the C original emulates it)
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _civil_from_days(z):
    z += 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + (3 if mp < 10 else -9)
    return y + (m <= 2), m, d


def _days_in_month(y, m):
    if m == 2:
        leap = y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)
        return 29 if leap else 28
    return 30 if m in (4, 6, 9, 11) else 31


def parse_timestamp(v):
    """Integer milliseconds since the epoch of an RFC 3339 date-time, or None if invalid."""
    if not isinstance(v, str):
        return None
    m = TIMESTAMP.fullmatch(v)
    if not m:
        return None
    year, month, day, hour, minute, second = (int(m.group(i)) for i in range(1, 7))
    fraction, offset = m.group(7), m.group(8)
    if not (1 <= month <= 12 and 1 <= day <= _days_in_month(year, month)):
        return None
    if hour > 23 or minute > 59 or second > 60:
        return None
    offset_minutes = 0
    if offset not in ("Z", "z"):
        oh, om = int(offset[1:3]), int(offset[4:6])
        if oh > 23 or om > 59:
            return None
        offset_minutes = (oh * 60 + om) * (1 if offset[0] == "+" else -1)
    millis = int((fraction or "")[:3].ljust(3, "0"))  # truncate, never round
    seconds = _days_from_civil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second
    ms = (seconds - offset_minutes * 60) * 1000 + millis  # :60 is the next minute's :00
    if not MIN_MS <= ms <= MAX_MS:
        return None
    return ms


def written_form(ms):
    seconds, millis = divmod(ms, 1000)
    days, secs = divmod(seconds, 86400)
    y, mo, d = _civil_from_days(days)
    return "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ" % (y, mo, d, secs // 3600, secs // 60 % 60, secs % 60, millis)


# ---------------------------------------------------------------------------------------------
# Versions


class BadVersion(Exception):
    pass


KNOWN_DEFAULTS = {"schemaVersion": 1, "versionVector": {}, "deleted": False, "fields": {}, "conflicts": []}


def normal_form(obj, *, is_entry=False):
    """Validate one version (a record's top-level version, or an entry of its conflicts) and
    return its normal form, without `conflicts`. Raises BadVersion."""
    if not isinstance(obj, dict):
        raise BadVersion("not an object")
    rid = obj.get("id")
    if not isinstance(rid, str) or not UUID.fullmatch(rid):
        raise BadVersion(f"id {rid!r} is not a UUID")
    nf = {"id": rid.upper()}

    t = obj.get("type")
    if not isinstance(t, str) or not 1 <= len(t) <= 128:
        raise BadVersion(f"type {t!r} is not 1 to 128 characters")
    nf["type"] = t

    sv = obj.get("schemaVersion")
    if sv is not None:
        n = integer_value(sv)
        if n is None or n < 1:
            raise BadVersion(f"schemaVersion {sv!r} is not an integer >= 1")
        if n != 1:
            nf["schemaVersion"] = n

    lm = obj.get("lastModified")
    if lm is not None:
        ms = parse_timestamp(lm)
        if ms is None:
            raise BadVersion(f"lastModified {lm!r} is not a valid timestamp")
        nf["lastModified"] = written_form(ms)

    mb = obj.get("modifiedBy")
    if mb is not None:
        if not is_device_id(mb):
            raise BadVersion(f"modifiedBy {mb!r} is not a device ID")
        nf["modifiedBy"] = mb

    vv = obj.get("versionVector")
    if vv is not None:
        if not isinstance(vv, dict):
            raise BadVersion("versionVector is not an object")
        vector = {}
        for dev, count in vv.items():
            n = integer_value(count)
            if not is_device_id(dev) or n is None or not 1 <= n <= MAX_SAFE:
                raise BadVersion(f"versionVector entry {dev!r}: {count!r}")
            vector[dev] = n
        if vector:
            nf["versionVector"] = vector

    dl = obj.get("deleted")
    if dl is not None:
        if not isinstance(dl, bool):
            raise BadVersion(f"deleted {dl!r} is not a boolean")
        if dl:
            nf["deleted"] = True

    fl = obj.get("fields")
    if fl is not None:
        if not isinstance(fl, dict):
            raise BadVersion("fields is not an object")
        if fl:
            nf["fields"] = fl  # opaque, kept verbatim (nulls inside included)

    cf = obj.get("conflicts")
    if cf is not None:
        if not isinstance(cf, list):
            raise BadVersion("conflicts is not an array")
        if is_entry and cf:
            raise BadVersion("a conflict entry has conflicts of its own")

    for key, value in obj.items():
        if key in ("id", "type", "schemaVersion", "lastModified", "modifiedBy", "versionVector",
                   "deleted", "fields", "conflicts"):
            continue
        if value is not None:
            nf[key] = value  # unknown keys kept verbatim; null ones left out
    return nf


class Version:
    """A normal form with what the last-writer order needs."""
    __slots__ = ("nf", "canon", "key", "vector")

    def __init__(self, nf):
        self.nf = nf
        self.canon = jcs(nf)
        lm = nf.get("lastModified")
        mb = nf.get("modifiedBy")
        self.key = ((0, 0) if lm is None else (1, parse_timestamp(lm)),
                    (0, b"") if mb is None else (1, mb.encode("utf-8")),
                    bool(nf.get("deleted", False)),
                    self.canon)
        self.vector = nf.get("versionVector", {})


def dominated(a, b):
    """A's vector is dominated by B's: every count of A <= B's, and the vectors differ."""
    if a == b:
        return False
    return all(count <= b.get(dev, 0) for dev, count in a.items())


def merge_versions(versions):
    """Steps 1-3 of "Merging" for one id. Returns (winner, [conflicts greatest first])."""
    unique = {}
    for v in versions:
        unique[v.canon] = v
    versions = list(unique.values())
    vectored = [v for v in versions if v.vector]
    plain = [v for v in versions if not v.vector]
    # Step 1: dominance, then one per identical vector (the greatest).
    kept = [v for v in vectored if not any(dominated(v.vector, w.vector) for w in vectored)]
    by_vector = {}
    for v in kept:
        k = jcs(v.vector)
        if k not in by_vector or by_vector[k].key < v.key:
            by_vector[k] = v
    kept = list(by_vector.values())
    # Step 2: of the vector-less, only the greatest.
    if plain:
        kept.append(max(plain, key=lambda v: v.key))
    # Step 3.
    kept.sort(key=lambda v: v.key, reverse=True)
    winner = kept[0]
    conflicts = [v for v in kept[1:] if v.vector]  # vector-less losers are dropped either way
    return winner, conflicts


# ---------------------------------------------------------------------------------------------
# Files and the folder

COPY_SEPARATORS = (" ", "(", "_conflict-", ".sync-conflict-")


def name_fits(name, base):
    """name is <base>.json or a sync-tool copy of it."""
    if name == base + ".json":
        return True
    for sep in COPY_SEPARATORS:
        head = base + sep
        if name.startswith(head) and name.endswith(".json") and len(name) >= len(head) + 5:
            return True
    return False


class SkipFile(Exception):
    """Skipped as a whole (not valid I-JSON, a top level breaking the rules, a newer format)."""


class RejectFile(Exception):
    """Rejected as a whole (the name does not fit the device/part inside; signature misplaced)."""


def read_file_bytes(name, data):
    """Parse and validate one snapshot file. Returns (doc, device, part) or raises
    SkipFile/RejectFile."""
    try:
        doc = strict_loads(data)
    except InvalidJSON as e:
        raise SkipFile(str(e))
    if not isinstance(doc, dict):
        raise SkipFile("top level is not an object")
    fmt = integer_value(doc.get("format"))
    if fmt is None or fmt < 1:
        raise SkipFile(f"format {doc.get('format')!r} is not 1 or 2")
    if fmt > 2:
        raise SkipFile(f"format {fmt} is newer than 2")
    device = doc.get("device")
    gen = integer_value(doc.get("generation"))
    if gen is None or gen < 1:
        raise SkipFile(f"generation {doc.get('generation')!r} is not an integer >= 1")
    if not isinstance(doc.get("records"), list):
        raise SkipFile("records is not an array")
    part = None
    if fmt == 2:
        part = doc.get("part")
        if part is not None and not (isinstance(part, str) and PREFIX.fullmatch(part)):
            raise RejectFile(f"part {part!r} is not 1-4 of 0-9A-F")
        key = doc.get("key")
        if key is not None and not (isinstance(key, str) and KEY_FORM.fullmatch(key)
                                    and len(base64.b64decode(key[8:])) == 32):
            raise SkipFile(f"key {key!r} is not ed25519:<base64 of 32 bytes>")
        if "signature" in doc:
            body = data[3:] if data.startswith(b"\xef\xbb\xbf") else data
            m = SIGNATURE_TAIL.search(body)
            if not m or list(doc)[-1] != "signature" or len(base64.b64decode(m.group(1))) != 64:
                raise RejectFile("signature is not the file's exact last member")
    if not is_device_id(device):
        raise RejectFile(f"device {device!r} is not a device ID")
    base = device if part is None else f"{device}.{part}"
    if not name_fits(name, base):
        raise RejectFile(f"name does not fit device {device!r}" + (f" part {part!r}" if part else ""))
    return doc, device, part


def versions_of_file(doc, part, report, name):
    """Every valid version of a file (records and their conflict entries)."""
    out = []
    for i, rec in enumerate(doc["records"]):
        try:
            nf = normal_form(rec)
            if part is not None and not nf["id"].startswith(part):
                raise BadVersion(f"id {nf['id']} outside part {part}")
            out.append(nf)
        except BadVersion as e:
            report.append(f"{name}: record {i} rejected: {e}")
        if not isinstance(rec, dict):
            continue
        rid = rec.get("id")
        entries = rec.get("conflicts")
        if not isinstance(entries, list) or not entries:
            continue
        if not isinstance(rid, str) or not UUID.fullmatch(rid):
            report.append(f"{name}: record {i}: {len(entries)} conflict entries rejected (record id not a UUID)")
            continue
        for j, entry in enumerate(entries):
            try:
                nf = normal_form(entry, is_entry=True)
                if nf["id"] != rid.upper():
                    raise BadVersion(f"id {nf['id']} is not its record's")
                if part is not None and not nf["id"].startswith(part):
                    raise BadVersion(f"id {nf['id']} outside part {part}")
                out.append(nf)
            except BadVersion as e:
                report.append(f"{name}: record {i} conflict {j} rejected: {e}")
    return out


def merge_folder(path, statuses=None):
    """Merge every source of a shared folder. Returns (merged, report): merged maps id ->
    (winner normal form, [conflict normal forms greatest first]). If given, statuses (a dict) gets
    each considered name's fate: merged, skipped, rejected or ignored (not a regular file)."""
    report = []
    statuses = {} if statuses is None else statuses
    by_id = {}
    for entry in sorted(os.scandir(path), key=lambda e: e.name):
        name = entry.name
        if name.startswith(".") or not name.endswith(".json"):
            continue
        st = os.lstat(entry.path)
        if not stat.S_ISREG(st.st_mode):
            report.append(f"{name}: ignored (not a regular file)")
            statuses[name] = "ignored"
            continue
        with open(entry.path, "rb") as f:
            data = f.read()
        try:
            doc, device, part = read_file_bytes(name, data)
        except SkipFile as e:
            report.append(f"{name}: skipped: {e}")
            statuses[name] = "skipped"
            continue
        except RejectFile as e:
            report.append(f"{name}: rejected: {e}")
            statuses[name] = "rejected"
            continue
        found = versions_of_file(doc, part, report, name)
        report.append(f"{name}: merged ({len(found)} versions)")
        statuses[name] = "merged"
        for nf in found:
            by_id.setdefault(nf["id"], []).append(Version(nf))
    merged = {}
    for rid, versions in by_id.items():
        winner, conflicts = merge_versions(versions)
        merged[rid] = (winner.nf, [c.nf for c in conflicts])
    return merged, report


def merge_stages(paths):
    """What a device holds after merging the folders one after the other with one local store:
    each merge takes every version of the folder's sources together with the versions already
    held (winner and conflicts), as "Merging" says. For writers that keep the clock rule this
    equals merge_folder of all the folders' files together; for others grouping can matter."""
    held = {}
    for path in paths:
        by_id = {}
        for rid, (winner, conflicts) in held.items():
            by_id.setdefault(rid, []).extend(Version(nf) for nf in [winner] + conflicts)
        for rid, versions in _folder_versions(path).items():
            by_id.setdefault(rid, []).extend(versions)
        held = {}
        for rid, versions in by_id.items():
            winner, conflicts = merge_versions(versions)
            held[rid] = (winner.nf, [c.nf for c in conflicts])
    return held


def _folder_versions(path):
    """Every valid version of a folder's sources, by id (no merge)."""
    by_id = {}
    for entry in sorted(os.scandir(path), key=lambda e: e.name):
        name = entry.name
        if name.startswith(".") or not name.endswith(".json") or not stat.S_ISREG(os.lstat(entry.path).st_mode):
            continue
        with open(entry.path, "rb") as f:
            data = f.read()
        try:
            doc, device, part = read_file_bytes(name, data)
        except (SkipFile, RejectFile):
            continue
        for nf in versions_of_file(doc, part, [], name):
            by_id.setdefault(nf["id"], []).append(Version(nf))
    return by_id


def main(argv):
    import argparse
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("folder")
    p.add_argument("--out", help="write here instead of stdout")
    p.add_argument("--jsonl", action="store_true", help="the vectors' expected.jsonl form")
    p.add_argument("--report", action="store_true", help="what was read, skipped, rejected (stderr)")
    args = p.parse_args(argv)
    merged, report = merge_folder(args.folder)
    if args.report:
        for line in report:
            print(line, file=sys.stderr)
    if args.jsonl:
        lines = []
        for rid in sorted(merged):
            winner, conflicts = merged[rid]
            line = dict(winner)
            if conflicts:
                line["conflicts"] = conflicts
            lines.append(jcs(line) + b"\n")
        out = b"".join(lines)
    else:
        out = jcs({rid: {"winner": w, "conflicts": c} for rid, (w, c) in merged.items()}) + b"\n"
    if args.out:
        with open(args.out, "wb") as f:
            f.write(out)
    else:
        sys.stdout.buffer.write(out)


if __name__ == "__main__":
    main(sys.argv[1:])
