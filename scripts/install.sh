#!/usr/bin/env bash
# Installs syncd and syncctl with their systemd units, man pages and completions. Safe to run again:
# it replaces the binaries, units and pages, and leaves an existing configuration file, user and
# shared folder alone.
set -euo pipefail

usage() {
    cat <<'EOF'
Usage: scripts/install.sh [options]

Builds syncd and syncctl (release) with their man pages and completions, installs them and the
systemd units, and says what to do next.

  System install (default, as root):
    binaries        PREFIX/bin (PREFIX defaults to /usr/local)
    man pages       PREFIX/share/man: syncctl(1), syncd(8), snapshotsync(5)
    completions     PREFIX/share/bash-completion/completions, PREFIX/share/zsh/site-functions,
                    PREFIX/share/fish/vendor_completions.d
    units           /etc/systemd/system/syncd.service and syncd@.service
    user and group  syncd (system account, no home, no login shell), created if missing
    configuration   /etc/syncd/config.json, created if missing
    shared folder   /srv/syncd/shared (owner syncd:syncd, mode 2770), created if missing
  User install (--user, as yourself):
    binaries        PREFIX/bin (PREFIX defaults to ~/.local)
    man pages and completions   under PREFIX/share, as above
    unit            ~/.config/systemd/user/syncd.service
    configuration   ~/.config/syncd/config.json, created if missing

Options:
  --prefix DIR        install the binaries in DIR/bin (and the unit's ExecStart= points there)
  --user              install for `systemctl --user` instead of system-wide
  --device ID         device ID for a new configuration file (default: this host's short name)
  --shared DIR        shared folder: system install, a drop-in that points syncd.service at DIR;
                      user install, the "shared" key of a new configuration file
  --no-build          install binaries already built (make build: swift build -c release, then
                      scripts/generate-manuals-and-completions.sh for the pages)
  --scratch-path DIR  passed to swift build (default .build)
  --dry-run           print what would be done, change nothing (no build either)
  -h, --help          show this help
EOF
}

original_arguments=("$@")
prefix=""
user_mode=0
dry_run=0
build=1
device=""
shared=""
scratch_args=()
scratch_path=""

need_value() {
    if [ $# -lt 2 ] || [ -z "$2" ]; then
        echo "install.sh: $1 needs a value (see --help)" >&2
        exit 64
    fi
}

absolute() { case "$1" in /*) printf '%s' "$1" ;; *) printf '%s/%s' "$PWD" "$1" ;; esac; }

while [ $# -gt 0 ]; do
    case "$1" in
        -h | --help) usage; exit 0 ;;
        --prefix) need_value "$@"; prefix=$2; shift 2 ;;
        --prefix=*) prefix=${1#*=}; shift ;;
        --user) user_mode=1; shift ;;
        --device) need_value "$@"; device=$2; shift 2 ;;
        --device=*) device=${1#*=}; shift ;;
        --shared) need_value "$@"; shared=$2; shift 2 ;;
        --shared=*) shared=${1#*=}; shift ;;
        --no-build) build=0; shift ;;
        --scratch-path) need_value "$@"; scratch_path=$(absolute "$2"); shift 2 ;;
        --scratch-path=*) scratch_path=$(absolute "${1#*=}"); shift ;;
        --dry-run | -n) dry_run=1; shift ;;
        *) echo "install.sh: unknown argument '$1' (see --help)" >&2; exit 64 ;;
    esac
done

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
[ -z "$scratch_path" ] || scratch_args=(--scratch-path "$scratch_path")

say() { printf '%s\n' "$*"; }
# Runs a command that changes something, or only prints it with --dry-run.
run() {
    local shown
    shown=$(printf '%q ' "$@")
    if [ "$dry_run" -eq 1 ]; then
        say "would run: ${shown% }"
    else
        say "+ ${shown% }"
        "$@"
    fi
}
# Writes stdin to a file (mode $2) unless it already has exactly that content.
write_file() {
    local target=$1 mode=$2 content
    content=$(cat; printf x)
    content=${content%x}
    if [ -f "$target" ] && [ "$(cat "$target"; printf x)" = "${content}x" ]; then
        say "unchanged: $target"
        return 0
    fi
    if [ "$dry_run" -eq 1 ]; then
        say "would write: $target (mode $mode)"
        # Show short files (configuration, drop-ins) in full.
        [ "${#content}" -gt 400 ] || printf '%s' "$content" | sed 's/^/    | /'
        return 0
    fi
    local temporary
    temporary=$(mktemp "$(dirname "$target")/.install.XXXXXX")
    printf '%s' "$content" >"$temporary"
    chmod "$mode" "$temporary"
    mv -f "$temporary" "$target"
    say "wrote: $target"
}
make_directory() {
    local directory=$1
    [ -d "$directory" ] && return 0
    run mkdir -p "$directory"
}

# A device ID from the host name: a-z 0-9 . _ -, starting with a letter or digit, 64 at most.
default_device() {
    local name
    name=$(uname -n)
    name=${name%%.*}
    name=$(printf '%s' "$name" | LC_ALL=C tr '[:upper:]' '[:lower:]' | LC_ALL=C tr -c 'a-z0-9._-' '-' | sed 's/^[^a-z0-9]*//' | cut -c1-64)
    printf '%s' "${name:-device}"
}
json_string() {
    # Device IDs and paths here need escaping only for \ and ".
    local text=${1//\\/\\\\}
    printf '"%s"' "${text//\"/\\\"}"
}

if [ "$user_mode" -eq 1 ]; then
    [ "$(id -u)" -ne 0 ] || say "note: --user as root installs for root's own user manager"
    prefix=${prefix:-$HOME/.local}
    config_home=${XDG_CONFIG_HOME:-$HOME/.config}
    unit_dir=$config_home/systemd/user
    config_dir=$config_home/syncd
else
    prefix=${prefix:-/usr/local}
    unit_dir=/etc/systemd/system
    config_dir=/etc/syncd
    if [ "$(id -u)" -ne 0 ] && [ "$dry_run" -eq 0 ]; then
        echo "install.sh: a system install needs root (sudo $0 ${original_arguments[*]:-}), or use --user or --dry-run" >&2
        exit 77
    fi
fi
case "$prefix" in /*) ;; *) echo "install.sh: --prefix must be an absolute path" >&2; exit 64 ;; esac
prefix=${prefix%/}
[ -z "$shared" ] || case "$shared" in /*) ;; *) echo "install.sh: --shared must be an absolute path" >&2; exit 64 ;; esac
shared=${shared%/}
device=${device:-$(default_device)}
if ! [[ $device =~ ^[a-z0-9][a-z0-9._-]{0,63}$ ]]; then
    echo "install.sh: '$device' is not a device ID (1 to 64 of a-z 0-9 . _ -, starting with a letter or digit)" >&2
    exit 64
fi
bin_dir=$prefix/bin
doc_dir=$prefix/share/doc/snapshotsync

[ "$dry_run" -eq 0 ] || say "dry run: nothing is built, written or created"

# 1. Build.
if [ "$build" -eq 1 ]; then
    if [ "$dry_run" -eq 0 ] && ! command -v swift >/dev/null; then
        echo "install.sh: swift is not on PATH (sudo resets PATH): build as yourself first" \
            "(swift build -c release), then run this with --no-build" >&2
        exit 69
    fi
    for product in syncd syncctl; do
        if ! run swift build -c release "${scratch_args[@]}" --product "$product"; then
            echo "install.sh: building $product failed (see above)" >&2
            exit 1
        fi
    done
    # Its plugin builds the other products too (release): the two above are found built.
    if ! run bash scripts/generate-manuals-and-completions.sh "${scratch_args[@]}"; then
        echo "install.sh: generating the man pages and completions failed (see above)" >&2
        exit 1
    fi
fi
# SwiftPM's release products directory (a symbolic link to the host triple's); not asked of
# swift build --show-bin-path, which may resolve packages and write .build even in a dry run.
built=${scratch_path:-$repo/.build}/release
for product in syncd syncctl; do
    if [ ! -x "$built/$product" ]; then
        if [ "$dry_run" -eq 1 ]; then
            say "note: $built/$product is not built yet"
        else
            echo "install.sh: $built/$product is missing: build first (without --no-build)" >&2
            exit 1
        fi
    fi
done

generated=${scratch_path:-$repo/.build}/generated
# 2. Binaries, documentation, man pages and completions.
make_directory "$bin_dir"
for product in syncd syncctl; do
    if [ -x "$built/$product" ] && cmp -s "$built/$product" "$bin_dir/$product"; then
        say "unchanged: $bin_dir/$product"
    else
        run install -m 0755 "$built/$product" "$bin_dir/$product"
    fi
done
make_directory "$doc_dir"
write_file "$doc_dir/daemon.md" 0644 <docs/daemon.md
if [ -f "$generated/man/syncctl.1" ]; then
    # Destination directory, then the generated files it receives.
    for pair in "man/man1:man/syncctl.1" "man/man5:man/snapshotsync.5" "man/man8:man/syncd.8" \
        "bash-completion/completions:completions/bash/syncctl completions/bash/syncd" \
        "zsh/site-functions:completions/zsh/_syncctl completions/zsh/_syncd" \
        "fish/vendor_completions.d:completions/fish/syncctl.fish completions/fish/syncd.fish"; do
        make_directory "$prefix/share/${pair%%:*}"
        for file in ${pair#*:}; do
            write_file "$prefix/share/${pair%%:*}/$(basename "$file")" 0644 <"$generated/$file"
        done
    done
elif [ "$dry_run" -eq 1 ]; then
    say "note: the man pages and completions are not generated yet ($generated)"
else
    say "note: no man pages or completions in $generated: run make build (or"
    say "      scripts/generate-manuals-and-completions.sh) as yourself, then install again"
fi

# 3. The units, pointed at the installed binary and documentation.
unit_text() {
    sed -e "s#^ExecStart=\\(/usr/local/bin\\|%h/.local/bin\\)/syncd#ExecStart=$bin_dir/syncd#" \
        -e "s#^Documentation=file:/usr/local/share/doc/snapshotsync/#Documentation=man:syncd(8) file:$doc_dir/#" "$1"
}
make_directory "$unit_dir"
if [ "$user_mode" -eq 1 ]; then
    unit_text systemd/user/syncd.service | write_file "$unit_dir/syncd.service" 0644
else
    unit_text systemd/syncd.service | write_file "$unit_dir/syncd.service" 0644
    unit_text systemd/syncd@.service | write_file "$unit_dir/syncd@.service" 0644
fi

# 4. The system user and group (static, see the comment in syncd.service).
if [ "$user_mode" -eq 0 ]; then
    if getent group syncd >/dev/null; then
        say "exists: group syncd"
    else
        run groupadd --system syncd
    fi
    if getent passwd syncd >/dev/null; then
        say "exists: user syncd"
    else
        nologin=/usr/sbin/nologin
        [ -x "$nologin" ] || nologin=/sbin/nologin
        run useradd --system --gid syncd --no-create-home --home-dir /nonexistent \
            --shell "$nologin" --comment "SnapshotSync daemon" syncd
    fi
fi

# 5. Configuration: never overwritten.
make_directory "$config_dir"
config=$config_dir/config.json
if [ -e "$config" ]; then
    say "exists: $config (left as it is)"
    [ -z "$shared" ] || say "note: --shared does not change $config: check its \"shared\" key"
else
    if [ "$user_mode" -eq 1 ]; then
        if [ -n "$shared" ]; then
            printf '{"shared": %s, "device": %s}\n' "$(json_string "$shared")" "$(json_string "$device")"
        else
            printf '{"device": %s}\n' "$(json_string "$device")"
        fi | write_file "$config" 0644
    else
        # The unit's SYNCD_SHARED wins over "shared" here; the key is for syncctl run by hand
        # with --config $config (syncctl reads this file only when told).
        printf '{"shared": %s, "device": %s}\n' "$(json_string "${shared:-/srv/syncd/shared}")" \
            "$(json_string "$device")" | write_file "$config" 0644
    fi
fi

# 6. The shared folder (system install): created if missing, never changed if it exists.
if [ "$user_mode" -eq 0 ]; then
    folder=${shared:-/srv/syncd/shared}
    if [ -d "$folder" ]; then
        say "exists: $folder (owner and mode left as they are)"
    else
        run install -d -o syncd -g syncd -m 2770 "$folder"
    fi
    if [ -n "$shared" ] && [ "$shared" != /srv/syncd/shared ]; then
        make_directory "$unit_dir/syncd.service.d"
        write_file "$unit_dir/syncd.service.d/shared-folder.conf" 0644 <<EOF
# Written by scripts/install.sh --shared: syncd.service uses $shared instead of /srv/syncd/shared.
[Unit]
RequiresMountsFor=$shared

[Service]
ReadWritePaths=
ReadWritePaths=-$shared
Environment=SYNCD_SHARED=$shared
EOF
    fi
fi

# 7. What next.
say ""
if [ "$dry_run" -eq 1 ]; then
    say "Dry run finished: nothing was changed."
    exit 0
fi
if [ "$user_mode" -eq 1 ]; then
    cat <<EOF
Installed. Next:
  1. Check $config: it needs "shared" (your synced folder) and "device" (this machine's ID).
  2. systemctl --user daemon-reload
  3. systemctl --user enable --now syncd.service
  4. journalctl --user -u syncd -f          (logs; syncd --log-level debug for more)
  Optional: loginctl enable-linger \$USER   (keep syncd running when you are logged out)
  zsh completion: add $prefix/share/zsh/site-functions to fpath in ~/.zshrc (bash and fish find theirs).
EOF
    case ":$PATH:" in *":$bin_dir:"*) ;; *) say "  Note: $bin_dir is not on your PATH (syncctl lives there)." ;; esac
else
    cat <<EOF
Installed. Next:
  1. Check $config (the device ID is "$device").
  2. Let your sync tool write the shared folder: usermod -aG syncd <sync-tool user>
     (the folder should be group syncd, mode 2770; syncd's published files are 0644).
  3. systemctl daemon-reload
  4. systemctl enable --now syncd.service
     (or, per folder: /etc/syncd/NAME.json and /srv/syncd/NAME, then systemctl enable --now syncd@NAME)
  5. systemctl status syncd; journalctl -u syncd -f
EOF
fi
