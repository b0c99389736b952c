#!/usr/bin/env python3
"""Generates a realistic shared folder: D devices x M records for benchmarks.

Each device's file holds its merged view: most records are shared by every device (same
version), some were edited by one device since (a sequential edit), some concurrently on two
devices (conflicts), some are tombstones, a few are legacy records without lastModified or
vector. fields are about 200 bytes (120-330) of varied JSON with unicode, escapes and nesting,
so 3 devices x 100,000 records make about 120 MB.

  python3 bench/generate.py OUT_DIR --devices 3 --records 100000 [--seed 1] [--id-order]
          [--style uniform|varied] [--layout file|parts] [--part-digits 2]

By default each file lists its records in the order they were created, as a writer other than
SnapshotSync might; with --id-order, in increasing id order, as SnapshotSync devices write them
(the same records otherwise, with other ids).

--style uniform (the default) writes every file alike: format 1, compact, keys in one order,
UTC timestamps with three digits, no defaults spelled out. Its bytes never change for the same
arguments, so that results stay comparable across history.

--style varied writes the same records (the same draws, the same ids) the way a folder filled
by other writers looks. Per file, a writer profile (the first three devices get one of each
family, drawn from the seed; further devices draw from all seven):
  tidy:      one record per line, like SnapshotSync's writer | one compact line;
  ASCII:     Python's json.dump (", " separators, \\u escapes with surrogate pairs, isoformat
             timestamps "+00:00" with 6 digits, every optional key spelled out at its default or
             as null) | PHP-style (\\u escapes, "\\/", a local offset such as "+05:30");
  indented:  a Swift hash-map writer (2-space indentation and " : ", keys of the header, records,
             fields and vectors in random order, records in random order, "\\/") |
             JSON.stringify(doc, null, 2) | sorted keys, 4 spaces, CRLF line ends (so records
             come before writtenAt).
Per record, in every profile (rates in parentheses): key order shuffled (5%); optional keys
written as null (2%) or spelled out at their defaults (3%: "deleted": false, "schemaVersion": 1
or 1.0, "conflicts": [], "versionVector": {} on legacy records, "fields": {} on tombstones);
"x-removed": null (1%); schemaVersion 2 written as 2.0 (30% of those); lower-case ids (3%);
\\u escapes for every non-ASCII character (2%); lastModified in the profile's habit, and (5%) at
another offset (Z, -00:00, +05:30, +14:00, -12:00, ...) with 0 to 12 fractional digits and
lower-case t/z. Spelling never changes a version: truncated to milliseconds a timestamp is the
same instant (a digit count that cannot say it exactly becomes 3), every spelling of a number is
the same double, so the contract's normal forms are those of the canonical parts.
Per version (the same content in every file that holds it): creators of 3% of records stamp
whole seconds (an earlier instant than the uniform folder's, in every file, and most files then
write no fraction: every later version still sorts after it, so the clock rule holds); 8% have
schemaVersion 2; 3% carry unknown keys ("x-future" with nested objects and arrays, ...), kept by
later edits and tombstones, and 20% of legacy records too; 4% of versions get extra fields with
deep nesting, numbers in exponent form (1e+21, 2.5E-3, -0.0, 5e-324, 1.7976931348623157e308,
each file picking its own spelling of the same double), control characters, NUL, U+2028,
astral characters and empty keys; 0.2% a long string (2-64 KiB).
Per record, what devices hold: of concurrent edits, each other device holds (60%) the merged
record, the winner with the loser in "conflicts", exactly as the contract's merge makes it, and
(30%) one of the editors does too; 30% of tombstones and of sequential edits are already held by
every device; 0.5% of plain records were deleted by their creator long ago, everywhere.
Everything stays valid format 1 / format 2 input: a conforming reader merges every record.

--layout parts writes each device's snapshot as format 2 parts, as SnapshotSync devices publish
large snapshots: <device>.<prefix>.json with "format": 2 and "part": "<prefix>" (--part-digits
hex digits, default 2: 256 parts per device, every part written even if empty), each holding the
records whose upper-case id starts with its prefix, in id order, one line per record in its
normal form, canonically serialized (sorted keys, no whitespace, numbers as RFC 8785 writes them,
integers beyond 2^53 with an exponent), header and footer laid out as SnapshotSync's writer lays
them out. Parts need id order, so --layout parts implies --id-order. With --style varied the
parts hold the varied content (unknown keys, exotic fields, carried conflicts...) spelled
canonically: parts come from SnapshotSync, which writes normal forms.

The files are written record by record (memory stays small even at millions of records; files
in random record order go through temporary bucket files), each to a dot-prefixed temporary
file renamed into place. The same arguments give the same bytes.
"""
import argparse, calendar, json, math, os, random, re, time, uuid

