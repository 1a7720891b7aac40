#!/usr/bin/env bash
# hiera-lookup's oracle: real Puppet 8.10 from Debian 13 ("trixie") packages, in a chroot, for
# recording conformance expectations (tests/conformance/record.sh uses it by default). What the
# recordings were made with: puppet-agent 8.10.0 on Ruby 3.3, hiera-eyaml 4.2, ruby-hocon 1.3,
# and deep_merge 1.2.2 (the version Puppet's all-in-one packages bundle; Debian ships 1.1.1, which
# this script patches with deep_merge-1.1.1-to-1.2.2.diff beside it, unless DEEP_MERGE=1.1.1).
#
#   puppet8-oracle.sh setup           build the chroot once: debootstrap --variant=minbase trixie
#                                     with puppet-agent, hiera-eyaml, ruby-hocon (a few minutes;
#                                     needs root, network and debootstrap, installed with apt-get
#                                     when missing)
#   puppet8-oracle.sh lookup ARGS...  `puppet lookup ARGS...` in the current directory, isolated:
#                                     fresh, empty --confdir/--codedir/--vardir/--logdir/--rundir
#                                     in a temporary directory (later ARGS override them); Puppet's
#                                     exit status is passed through
#   puppet8-oracle.sh run CMD...      any command inside the chroot (puppet, ruby, facter ...) in
#                                     the current directory, with the same deep_merge and locale
#   puppet8-oracle.sh versions        what the chroot holds (Puppet, Ruby, the packages)
#   puppet8-oracle.sh path            the chroot's directory
#   puppet8-oracle.sh unmount         undo the bind mounts lookup/run made
#
# Host directories: the top-level directories holding the current directory and this script, plus
# /tmp and any listed in $PUPPET8_ORACLE_BINDS (space-separated), are bind-mounted at
# the same paths inside, so absolute paths (and the --explain traces that print them) read the same
# as outside. Everything runs as root (chroot).
#
# Environment:
#   PUPPET8_ORACLE_ROOT    the chroot (default /var/lib/hiera-lookup-puppet8)
#   PUPPET8_ORACLE_MIRROR  Debian mirror for setup (default: the host's apt mirror when it is a
#                          Debian one, else http://deb.debian.org/debian)
#   PUPPET8_ORACLE_DEBOOTSTRAP_ARGS  extra debootstrap arguments (e.g. --keyring=FILE on a host
#                          without Debian's archive keyring)
#   DEEP_MERGE             1.2.2 (default) or 1.1.1 (Debian's own, unpatched)
# Puppet runs with LANG=C.UTF-8 (the recordings assume a UTF-8 locale: under LANG=C Puppet escapes
# non-ASCII text in --explain).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
CHROOT=${PUPPET8_ORACLE_ROOT:-/var/lib/hiera-lookup-puppet8}
DIFF=$HERE/deep_merge-1.1.1-to-1.2.2.diff
WANT_PUPPET=8.10.0
# Where the patched deep_merge lives inside the chroot (put first on Ruby's load path).
DM_DIR=/opt/hiera-lookup/deep_merge-1.2.2

die() { echo "puppet8-oracle: $*" >&2; exit 2; }

