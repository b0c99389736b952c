#!/usr/bin/env bash
# Builds the libFuzzer targets in fuzz/targets and runs them (docs/fuzzing.md).
#
#   scripts/fuzz.sh TARGET SECONDS   replay TARGET's regressions, then fuzz it for SECONDS
#   scripts/fuzz.sh all SECONDS      the same for every target, one after another
#   scripts/fuzz.sh build            build every target (.build-fuzz/fuzz-TARGET)
#   scripts/fuzz.sh list             the targets' names
#
# Environment:
#   FUZZ_CORPUS       where the working corpora grow (default fuzz/corpus; one folder per target)
#   FUZZ_TIMEOUT      seconds one input may take before it counts as a hang (default 10)
#   FUZZ_ARGS         more libFuzzer flags, e.g. "-runs=10000000" or "-jobs=2"
#   SNAPSHOT_VECTORS  the conformance vectors (default ../shared/spec/vectors), for the seeds
#
# Found crashes, leaks, hangs and OOMs stay in fuzz/findings/TARGET/ (git-ignored) with each run's
# log (run-DATE-TIME-PID.log, the last 20 kept); the exit status is libFuzzer's (0: nothing found). Minimize a finding with
#   .build-fuzz/fuzz-TARGET -minimize_crash=1 -runs=100000 fuzz/findings/TARGET/crash-…
# and keep it in fuzz/regressions/TARGET/, which every run replays first.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
build_dir="$root/.build-fuzz"
corpus_root="${FUZZ_CORPUS:-$root/fuzz/corpus}"
timeout_seconds="${FUZZ_TIMEOUT:-10}"
vectors="${SNAPSHOT_VECTORS:-$root/../shared/spec/vectors}"
# -O: the executions per second a long run needs; -g: symbols in the stack traces.
swift_flags=(-O -g -sanitize=fuzzer,address -parse-as-library -module-name SnapshotFormat)

usage() {
    sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//' >&2
    exit 64
}