WORDS = ["Bananas", "Äpfel", "Crème fraîche", "寿司", "Kaffee ☕", "Brot", "Milch", "Tomaten 🍅",
         "Olive oil", "Čokoláda", "Ñoquis", "Rice", "Tea", "Soap", "Batteries", "Paprika",
         "Σπανάκι", "Хлеб", "Jalapeño", "Smørbrød", "Gâteau", "Ümlaut-Test"]
STORES = ["Bäckerei Müller", "Marché Saint-Germain", "スーパー山田", "Corner Shop", "Łódź Market", "Café Olé"]
UNITS = ["kg", "g", "l", "Stück", "pack", "½ dozen"]
QUIRKS = ['ask for the "organic" one', "back\\side of the shelf", "line one\nline two", "tab\there", "50% off?"]


def fields(rng, n):
    f = {"name": rng.choice(WORDS) + f" #{n}", "amount": str(rng.randint(1, 12)), "unit": rng.choice(UNITS),
         "note": " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 6))),
         "tags": rng.sample(["fresh", "bio", "bulk", "sale", "weekly", "frozen"], rng.randint(1, 3)),
         "details": {"aisle": rng.randint(1, 30), "price": round(rng.uniform(0.2, 40), 2),
                     "done": rng.random() < 0.3, "store": {"name": rng.choice(STORES), "floor": rng.randint(-1, 3)}}}
    roll = rng.random()
    if roll < 0.2:  # a quoted, escaped or multi-line note
        f["note"] += " " + rng.choice(QUIRKS)
    elif roll < 0.35:  # deeper nesting, arrays of objects
        f["history"] = [{"by": rng.choice(WORDS), "qty": rng.randint(1, 9)} for _ in range(rng.randint(1, 3))]
    elif roll < 0.45:  # null and large or negative numbers
        f["barcode"] = rng.randint(10**11, 10**13 - 1)
        f["discount"] = None if rng.random() < 0.5 else -round(rng.random(), 3)
    return f


def stamp(ms):
    s, m = divmod(ms, 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(s)) + f".{m:03d}Z"


def dump(record):
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"))


def draw_record(rng, n, rid, devices, records, base):
    """One record's versions, drawn from rng exactly as the uniform folder always drew them.

    Returns (kind, v0, view): v0 is the version every device holds unless view (device ->
    version) says otherwise; kind is plain, legacy, concurrent, tombstone or sequential."""
    creator = rng.choice(devices)
    v0 = {"id": rid, "type": "ShoppingItem", "lastModified": stamp(base + n), "modifiedBy": creator,
          "versionVector": {creator: 1}, "fields": fields(rng, n)}
    roll = rng.random()
    view = {}  # device -> its version, when not v0
    kind = "plain"
    if roll < 0.01:  # legacy
        kind = "legacy"
        v0 = {"id": rid, "type": "ShoppingItem", "fields": fields(rng, n)}
    elif roll < 0.06:  # concurrent edits on two devices
        kind = "concurrent"
        a1, a2 = rng.sample(devices, 2) if len(devices) > 1 else (devices[0], devices[0])
        for d in (a1, a2):
            view[d] = dict(v0, lastModified=stamp(base + records + n), modifiedBy=d,
                           versionVector={creator: 1, d: v0["versionVector"].get(d, 0) + 1}, fields=fields(rng, n))
    elif roll < 0.09:  # tombstone by one device, others still hold the live version
        kind = "tombstone"
        killer = rng.choice(devices)
        view[killer] = {"id": rid, "type": "ShoppingItem", "lastModified": stamp(base + 2 * records + n),
                        "modifiedBy": killer, "versionVector": {creator: 1, killer: 1 + (killer == creator)},
                        "deleted": True}
    elif roll < 0.25:  # a sequential edit one device has and the others do not yet
        kind = "sequential"
        editor = rng.choice(devices)
        vv = dict(v0["versionVector"]); vv[editor] = vv.get(editor, 0) + 1
        view[editor] = dict(v0, lastModified=stamp(base + 3 * records + n), modifiedBy=editor,
                            versionVector=vv, fields=fields(rng, n))
    return kind, v0, view


