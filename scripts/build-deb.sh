#!/usr/bin/env bash
# Builds the Debian package with Debian's own tooling (dpkg-buildpackage, debhelper): `make deb`.
# The packages go to .build-deb/packages/ instead of the checkout's parent; see docs/packaging.md.
set -euo pipefail

usage() {
    cat <<'EOF'
Usage: scripts/build-deb.sh [--output DIR]

Runs `dpkg-buildpackage -b` in this checkout (binary package only, unsigned) and collects
snapshotsync_VERSION_ARCH.deb, its -dbgsym .deb, .buildinfo and .changes in DIR (default
.build-deb/packages). Needs swift on PATH and the Debian packages that
scripts/install-prerequisites.sh installs (debhelper among them). SwiftPM's scratch path is
.build-deb: a second run rebuilds only what changed.
EOF
}

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
output=$repo/.build-deb/packages
while [ $# -gt 0 ]; do
    case "$1" in
        -h | --help) usage; exit 0 ;;
        --output) output=${2:?--output needs a value}; shift 2 ;;
        *) echo "build-deb.sh: unknown argument '$1' (see --help)" >&2; exit 64 ;;
    esac
done
case "$output" in /*) ;; *) output=$PWD/$output ;; esac
cd "$repo"

for tool in swift dpkg-buildpackage dh; do
    if ! command -v "$tool" >/dev/null; then
        echo "build-deb.sh: $tool is not on PATH: install Swift 6.3 and run scripts/install-prerequisites.sh" >&2
        exit 69
    fi
done

version=$(dpkg-parsechangelog -S Version)
architecture=$(dpkg-architecture -q DEB_HOST_ARCH)
mkdir -p "$output"
rm -f "$output"/snapshotsync*_"$version"_"$architecture".*
# dh_builddeb writes the .debs to DEB_DESTDIR (debian/rules); dpkg-genbuildinfo and
# dpkg-genchanges find them there (-u) and write their files there too.
DEB_DESTDIR=$output dpkg-buildpackage -b --no-sign \
    --buildinfo-option=-u"$output" --buildinfo-file="$output/snapshotsync_${version}_${architecture}.buildinfo" \
    --changes-option=-u"$output" --changes-file="$output/snapshotsync_${version}_${architecture}.changes"
# The staged tree in debian/snapshotsync (140 MB) and debhelper's bookkeeping; .build-deb stays.
debian/rules clean >/dev/null
echo
ls -l "$output"/snapshotsync*_"$version"_"$architecture".*
