#!/usr/bin/env bash
# The release build as the Debian package ships it, in one place: debian/rules builds syncd and
# syncctl with it, and the benchmarks (bench/run.py, bench/edit_cost.py, bench/latency) measure
# what it builds, so that their figures are the package's.
#
#   scripts/build-release.sh --scratch-path DIR --product syncctl [other swift build options]
#
# It builds the package this script belongs to, from its root: a relative DIR is taken from
# there. SWIFT names the swift executable (default: swift on PATH).
#
# - --static-swift-stdlib: the Swift runtime, Foundation and the packages are linked in, so the
#   binaries need no toolchain. It also starts faster: a merge with nothing changed at 1,000,000
#   records took 33 ms with a dynamically linked syncctl (22 libraries to load and bind) and
#   25 ms static, 60 runs each, interleaved (docs/performance.md, night of 26 November).
# - --disable-local-rpath: no search path into the build directory (ld.so would otherwise look
#   for each library in 20 hwcaps subdirectories of it first).
# - -z relro -z now: full RELRO and immediate binding, as dpkg-buildflags' hardening asks (Swift
#   links PIE already).
# - --no-export-dynamic: SwiftPM links executables with --export-dynamic, which puts the 19,700
#   global symbols of the static binary in its dynamic symbol table; the dynamic loader then
#   searches that table for every symbol libstdc++ and the other libraries bind, and the Swift
#   runtime's dladdr of itself at start-up walks it. Nothing loads into these processes that
#   would bind to their symbols. About 0.6 ms less per command (docs/performance.md).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
exec "${SWIFT:-swift}" build -c release --static-swift-stdlib --disable-local-rpath \
    -Xlinker -z -Xlinker relro -Xlinker -z -Xlinker now -Xlinker --no-export-dynamic "$@"