def record_ids(rng, seed, count, id_order):
    """Yields each record's id. The creation-order id is always drawn from rng (so the other draws
    stay as they were); with id_order the ids come instead from a list drawn apart and sorted
    (kept as integers: sorting the 128-bit values is sorting the upper-case strings)."""
    ordered = None
    if id_order:
        id_rng = random.Random(seed * 7919 + 1)
        ordered = sorted(uuid.UUID(int=id_rng.getrandbits(128), version=4).int for _ in range(count))
    for n in range(count):
        rid = str(uuid.UUID(int=rng.getrandbits(128), version=4)).upper()
        if ordered is not None:
            rid = str(uuid.UUID(int=ordered[n])).upper()
            ordered[n] = None  # memory goes down as records go out
        yield n, rid


def write_uniform(a, devices, base):
    """The default folder: format 1, one compact file per device. Byte-identical to what this
    script has always written for the same arguments."""
    rng = random.Random(a.seed)
    ids = record_ids(rng, a.seed, a.records, a.id_order)
    temporary = {d: os.path.join(a.out, f".{d}.json.tmp") for d in devices}
    out = {d: open(temporary[d], "w", encoding="utf-8", buffering=1 << 20) for d in devices}
    for gen, d in enumerate(devices, start=1):
        header = {"format": 1, "device": d, "generation": 10 + gen, "writtenAt": stamp(base)}
        out[d].write(dump(header)[:-1] + ',"records":[')
    for n, rid in ids:
        kind, v0, view = draw_record(rng, n, rid, devices, a.records, base)
        plain = dump(v0)
        for d in devices:
            out[d].write(("," if n else "") + (dump(view[d]) if d in view else plain))
    for d in devices:
        out[d].write("]}")
        out[d].close()
        os.rename(temporary[d], os.path.join(a.out, f"{d}.json"))


# --- The varied style and the parts layout ------------------------------------------------------

class Num:
    """A number in fields whose spelling each file picks among equivalent ones (all parse to the
    same double, so every file holds the same version)."""
    __slots__ = ("spellings", "canonical")

    def __init__(self, spellings, canonical):
        self.spellings, self.canonical = spellings, canonical


class Raw:
    """A number literal written exactly as given (schemaVersion as 2.0, canonical numbers)."""
    __slots__ = ("text",)

    def __init__(self, text):
        self.text = text


def es6_number(x):
    """A double as RFC 8785 writes it (ECMAScript's Number to String), except that an integral
    value beyond 2^53 - 1 gets an exponent, as SnapshotSync writes it for I-JSON readers."""
    if x == 0:
        return "0"
    if x < 0:
        return "-" + es6_number(-x)
    mantissa, _, e = repr(float(x)).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = whole + fraction
    point = len(whole) + int(e or 0)
    stripped = digits.lstrip("0")
    point -= len(digits) - len(stripped)
    digits = stripped.rstrip("0") or "0"
    k, n = len(digits), point
    if k <= n <= 21 and x <= 2 ** 53 - 1:
        return digits + "0" * (n - k)
    if 0 < n <= 21 and k > n:
        return digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return "0." + "0" * -n + digits
    exponent = n - 1
    sign = "+" if exponent >= 0 else "-"
    return (digits if k == 1 else digits[0] + "." + digits[1:]) + "e" + sign + str(abs(exponent))


# value, spellings (the first is what the exotic fields mostly use); every spelling is the same double.
EXOTIC_NUMBERS = [
    (1e21, ["1e+21", "1E21", "1e21", "10e20", "1.0E+21"]),
    (0.0025, ["2.5E-3", "2.5e-3", "0.0025", "25e-4", "0.25e-2"]),
    (-0.0, ["-0.0", "-0", "-0e0", "-0.0E+0"]),
    (1e-7, ["1e-7", "1E-07", "0.0000001", "1.0e-7"]),
    (1.5, ["1.5", "15e-1", "1.50", "0.15E1"]),
    (1e300, ["1e300", "1E+300", "1.0e300"]),
    (5e-324, ["5e-324", "4.9406564584124654e-324", "5E-324"]),
    (1.7976931348623157e308, ["1.7976931348623157e308", "1.7976931348623157E+308"]),
    (9007199254740991, ["9007199254740991", "9.007199254740991e15", "9007199254740991.0"]),
    (-9007199254740991, ["-9007199254740991", "-9.007199254740991E+15"]),
    (0.30000000000000004, ["0.30000000000000004", "3.0000000000000004e-1"]),
    (1.23e20, ["1.23e20", "123e18", "1.23E+20"]),
    (100.0, ["100", "100.0", "1e2", "1E+2", "100.00"]),
    (-2.5e-8, ["-2.5e-8", "-25E-9", "-0.000000025"]),
]
for _value, _spellings in EXOTIC_NUMBERS:  # a typo here would make files disagree on a version
    assert all(float(s) == _value and math.copysign(1, float(s)) == math.copysign(1, _value) for s in _spellings), _spellings