targets() {
    for file in fuzz/targets/*.swift; do basename "$file" .swift; done
}

# The longest input libFuzzer makes for a target: snapshot files and JSON need room for a few records
# and for nesting beyond the depth limit; the rest are short. Longer inputs cost executions per second.
max_len() {
    case "$1" in
        reader | json) echo 4096 ;;
        *) echo 512 ;;
    esac
}

# One object for the SnapshotFormat sources and every target (one whole-module compile), then one
# small C file per target that names its entry point LLVMFuzzerTestOneInput, linked with it.
build() {
    mkdir -p "$build_dir"
    exec 9>"$build_dir/.lock"
    flock 9
    local sources=(Sources/SnapshotFormat/*.swift fuzz/support/*.swift fuzz/targets/*.swift)
    local stamp
    stamp="$({ swiftc --version 2>&1; echo "${swift_flags[*]}"; cat "${sources[@]}"; } | sha256sum | cut -d' ' -f1)"
    local up_to_date=1
    [ "$(cat "$build_dir/stamp" 2>/dev/null)" = "$stamp" ] || up_to_date=0
    for target in $(targets); do [ -x "$build_dir/fuzz-$target" ] || up_to_date=0; done
    if [ "$up_to_date" = 1 ]; then
        flock -u 9
        return
    fi
    echo "fuzz: building $(targets | tr '\n' ' ')" >&2
    rm -f "$build_dir/stamp"
    swiftc "${swift_flags[@]}" -c -wmo "${sources[@]}" -o "$build_dir/SnapshotFormatFuzz.o"
    for target in $(targets); do
        cat >"$build_dir/entry-$target.c" <<EOF
#include <stddef.h>
#include <stdint.h>
int SnapshotFormatFuzz_$target(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { return SnapshotFormatFuzz_$target(data, size); }
EOF
        clang -c -O1 "$build_dir/entry-$target.c" -o "$build_dir/entry-$target.o"
        swiftc -sanitize=fuzzer,address -use-ld=lld "$build_dir/SnapshotFormatFuzz.o" "$build_dir/entry-$target.o" \
            -o "$build_dir/fuzz-$target"
    done
    echo "$stamp" >"$build_dir/stamp"
    flock -u 9
}

# The seeds made from the conformance vectors and samples/shared, one folder per target.
seeds() {
    if [ ! -d "$vectors" ]; then
        echo "fuzz: conformance vectors not found at $vectors; set SNAPSHOT_VECTORS to the shared/spec/vectors folder" >&2
        exit 66
    fi
    python3 fuzz/make-seeds.py --vectors "$vectors" --samples samples/shared --out "$build_dir/seeds"
}

run() {
    local target="$1" seconds="$2"
    [ -f "fuzz/targets/$target.swift" ] || { echo "fuzz: no target '$target' (scripts/fuzz.sh list)" >&2; exit 64; }
    local binary="$build_dir/fuzz-$target"
    local findings="$root/fuzz/findings/$target"
    local corpus="$corpus_root/$target"
    mkdir -p "$findings" "$corpus"
    local log
    log="$findings/run-$(date +%Y%m%d-%H%M%S)-$$.log"
    # The logs of the last 20 runs are kept (swift test adds one per target each time).
    find "$findings" -maxdepth 1 -name 'run-*.log' | sort | head -n -19 | xargs -r rm -f --
    # No Swift backtracer: libFuzzer's own handler must see the signal and keep the input.
    export SWIFT_BACKTRACE=enable=no
    # No allocation stacks (a third of the time of these allocation-heavy targets): run a finding
    # again with ASAN_OPTIONS=detect_leaks=1 to see where its memory was allocated.
    export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:malloc_context_size=0}"
    local common=(-timeout="$timeout_seconds" -rss_limit_mb=2048 -artifact_prefix="$findings/")
    local regressions=()
    [ -d "fuzz/regressions/$target" ] && mapfile -t regressions < <(find "fuzz/regressions/$target" -type f ! -name '.*' | sort)
    if [ ${#regressions[@]} -gt 0 ]; then
        # Replayed one by one and whole: as corpus entries they would be cut at -max_len.
        echo "fuzz: $target: replaying ${#regressions[@]} regression inputs" >&2
        "$binary" "${common[@]}" "${regressions[@]}" >"$log" 2>&1 || {
            cat "$log" >&2
            echo "fuzz: $target: a regression input fails again (log: $log)" >&2
            return 1
        }
    fi
    local inputs=("$corpus")
    for folder in "$build_dir/seeds/$target" "fuzz/seeds/$target"; do
        [ -d "$folder" ] && inputs+=("$folder")
    done
    echo "fuzz: $target: fuzzing for $seconds s (corpus $corpus, findings $findings)" >&2
    local status=0
    # shellcheck disable=SC2086 # FUZZ_ARGS is a list of flags
    "$binary" "${common[@]}" -max_total_time="$seconds" -max_len="$(max_len "$target")" -print_final_stats=1 \
        ${FUZZ_ARGS:-} "${inputs[@]}" >>"$log" 2>&1 || status=$?
    grep -E '^#[0-9]+.*(INITED|DONE)|^stat::|^SUMMARY|^Done [0-9]+ runs|Test unit written' "$log" >&2 || true
    if [ "$status" != 0 ]; then
        tail -n 60 "$log" >&2
        echo "fuzz: $target: FOUND A PROBLEM (status $status); the input is in $findings, the log in $log" >&2
    fi
    return "$status"
}

[ $# -ge 1 ] || usage
case "$1" in
    list) targets ;;
    build) build ;;
    all)
        [ $# -eq 2 ] || usage
        build
        seeds
        failed=()
        for target in $(targets); do run "$target" "$2" || failed+=("$target"); done
        if [ ${#failed[@]} -gt 0 ]; then
            echo "fuzz: problems found by: ${failed[*]}" >&2
            exit 1
        fi
        ;;
    -h | --help | help) usage ;;
    *)
        [ $# -eq 2 ] || usage
        build
        seeds
        run "$1" "$2"
        ;;
esac
