#!/usr/bin/env bash
# Generates the man pages and shell completions of syncctl and syncd from their command
# definitions: `make build`, scripts/install.sh and debian/rules run it after building.
set -euo pipefail

usage() {
    cat <<'EOF'
Usage: scripts/generate-manuals-and-completions.sh [options] [-- swift package build options]

Writes, into OUTPUT:
  man/syncctl.1 man/syncd.8   swift-argument-parser's generate-manual plugin, run on the commands
                              as it builds them, followed by man/syncctl.1.tail or man/syncd.8.tail
                              (exit codes, environment, files: what the plugin cannot generate)
  man/snapshotsync.5          man/snapshotsync.5 as it is (the format: written by hand)
  completions/bash/syncctl completions/zsh/_syncctl completions/fish/syncctl.fish, and the
  same for syncd              from `--generate-completion-script` of the built commands

Options:
  --scratch-path DIR  SwiftPM's scratch path, as given to swift build (default .build). The
                      plugin builds every product there: with the configuration and build options
                      of your own build it finds them built.
  --configuration C   release (default) or debug: the build the plugin makes and runs. Help texts
                      do not depend on it; a scratch path whose release build is made with
                      options `swift package` lacks (--static-swift-stdlib) wants debug, or the
                      two builds would undo each other.
  --output DIR        where to write (default SCRATCH/generated)
  --date YYYY-MM-DD   the date the man pages carry (default: $SOURCE_DATE_EPOCH's, else the
                      last commit's, else today's)
  -h, --help          show this help
Options after -- go to `swift package` (for example -Xlinker flags of your release build).
EOF
}

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
scratch=$repo/.build
output=""
date=""
configuration=release
build_options=()
absolute() { case "$1" in /*) printf '%s' "$1" ;; *) printf '%s/%s' "$PWD" "$1" ;; esac; }
while [ $# -gt 0 ]; do
    case "$1" in
        -h | --help) usage; exit 0 ;;
        --scratch-path) scratch=$(absolute "${2:?--scratch-path needs a value}"); shift 2 ;;
        --output) output=$(absolute "${2:?--output needs a value}"); shift 2 ;;
        --date) date=${2:?--date needs a value}; shift 2 ;;
        --configuration) configuration=${2:?--configuration needs a value}; shift 2 ;;
        --) shift; build_options=("$@"); break ;;
        *) echo "generate-manuals-and-completions.sh: unknown argument '$1' (see --help)" >&2; exit 64 ;;
    esac
done
output=${output:-$scratch/generated}
if [ -z "$date" ]; then
    if [ -n "${SOURCE_DATE_EPOCH:-}" ]; then
        date=$(date -u -d "@$SOURCE_DATE_EPOCH" +%F)
    else
        date=$(git -C "$repo" log -1 --format=%cs 2>/dev/null || date -u +%F)
    fi
fi
cd "$repo"

# The plugin writes into its work directory under the scratch path (it asks for no permission,
# so no --allow-writing-to-package-directory), one directory per executable target. It takes
# one --section for every executable: it runs once per section, and each page is taken from
# the run with its own section. Its first run builds the whole package unless it is built.
plugin_outputs=$scratch/plugins/GenerateManual/outputs
run_plugin() {
    local section=$1
    rm -rf "$plugin_outputs"
    swift package --scratch-path "$scratch" "${build_options[@]}" plugin generate-manual \
        --configuration "$configuration" --section "$section" --date "$date" >&2
}
page() {
    local target=$1 file=$2
    local found
    found=$(find "$plugin_outputs" -path "*/$target/$file" -print -quit 2>/dev/null)
    if [ -z "$found" ]; then
        echo "generate-manuals-and-completions.sh: the plugin wrote no $file for $target (under $plugin_outputs)" >&2
        exit 1
    fi
    printf '%s' "$found"
}

# Two things the generator gets wrong, mended: an empty line (a paragraph break in a discussion)
# is a groff warning in mdoc, where .Pp says it; and a command without subcommands still gets
# ArgumentParser's implicit `help` as one (a `subcommand` in SYNOPSIS, a `help` entry), which
# only syncctl has a use for.
mend() {
    sed -e 's/^$/.Pp/' "$@"
}
without_help_subcommand() {
    sed -e '/^\.Ar subcommand$/d' -e '/^\.It Em help$/,/^\.El$/d'
}

mkdir -p "$output/man" "$output/completions/bash" "$output/completions/zsh" "$output/completions/fish"
run_plugin 1
mend "$(page syncctl syncctl.1)" | cat - man/syncctl.1.tail >"$output/man/syncctl.1"
run_plugin 8
mend "$(page syncd syncd.8)" | without_help_subcommand | cat - man/syncd.8.tail >"$output/man/syncd.8"
cp man/snapshotsync.5 "$output/man/snapshotsync.5"

# The plugin's build left the products in SCRATCH/CONFIGURATION.
for command in syncctl syncd; do
    binary=$scratch/$configuration/$command
    # A completion file is sourced, not run: no #! line (lintian's bash-completion-with-hashbang).
    "$binary" --generate-completion-script bash | sed -e '1{/^#!/d}' >"$output/completions/bash/$command"
    "$binary" --generate-completion-script zsh >"$output/completions/zsh/_$command"
    "$binary" --generate-completion-script fish >"$output/completions/fish/$command.fish"
done
echo "man pages and completions in $output" >&2