NUMS = [Num(spellings, es6_number(value)) for value, spellings in EXOTIC_NUMBERS]

EXOTIC_STRINGS = [
    "smile \U0001F600, flag \U0001F1E9\U0001F1EA, family \U0001F468\u200D\U0001F469\u200D\U0001F467",
    "control \x01\x02\x1b[0m\x1f and DEL \x7f", "NUL \x00 inside", "line\u2028separator\u2029paragraph",
    'quote " backslash \\ slash / apostrophe \'', "tab\tcr\rlf\nff\fbs\b", "combining e\u0301 vs \u00e9",
    "zero width\u200b space, BOM \ufeff inside", "\U0001D518\U0001D52B\U0001D526\U0001D520\U0001D52C\U0001D521\U0001D522",
    "寿司 한글 עברית العربية", "max scalar \U0010FFFF, private \ue000", "",
]


def exotic_fields(vr):
    """Extra fields with what strict parsers trip over: exponents, -0, subnormals, escapes, depth."""
    pool = {
        "measurements": lambda: [vr.choice(NUMS) for _ in range(vr.randint(1, 4))],
        "label": lambda: vr.choice(EXOTIC_STRINGS),
        "labels": lambda: vr.sample(EXOTIC_STRINGS, 3),
        "empty": lambda: {},
        "emptyList": lambda: [],
        "flags": lambda: [True, False, None],
        "matrix": lambda: [[1, 2], [3, [4, [5, [6, {"deep": [vr.choice(NUMS), {"deeper": {}}]}]]]]],
        "prices": lambda: {"net": vr.choice(NUMS), "gross": vr.choice(NUMS), "history": [vr.choice(NUMS), None]},
        "Schlüssel ключ 鍵": lambda: {"ключ": vr.choice(EXOTIC_STRINGS)},
        "": lambda: "an empty key",
    }
    names = vr.sample(sorted(pool), vr.randint(1, 4))
    return {name: pool[name]() for name in names}


def long_text(vr):
    """2 to 64 KiB of pasted text: words, line breaks, quotes and an emoji now and then."""
    size = vr.randint(2048, 65536)
    words = WORDS + QUIRKS + ["\U0001F600", "\n\n", "\t"]
    parts, length = [], 0
    while length < size:
        w = vr.choice(words)
        parts.append(w)
        length += len(w.encode()) + 1
    return " ".join(parts)


def unknown_keys(vr):
    """Keys a newer writer adds to records: kept verbatim by every reader."""
    out = {}
    if vr.random() < 0.7:
        out["x-future"] = {"rev": vr.randint(1, 9), "tags": ["a", {"b": None, "c": [1, 2.5, []]}],
                           "nested": {"list": [{"k": "v"}, [True, False]], "n": vr.choice(NUMS), "e": {}}}
    if vr.random() < 0.5:
        out["x-app"] = vr.choice(["notes-web 3.1", "legacy-importer", "Lista iOS ✓"])
    if vr.random() < 0.3:
        out["xPriority"] = vr.randint(-5, 5)
    if not out:
        out["x-flag"] = True
    return out


