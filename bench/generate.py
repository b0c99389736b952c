#!/usr/bin/env python3
"""Generates a realistic shared folder: D devices x M records for benchmarks.

Each device's file holds its merged view: most records are shared by every device (same
version), some were edited by one device since (a sequential edit), some concurrently on two
devices (conflicts), some are tombstones, a few are legacy records without lastModified or
vector. fields are about 200 bytes (120-330) of varied JSON with unicode, escapes and nesting,
so 3 devices x 100,000 records make about 120 MB.

  python3 bench/generate.py OUT_DIR --devices 3 --records 100000 [--seed 1] [--id-order]

By default each file lists its records in the order they were created, as a writer other than
SnapshotSync might; with --id-order, in increasing id order, as SnapshotSync devices write them
(the same records otherwise, with other ids).

The files are written record by record (memory stays small even at millions of records), each
to a dot-prefixed temporary file renamed into place. The same arguments give the same bytes.
"""
import argparse, json, os, random, time, uuid

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


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out"); p.add_argument("--devices", type=int, default=3)
    p.add_argument("--records", type=int, default=100000); p.add_argument("--seed", type=int, default=1)
    p.add_argument("--id-order", action="store_true", help="records in increasing id order, as SnapshotSync writes them")
    a = p.parse_args()
    rng = random.Random(a.seed)
    # Drawn apart, so the other draws (and the default folder's bytes) stay as they were.
    ordered_ids = None
    if a.id_order:
        id_rng = random.Random(a.seed * 7919 + 1)
        ordered_ids = sorted(str(uuid.UUID(int=id_rng.getrandbits(128), version=4)).upper() for _ in range(a.records))
    devices = [f"device-{i}" for i in range(a.devices)]
    base = 1_790_000_000_000
    os.makedirs(a.out, exist_ok=True)
    temporary = {d: os.path.join(a.out, f".{d}.json.tmp") for d in devices}
    out = {d: open(temporary[d], "w", encoding="utf-8", buffering=1 << 20) for d in devices}
    for gen, d in enumerate(devices, start=1):
        header = {"format": 1, "device": d, "generation": 10 + gen, "writtenAt": stamp(base)}
        out[d].write(dump(header)[:-1] + ',"records":[')
    for n in range(a.records):
        rid = str(uuid.UUID(int=rng.getrandbits(128), version=4)).upper()
        if ordered_ids is not None:
            rid = ordered_ids[n]
        creator = rng.choice(devices)
        v0 = {"id": rid, "type": "ShoppingItem", "lastModified": stamp(base + n), "modifiedBy": creator,
              "versionVector": {creator: 1}, "fields": fields(rng, n)}
        roll = rng.random()
        view = {}  # device -> its version, when not v0
        if roll < 0.01:  # legacy
            v0 = {"id": rid, "type": "ShoppingItem", "fields": fields(rng, n)}
        elif roll < 0.06:  # concurrent edits on two devices
            a1, a2 = rng.sample(devices, 2) if len(devices) > 1 else (devices[0], devices[0])
            for d in (a1, a2):
                view[d] = dict(v0, lastModified=stamp(base + a.records + n), modifiedBy=d,
                               versionVector={creator: 1, d: v0["versionVector"].get(d, 0) + 1}, fields=fields(rng, n))
        elif roll < 0.09:  # tombstone by one device, others still hold the live version
            killer = rng.choice(devices)
            view[killer] = {"id": rid, "type": "ShoppingItem", "lastModified": stamp(base + 2 * a.records + n),
                            "modifiedBy": killer, "versionVector": {creator: 1, killer: 1 + (killer == creator)},
                            "deleted": True}
        elif roll < 0.25:  # a sequential edit one device has and the others do not yet
            editor = rng.choice(devices)
            vv = dict(v0["versionVector"]); vv[editor] = vv.get(editor, 0) + 1
            view[editor] = dict(v0, lastModified=stamp(base + 3 * a.records + n), modifiedBy=editor,
                                versionVector=vv, fields=fields(rng, n))
        plain = dump(v0)
        for d in devices:
            out[d].write(("," if n else "") + (dump(view[d]) if d in view else plain))
    for d in devices:
        out[d].write("]}")
        out[d].close()
        os.rename(temporary[d], os.path.join(a.out, f"{d}.json"))


if __name__ == "__main__":
    main()
