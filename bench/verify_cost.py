#!/usr/bin/env python3
"""What trusting keys costs a cold merge: the same signed folder merged with and without trust.

With no trusted device a device checks no signature (format 1's behaviour); with any, it verifies
the signature of every file it reads (Ed25519 over every byte of the file) before merging it. This
measures that difference where it is largest, a first merge of a whole folder, with the real
release-built syncctl:

 1. bench/generate.py makes D devices x M records (format 1, uniform style; cached under --data as
    bench/run.py caches its folders).
 2. D signers (signer-0, signer-1, ...) each merge that folder into a state of their own and
    publish their snapshot, signed with their own key: they are D devices in step, each holding
    every record. The signed folder S keeps only the signers' files (parts, at this size).
 3. Interleaved, --repeat times each, a fresh device `bench` merges a fresh copy of S:
      untrusted  syncctl merge --shared COPY --state NEW --device bench --json
      trusted    the same after `syncctl trust signer-i KEY` for every signer (the keys as
                 `syncctl key` prints them in the signers' states): every file verified
    Each run is checked: every signer file merged, none rejected, with trust as without.

Reported: the medians (and min-max) of both, their difference, the bytes verified and the cost per
MB that the difference implies. bench/signing measures signing and verifying per MB alone.

  python3 bench/verify_cost.py --syncctl .build-static/release/syncctl --records 100000 --repeat 5
"""
import argparse, glob, json, os, shutil, statistics, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run as bench  # noqa: E402  (bench/run.py: generation cache, machine facts, timed commands)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--syncctl", required=True, help="the release-built syncctl to measure")
    p.add_argument("--records", type=int, default=100000)
    p.add_argument("--devices", type=int, default=3)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--data", default=os.environ.get("BENCH_DATA", os.path.join(bench.ROOT, "..", "bench-data")))
    p.add_argument("--json", metavar="FILE", help="also write the results as JSON to FILE")
    a = p.parse_args()
    syncctl = os.path.abspath(a.syncctl)
    folder, files = bench.generate(a.data, a.devices, a.records, a.seed)
    work = tempfile.mkdtemp(prefix="verify-cost-", dir=a.data)
    env = {"PATH": "/usr/bin:/bin", "HOME": work, "LANG": "C.UTF-8"}
    runner = bench.Runner(work, env)
    try:
        generated = os.path.join(work, "generated")
        bench.copy_folder(files, generated)
        signed = os.path.join(work, "signed")
        os.makedirs(signed)
        keys = {}
        for i in range(a.devices):
            signer, state = f"signer-{i}", os.path.join(work, f"state-{i}")
            subprocess.run([syncctl, "merge", "--shared", generated, "--state", state, "--device", signer],
                           check=True, stdout=subprocess.DEVNULL)
            keys[signer] = subprocess.run([syncctl, "key", "--state", state, "--shared", generated],
                                          check=True, capture_output=True, text=True).stdout.strip()
            for path in glob.glob(os.path.join(generated, f"{signer}.*json")):
                shutil.move(path, signed)
        signer_files = sorted(os.listdir(signed))
        signed_bytes = sum(os.path.getsize(os.path.join(signed, f)) for f in signer_files)
        bench.log(f"signed folder: {len(signer_files)} files, {signed_bytes / 1e6:.1f} MB, keys {keys}")

        samples = {"untrusted": [], "trusted": []}
        for n in range(a.repeat):
            for case in ("untrusted", "trusted"):
                copy, state = os.path.join(work, f"copy-{case}-{n}"), os.path.join(work, f"bench-{case}-{n}")
                bench.copy_folder([os.path.join(signed, f) for f in signer_files], copy)
                if case == "trusted":
                    for signer, key in keys.items():
                        subprocess.run([syncctl, "trust", signer, key, "--state", state, "--shared", copy, "--device", "bench"],
                                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                    trusted = json.loads(subprocess.run([syncctl, "trust", "--list", "--json", "--state", state, "--shared", copy],
                                                        check=True, capture_output=True, text=True).stdout)
                    bench.check(len(trusted) >= a.devices, "every signer trusted", {"trust --list": trusted})
                sample, out = runner.timed([syncctl, "merge", "--shared", copy, "--state", state, "--device", "bench", "--json"])
                report = json.loads(out)
                merged = {s["name"] for s in report["sources"] if s["status"] == "merged"}
                bench.check(set(signer_files) <= merged, f"{case}: every signer file merged", report)
                samples[case].append(sample)
                bench.log(f"  {case} {n + 1}: {sample['wall_ms']:.0f} ms, {sample['cpu_s']} s CPU, load {sample['load1']}")
                shutil.rmtree(copy)
                shutil.rmtree(state)

        def summary(values):
            return {"median": statistics.median(values), "min": min(values), "max": max(values)}
        wall = {case: summary([s["wall_ms"] for s in v]) for case, v in samples.items()}
        cpu = {case: summary([s["cpu_s"] for s in v]) for case, v in samples.items()}
        difference = wall["trusted"]["median"] - wall["untrusted"]["median"]
        cpu_difference = (cpu["trusted"]["median"] - cpu["untrusted"]["median"]) * 1000
        result = {"machine": bench.machine(), "records": a.records, "devices": a.devices, "files": len(signer_files),
                  "signed_bytes": signed_bytes, "wall_ms": wall, "cpu_s": cpu,
                  "difference_ms": round(difference, 1), "difference_cpu_ms": round(cpu_difference, 1),
                  "ms_per_mb": round(difference / (signed_bytes / 2 ** 20), 3),
                  "cpu_ms_per_mb": round(cpu_difference / (signed_bytes / 2 ** 20), 3), "samples": samples}
        print(f"cold merge of {len(signer_files)} signed files ({signed_bytes / 2 ** 20:.1f} MiB), median of {a.repeat}:")
        for case in ("untrusted", "trusted"):
            w, c = wall[case], cpu[case]
            print(f"  {case:9}  {w['median']:.0f} ms ({w['min']:.0f}-{w['max']:.0f}), CPU {c['median']:.2f} s")
        print(f"  verifying every file: {difference:+.0f} ms wall ({result['ms_per_mb']:+.3f} ms per MiB), "
              f"{cpu_difference:+.0f} ms CPU ({result['cpu_ms_per_mb']:+.3f} ms per MiB)")
        if a.json:
            with open(a.json, "w") as f:
                json.dump(result, f, indent=1)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