def vary(vr, kind, v0, view, devices, n, records, base):
    """The varied content of one record, drawn from vr (the uniform draws are untouched)."""
    carried = {}  # keys every later version of the record keeps
    if kind != "legacy":
        if vr.random() < 0.08:
            carried["schemaVersion"] = 2
        if vr.random() < 0.03:
            carried.update(unknown_keys(vr))
        if vr.random() < 0.03:  # a creator that stamps whole seconds: earlier, in every file
            v0["lastModified"] = stamp((base + n) // 1000 * 1000)
    elif vr.random() < 0.2:
        carried.update(unknown_keys(vr))
    v0.update(carried)
    for v in view.values():
        v.update(carried)
    for v in [v0, *view.values()]:
        if "fields" in v:
            if vr.random() < 0.04:
                v["fields"] = dict(v["fields"], **exotic_fields(vr))
            if vr.random() < 0.002:
                v["fields"] = dict(v["fields"], description=long_text(vr))
    for v in view.values():
        if vr.random() < 0.01:  # the editing device runs a newer app that adds a key
            v["x-added-by-edit"] = {"at": [n, vr.choice(NUMS)]}
    rid, creator = v0["id"], v0.get("modifiedBy")
    if kind == "concurrent" and len(view) == 2:
        editors = sorted(view)
        # The last-writer order: both are stamped alike, so the greater modifiedBy wins.
        winner, loser = sorted(view.values(), key=lambda v: (v["lastModified"], v["modifiedBy"]), reverse=True)
        merged = dict(winner, conflicts=[loser])
        for d in devices:
            if d not in view and vr.random() < 0.6:
                view[d] = merged
        if vr.random() < 0.3:
            view[vr.choice(editors)] = merged
    elif kind == "tombstone" and vr.random() < 0.3:  # every device has merged the deletion
        tomb = next(iter(view.values()))
        for d in devices:
            view[d] = tomb
    elif kind == "sequential" and vr.random() < 0.3:  # every device has merged the edit
        edit = next(iter(view.values()))
        for d in devices:
            view[d] = edit
    elif kind == "plain" and vr.random() < 0.005:  # deleted by its creator long ago, everywhere
        tomb = {"id": rid, "type": "ShoppingItem", "lastModified": stamp(base + 2 * records + n), "modifiedBy": creator,
                "versionVector": {creator: 2}, "deleted": True, **carried}
        for d in devices:
            view[d] = tomb
    return v0, view


KNOWN_ORDER = ["id", "type", "schemaVersion", "lastModified", "modifiedBy", "versionVector", "deleted", "fields", "conflicts"]
DEFAULTS = {"schemaVersion": 1, "versionVector": {}, "deleted": False, "fields": {}, "conflicts": []}
OFFSETS = [("Z", 0), ("-00:00", 0), ("+00:00", 0), ("+05:30", 330), ("-08:00", -480), ("+09:00", 540),
           ("+14:00", 840), ("-12:00", -720), ("+01:00", 60), ("-03:30", -210), ("+05:45", 345)]
FILE_OFFSETS = [("+05:30", 330), ("+01:00", 60), ("-05:00", -300), ("+09:00", 540)]


def parse_written(text):
    """Milliseconds of a timestamp in the written form (YYYY-MM-DDTHH:MM:SS.mmmZ)."""
    seconds = calendar.timegm((int(text[0:4]), int(text[5:7]), int(text[8:10]), int(text[11:13]), int(text[14:16]),
                               int(text[17:19])))
    return seconds * 1000 + int(text[20:23])


def spell_time(ms, digits, offset, lower_t, lower_z, fr):
    """ms at the given offset, with digits fractional digits (0 to 12); truncated to milliseconds it
    is ms again (a digit count that cannot say ms exactly becomes 3)."""
    text, minutes = offset
    s, m = divmod(ms + minutes * 60_000, 1000)
    if digits < 3 and m % 10 ** (3 - digits):
        digits = 3
    out = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(s))
    if lower_t:
        out = out[:10] + "t" + out[11:]
    if digits:
        frac = f"{m:03d}"[:digits] if digits <= 3 else f"{m:03d}" + "".join(fr.choice("0123456789") for _ in range(digits - 3))
        out += "." + frac
    return out + ("z" if text == "Z" and lower_z else text)


class Profile:
    """How one file's writer spells JSON."""

    def __init__(self, name, family, *, separators=(",", ":"), indent=None, ascii=False, sort=False, lines=False,
                 shuffle_keys=0.05, shuffle_records=False, explicit=0.03, nulls=0.02, time="written",
                 slash=False, crlf=False, extra_header=False):
        self.__dict__.update(locals())
        del self.__dict__["self"]


PROFILES = [  # three families: tidy, escaped-ASCII, indented
    Profile("snapshotsync-lines", "tidy", lines=True, shuffle_keys=0.02),
    Profile("compact", "tidy"),
    Profile("python-json", "ascii", separators=(", ", ": "), ascii=True, explicit=1.0, nulls=1.0, time="python"),
    Profile("php", "ascii", ascii=True, slash=True, time="offset", extra_header=True),
    Profile("swift-hashmap", "indented", indent=2, separators=(",", " : "), shuffle_keys=1.0, shuffle_records=True,
            slash=True, nulls=0.0),
    Profile("js-pretty", "indented", indent=2, separators=(",", ": "), extra_header=True),
    Profile("sorted-crlf", "indented", indent=4, separators=(",", ": "), sort=True, crlf=True, explicit=0.2),
]

