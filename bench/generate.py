#!/usr/bin/env python3
"""Generates a realistic shared folder: D devices x M records for benchmarks.

Each device's file holds its merged view: most records are shared by every device (same
version), some were edited by one device since (a sequential edit), some concurrently on two
devices (conflicts), some are tombstones, a few are legacy records without lastModified or
vector. fields are about 200 bytes with unicode and nesting.

  python3 bench/generate.py OUT_DIR --devices 3 --records 100000 [--seed 1]
"""
import argparse, json, os, random, uuid

WORDS = ["Bananas", "Äpfel", "Crème fraîche", "寿司", "Kaffee ☕", "Brot", "Milch", "Tomaten 🍅",
         "Olive oil", "Čokoláda", "Ñoquis", "Rice", "Tea", "Soap", "Batteries", "Paprika"]

def fields(rng, n):
    return {"name": rng.choice(WORDS) + f" #{n}", "amount": str(rng.randint(1, 12)),
            "note": " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 6))),
            "tags": rng.sample(["fresh", "bio", "bulk", "sale", "weekly", "frozen"], 2),
            "details": {"aisle": rng.randint(1, 30), "price": round(rng.uniform(0.2, 40), 2),
                        "done": rng.random() < 0.3}}

def stamp(ms):
    s, m = divmod(ms, 1000)
    import time
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(s)) + f".{m:03d}Z"

def main():
    p = argparse.ArgumentParser()
    p.add_argument("out"); p.add_argument("--devices", type=int, default=3)
    p.add_argument("--records", type=int, default=100000); p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    rng = random.Random(a.seed)
    devices = [f"device-{i}" for i in range(a.devices)]
    base = 1_790_000_000_000
    views = {d: [] for d in devices}
    for n in range(a.records):
        rid = str(uuid.UUID(int=rng.getrandbits(128), version=4)).upper()
        creator = rng.choice(devices)
        v0 = {"id": rid, "type": "ShoppingItem", "lastModified": stamp(base + n), "modifiedBy": creator,
              "versionVector": {creator: 1}, "fields": fields(rng, n)}
        roll = rng.random()
        if roll < 0.01:  # legacy
            v0 = {"id": rid, "type": "ShoppingItem", "fields": fields(rng, n)}
            for d in devices: views[d].append(v0)
        elif roll < 0.06:  # concurrent edits on two devices
            a1, a2 = rng.sample(devices, 2) if len(devices) > 1 else (devices[0], devices[0])
            for d in devices:
                if d in (a1, a2):
                    e = dict(v0, lastModified=stamp(base + a.records + n), modifiedBy=d,
                             versionVector={creator: 1, d: v0["versionVector"].get(d, 0) + 1}, fields=fields(rng, n))
                    views[d].append(e)
                else:
                    views[d].append(v0)
        elif roll < 0.09:  # tombstone by one device, others still hold the live version
            killer = rng.choice(devices)
            t = {"id": rid, "type": "ShoppingItem", "lastModified": stamp(base + 2 * a.records + n),
                 "modifiedBy": killer, "versionVector": {creator: 1, killer: 1 + (killer == creator)}, "deleted": True}
            for d in devices: views[d].append(t if d == killer else v0)
        elif roll < 0.25:  # a sequential edit one device has and the others do not yet
            editor = rng.choice(devices)
            vv = dict(v0["versionVector"]); vv[editor] = vv.get(editor, 0) + 1
            e = dict(v0, lastModified=stamp(base + 3 * a.records + n), modifiedBy=editor, versionVector=vv, fields=fields(rng, n))
            for d in devices: views[d].append(e if d == editor else v0)
        else:
            for d in devices: views[d].append(v0)
    os.makedirs(a.out, exist_ok=True)
    for gen, d in enumerate(devices, start=1):
        doc = {"format": 1, "device": d, "generation": 10 + gen, "writtenAt": stamp(base), "records": views[d]}
        tmp = os.path.join(a.out, f".{d}.json.tmp")
        with open(tmp, "w") as f:
            json.dump(doc, f, ensure_ascii=False, separators=(",", ":"))
        os.rename(tmp, os.path.join(a.out, f"{d}.json"))

if __name__ == "__main__":
    main()