debian_mirror() {
    local m=${PUPPET8_ORACLE_MIRROR:-}
    if [[ -z $m ]]; then
        # deb822 sources first, then the one-line format; only a mirror that serves Debian.
        m=$(awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
        [[ -n $m ]] || m=$(awk '$1 == "deb" && $2 ~ /debian/ { print $2; exit }' /etc/apt/sources.list 2>/dev/null || true)
    fi
    printf '%s' "${m:-http://deb.debian.org/debian}"
}

cmd_setup() {
    [[ $(id -u) == 0 ]] || die "setup needs root (debootstrap, chroot)"
    if [[ -x $CHROOT/usr/bin/puppet ]]; then
        echo "puppet8-oracle: already set up in $CHROOT ($(cmd_versions | head -n1))"
        return 0
    fi
    if ! command -v debootstrap >/dev/null; then
        command -v apt-get >/dev/null || die "debootstrap is missing (install it with your package manager)"
        apt-get update -qq && apt-get install -y -qq debootstrap >/dev/null
    fi
    local mirror log=/tmp/puppet8-oracle-setup.log
    mirror=$(debian_mirror)
    mkdir -p "$CHROOT"
    echo "puppet8-oracle: debootstrap trixie from $mirror into $CHROOT (log: $log)"
    # shellcheck disable=SC2086 # extra arguments are meant to be split
    if ! debootstrap --variant=minbase --include=puppet-agent,hiera-eyaml,ruby-hocon \
        ${PUPPET8_ORACLE_DEBOOTSTRAP_ARGS:-} trixie "$CHROOT" "$mirror" >"$log" 2>&1; then
        tail -n 20 "$log" >&2
        die "debootstrap failed (log: $log)"
    fi
    deep_merge_lib
    cmd_versions
    local v
    v=$(chroot "$CHROOT" puppet --version)
    [[ $v == "$WANT_PUPPET" ]] ||
        echo "puppet8-oracle: WARNING: Puppet $v, the recordings are Puppet $WANT_PUPPET's" >&2
}

# Builds (once, and again whenever the diff changes) Debian's deep_merge/core.rb patched to 1.2.2,
# under $DM_DIR inside the chroot. Serialised with a lock: record.sh runs several workers at once.
deep_merge_lib() {
    local lib=$CHROOT$DM_DIR/lib stamp sum
    sum=$(sha256sum "$DIFF" | cut -d' ' -f1)
    stamp=$CHROOT$DM_DIR/diff.sha256
    [[ -f $stamp && $(cat "$stamp") == "$sum" ]] && return 0
    (
        flock 9
        [[ -f $stamp && $(cat "$stamp") == "$sum" ]] && exit 0
        local orig=$CHROOT/usr/lib/ruby/vendor_ruby/deep_merge/core.rb tmp
        [[ -f $orig ]] || die "no deep_merge in the chroot ($orig)"
        tmp=$(mktemp -d "$CHROOT/opt/.dm.XXXXXX")
        mkdir -p "$tmp/lib/deep_merge"
        cp "$orig" "$tmp/lib/deep_merge/core.rb"
        (cd "$tmp" && patch -s -p1 --no-backup-if-mismatch <"$DIFF") ||
            { rm -rf "$tmp"; die "cannot patch the chroot's deep_merge with $DIFF (not 1.1.1?)"; }
        rm -rf "$CHROOT$DM_DIR"
        mkdir -p "$(dirname "$CHROOT$DM_DIR")"
        mv "$tmp" "$CHROOT$DM_DIR"
        printf '%s\n' "$sum" >"$stamp"
    ) 9>"$CHROOT/opt/.deep_merge.lock"
    [[ -f $lib/deep_merge/core.rb ]]
}

top_dir() { local p=${1#/}; printf '/%s' "${p%%/*}"; }

# Mounts /proc, /sys and the host directories (see the header) once; serialised with a lock.
mounts() {
    [[ -x $CHROOT/usr/bin/puppet ]] || die "not set up: run '$0 setup' (as root)"
    [[ $(id -u) == 0 ]] || die "needs root (chroot)"
    local dirs=() d
    dirs=("$(top_dir "$PWD")" "$(top_dir "$HERE")" /tmp)
    # shellcheck disable=SC2206 # a space-separated list
    dirs+=(${PUPPET8_ORACLE_BINDS:-})
    (
        flock 9
        mountpoint -q "$CHROOT/proc" || mount -t proc proc "$CHROOT/proc"
        mountpoint -q "$CHROOT/sys" || mount --rbind /sys "$CHROOT/sys" 2>/dev/null || true
        for d in "${dirs[@]}"; do
            case $d in / | /proc | /sys | /dev | /run | /var | /usr | /etc | /bin | /sbin | /lib | /lib64 | /boot | /opt) continue ;; esac
            [[ -d $d ]] || continue
            mountpoint -q "$CHROOT$d" && continue
            mkdir -p "$CHROOT$d"
            mount --bind "$d" "$CHROOT$d"
        done
    ) 9>"$CHROOT/.mount.lock"
}

# Runs a command inside the chroot in directory $1, with the locale and deep_merge of the recordings.
inside() {
    local dir=$1 rubylib=${RUBYLIB:-}
    shift
    case ${DEEP_MERGE:-1.2.2} in
    1.2.2) deep_merge_lib; rubylib=$DM_DIR/lib${rubylib:+:$rubylib} ;;
    1.1.1) ;;
    *) die "DEEP_MERGE must be 1.2.2 or 1.1.1" ;;
    esac
    LANG=C.UTF-8 LC_ALL=C.UTF-8 RUBYLIB=$rubylib \
        chroot "$CHROOT" /bin/bash -c 'cd "$1" && shift && exec "$@"' bash "$dir" "$@"
}

cmd_lookup() {
    mounts
    local t rc=0
    t=$(mktemp -d /tmp/puppet8-oracle.XXXXXX)
    mkdir -p "$t/code/environments/production" "$t/conf" "$t/var" "$t/log" "$t/run"
    inside "$PWD" puppet lookup --codedir "$t/code" --confdir "$t/conf" --vardir "$t/var" \
        --logdir "$t/log" --rundir "$t/run" "$@" || rc=$?
    rm -rf "$t"
    return "$rc"
}

cmd_versions() {
    [[ -x $CHROOT/usr/bin/puppet ]] || die "not set up: run '$0 setup' (as root)"
    printf 'puppet %s, ruby %s\n' "$(chroot "$CHROOT" puppet --version)" \
        "$(chroot "$CHROOT" ruby -e 'print RUBY_VERSION')"
    chroot "$CHROOT" dpkg-query -W -f '${Package} ${Version}\n' \
        puppet-agent hiera-eyaml ruby-hocon ruby-deep-merge 2>/dev/null || true
    if [[ -f $CHROOT$DM_DIR/lib/deep_merge/core.rb ]]; then
        echo "deep_merge 1.2.2 (patched copy in $DM_DIR) unless DEEP_MERGE=1.1.1"
    fi
}

cmd_unmount() {
    local m
    # Deepest first; only mounts under the chroot.
    awk -v r="$CHROOT/" 'index($2, r) == 1 { print $2 }' /proc/self/mounts | sort -r |
        while read -r m; do umount -l "$m" || true; done
}

sub=${1:-}
shift || true
case $sub in
setup) cmd_setup ;;
lookup) cmd_lookup "$@" ;;
run) mounts; inside "$PWD" "$@" ;;
versions) cmd_versions ;;
path) printf '%s\n' "$CHROOT" ;;
unmount) cmd_unmount ;;
*) sed -n '2,36p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