SENTINEL = "\x00\x01"
SENTINEL_RE = re.compile(r'"\\u0000\\u0001([^"\\]*)\\u0000\\u0001"')  # a Raw or Num, dumped as a string
RECORDS_PLACEHOLDER = "\x00records\x00"  # where a header's records go


def profiles_for(devices, seed):
    """Each device's writer profile. The first three devices get one profile of each family (tidy,
    escaped-ASCII, indented; which one and in which order drawn from the seed), so that even a
    3-device folder has every kind of file; further devices draw from all profiles."""
    rng = random.Random(seed * 104729 + 7)
    families = {}
    for p in PROFILES:
        families.setdefault(p.family, []).append(p)
    first = [rng.choice(members) for members in families.values()]
    rng.shuffle(first)
    return {d: first[i] if i < len(first) else rng.choice(PROFILES) for i, d in enumerate(devices)}


class FileWriter:
    """One device's format 1 file in its profile's spelling, streamed."""

    def __init__(self, folder, device, profile, seed, index, generation, written_ms, records):
        self.folder, self.device, self.p = folder, device, profile
        self.fr = random.Random(f"{seed}/{device}/spelling")
        self.shuffle_rng = random.Random(f"{seed}/{device}/order")
        self.path = os.path.join(folder, f".{device}.json.tmp")
        self.out = open(self.path, "w", encoding="utf-8", newline="", buffering=1 << 20)
        self.count = 0
        self.file_offset = FILE_OFFSETS[index % len(FILE_OFFSETS)]
        p = profile
        if p.indent is not None:
            unit = p.indent if isinstance(p.indent, str) else " " * p.indent
            self.record_indent = "\n" + unit * 2
            self.open, self.sep, self.close = "[" + self.record_indent, "," + self.record_indent, "\n" + unit + "]"
        elif p.lines:
            self.record_indent, self.open, self.sep, self.close = None, "[\n", ",\n", "\n]"
        else:
            self.record_indent, self.open, self.sep, self.close = None, "[", p.separators[0], "]"
        header = {"format": 1, "device": device, "generation": generation, "writtenAt": self.spell_time(written_ms),
                  "records": RECORDS_PLACEHOLDER}
        if p.extra_header:
            header["x-writer"] = {"name": p.name, "version": [1, 4, index]}
        if p.shuffle_keys >= 1:
            items = list(header.items())
            self.fr.shuffle(items)
            header = dict(items)
        if p.crlf:
            self.open, self.sep, self.close = (t.replace("\n", "\r\n") for t in (self.open, self.sep, self.close))
        self.head, self.tail = self.dump(header, p.ascii, nested=False).split(json.dumps(RECORDS_PLACEHOLDER))
        self.tail += "\r\n" if p.crlf else "\n" if (p.lines or p.indent is not None) else ""
        self.out.write(self.head + self.open)
        if p.shuffle_records:  # a uniform random order without holding every record: random buckets, each shuffled
            self.buckets = [open(os.path.join(folder, f".{device}.bucket-{i}.tmp"), "w+b")
                            for i in range(min(128, max(1, math.ceil(records / 4000))))]

    def hook(self, value):
        if isinstance(value, Num):
            return SENTINEL + (value.spellings[0] if self.fr.random() < 0.5 else self.fr.choice(value.spellings)) + SENTINEL
        if isinstance(value, Raw):
            return SENTINEL + value.text + SENTINEL
        raise TypeError(type(value))

    def dump(self, value, ascii, nested=True):
        p = self.p
        text = json.dumps(value, ensure_ascii=ascii, separators=p.separators, indent=p.indent, sort_keys=p.sort,
                          default=self.hook)
        if "\\u0001" in text:
            text = SENTINEL_RE.sub(r"\1", text)
        if p.slash:
            text = text.replace("/", "\\/")
        if nested and self.record_indent is not None:
            text = text.replace("\n", self.record_indent)
        if p.crlf:
            text = text.replace("\n", "\r\n")
        return text

    def spell_time(self, ms):
        p, fr = self.p, self.fr
        if fr.random() < 0.05:  # any writer now and then: other offsets, digits, cases
            offset = fr.choice(OFFSETS)
            return spell_time(ms, fr.randint(0, 12), offset, fr.random() < 0.3, fr.random() < 0.3, fr)
        digits = 0 if ms % 1000 == 0 and fr.random() < 0.6 else None  # whole seconds, as their writer had them
        if p.time == "python":
            return spell_time(ms, 6 if digits is None else digits, ("+00:00", 0), False, False, fr)
        if p.time == "offset":
            return spell_time(ms, 3 if digits is None else digits, self.file_offset, False, False, fr)
        return stamp(ms) if digits is None else spell_time(ms, 0, ("Z", 0), False, False, fr)

    def spell(self, v, is_conflict=False):
        """One version as this file's writer spells it: the same version, other bytes."""
        p, fr = self.p, self.fr
        out = {}
        for key in KNOWN_ORDER:
            if key in v:
                value = v[key]
                if key == "id":
                    value = value.lower() if fr.random() < 0.03 else value
                elif key == "lastModified":
                    value = self.spell_time(parse_written(value))
                elif key == "schemaVersion":
                    value = Raw("2.0") if fr.random() < 0.3 else value
                elif key == "conflicts":
                    value = [self.spell(c, True) for c in value]
                elif key == "versionVector" and len(value) > 1 and fr.random() < p.shuffle_keys:
                    items = list(value.items())
                    fr.shuffle(items)
                    value = dict(items)
                elif key == "fields" and fr.random() < p.shuffle_keys:
                    items = list(value.items())
                    fr.shuffle(items)
                    value = dict(items)
                out[key] = value
            elif key == "conflicts" and is_conflict:
                continue  # a conflict entry has no conflicts of its own, not even []
            elif key in DEFAULTS and fr.random() < p.explicit:
                value = DEFAULTS[key]
                out[key] = Raw("1.0") if key == "schemaVersion" and fr.random() < 0.2 else type(value)(value)
            elif key != "id" and key != "type" and fr.random() < p.nulls:
                out[key] = None
        for key, value in v.items():
            if key not in out and key not in DEFAULTS and key not in KNOWN_ORDER:
                out[key] = value
        if fr.random() < 0.01:
            out["x-removed"] = None  # null means absent, for unknown keys too
        if fr.random() < p.shuffle_keys:
            items = list(out.items())
            fr.shuffle(items)
            out = dict(items)
        return out

    def add(self, version):
        text = self.dump(self.spell(version), self.p.ascii or self.fr.random() < 0.02)
        if self.p.shuffle_records:
            self.shuffle_rng.choice(self.buckets).write(text.encode() + b"\x00")  # JSON text never holds a raw NUL
        else:
            self.out.write((self.sep if self.count else "") + text)
        self.count += 1

    def finish(self):
        if self.p.shuffle_records:
            first, sep = True, self.sep.encode()
            self.out.flush()
            for bucket in self.buckets:
                bucket.seek(0)
                texts = bucket.read().split(b"\x00")[:-1]
                bucket.close()
                os.remove(bucket.name)
                self.shuffle_rng.shuffle(texts)
                self.out.buffer.write(sep.join(texts) if first else sep + sep.join(texts))
                first = first and not texts
            self.out.buffer.flush()
        self.out.write(self.close + self.tail)
        self.out.close()
        os.rename(self.path, os.path.join(self.folder, f"{self.device}.json"))


def canonical_value(value):
    """A copy of value whose numbers serialize as RFC 8785 does (with json.dumps and Raw)."""
    if isinstance(value, dict):
        return {k: canonical_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [canonical_value(v) for v in value]
    if isinstance(value, Num):
        return Raw(value.canonical)
    if isinstance(value, float):
        return Raw(es6_number(value))
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 2 ** 53 - 1:
        return Raw(es6_number(float(value)))
    return value


def normal_form(v):
    """The contract's normal form of a version: upper-case id, no null or default-valued keys."""
    out = {}
    for key, value in v.items():
        if value is None or (key in DEFAULTS and value == DEFAULTS[key] and type(value) is type(DEFAULTS[key])):
            continue
        if key == "id":
            value = value.upper()
        elif key == "conflicts":
            value = [normal_form(c) for c in value]
        else:
            value = canonical_value(value)
        out[key] = value
    return out


def canonical_line(v):
    text = json.dumps(normal_form(v), ensure_ascii=False, separators=(",", ":"), sort_keys=True,
                      default=lambda r: SENTINEL + r.text + SENTINEL)
    return SENTINEL_RE.sub(r"\1", text) if "\\u0001" in text else text


class PartsWriter:
    """One device's snapshot as format 2 parts, in id order, every prefix written (empty ones too)."""

    def __init__(self, folder, device, digits, generation, written):
        self.folder, self.device, self.digits = folder, device, digits
        self.generation, self.written = generation, written
        self.next_part = 0  # the next prefix to open, as a number
        self.out = self.path = self.prefix = None
        self.first = True

    def open_part(self, number):
        self.prefix = f"{number:0{self.digits}X}"
        self.path = os.path.join(self.folder, f".{self.device}.{self.prefix}.json.tmp")
        self.out = open(self.path, "w", encoding="utf-8", newline="", buffering=1 << 18)
        # As SnapshotSync's writer lays a part out: header members in this order, records last.
        self.out.write(json.dumps({"format": 2, "device": self.device, "part": self.prefix, "generation": self.generation,
                                   "writtenAt": self.written}, ensure_ascii=False, separators=(",", ":"))[:-1]
                       + ',"records":[')
        self.first = True
        self.next_part = number + 1

    def close_part(self):
        if self.out is not None:
            self.out.write("\n]}\n")
            self.out.close()
            os.rename(self.path, os.path.join(self.folder, f"{self.device}.{self.prefix}.json"))
            self.out = None

    def add(self, rid, line):
        number = int(rid[:self.digits], 16)
        while self.out is None or int(self.prefix, 16) < number:
            self.close_part()
            self.open_part(self.next_part)
        self.out.write(("\n" if self.first else ",\n") + line)
        self.first = False

    def finish(self):
        while True:
            self.close_part()
            if self.next_part >= 16 ** self.digits:
                break
            self.open_part(self.next_part)


def write_folder(a, devices, base):
    """The varied style and the parts layout."""
    rng = random.Random(a.seed)  # exactly the uniform draws
    vr = random.Random(f"{a.seed}/varied")  # the varied content, apart
    varied = a.style == "varied"
    written = stamp(base)
    if a.layout == "parts":
        writers = {d: PartsWriter(a.out, d, a.part_digits, 10 + i, written) for i, d in enumerate(devices, start=1)}
    else:
        profiles = profiles_for(devices, a.seed)
        writers = {d: FileWriter(a.out, d, profiles[d], a.seed, i, 10 + i + 1, base, a.records)
                   for i, d in enumerate(devices)}
    for n, rid in record_ids(rng, a.seed, a.records, a.id_order or a.layout == "parts"):
        kind, v0, view = draw_record(rng, n, rid, devices, a.records, base)
        if varied:
            v0, view = vary(vr, kind, v0, view, devices, n, a.records, base)
        if a.layout == "parts":
            lines = {}
            for d in devices:
                v = view.get(d, v0)
                line = lines.get(id(v))
                if line is None:
                    line = lines[id(v)] = canonical_line(v)
                writers[d].add(rid, line)
        else:
            for d in devices:
                writers[d].add(view.get(d, v0))
    for w in writers.values():
        w.finish()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out", help="the folder to write (created if missing)")
    p.add_argument("--devices", type=int, default=3, help="devices, device-0 .. device-(D-1) (default 3)")
    p.add_argument("--records", type=int, default=100000, help="records per device (default 100000)")
    p.add_argument("--seed", type=int, default=1, help="the random seed (default 1)")
    p.add_argument("--id-order", action="store_true", help="records in increasing id order, as SnapshotSync writes them")
    p.add_argument("--style", choices=["uniform", "varied"], default="uniform",
                   help="uniform: every file alike, the bytes this script always wrote (default); varied: what other "
                        "writers vary, per file and per record (see above)")
    p.add_argument("--layout", choices=["file", "parts"], default="file",
                   help="file: one format 1 file per device, <device>.json (default); parts: format 2 parts, "
                        "<device>.<prefix>.json, in id order (implies --id-order)")
    p.add_argument("--part-digits", type=int, default=2, choices=[1, 2, 3, 4],
                   help="hex digits of each part's prefix with --layout parts: 16^N parts per device (default 2: 256)")
    a = p.parse_args()
    devices = [f"device-{i}" for i in range(a.devices)]
    base = 1_790_000_000_000
    os.makedirs(a.out, exist_ok=True)
    if a.style == "uniform" and a.layout == "file":
        write_uniform(a, devices, base)
    else:
        write_folder(a, devices, base)


if __name__ == "__main__":
    main()
