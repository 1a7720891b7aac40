#!/usr/bin/env bash
# Re-records conformance expectations from real Puppet (`puppet lookup`), by default Puppet 8.10
# through the repository's own oracle, oracle/puppet8-oracle.sh (a Debian 13 chroot built from
# Debian's packages: run `tests/conformance/oracle/puppet8-oracle.sh setup` once, as root).
# Not run by CI: it needs Puppet installed. Format: see tests/conformance/README.md.
#
#   tests/conformance/record.sh                 every case of every suite
#   tests/conformance/record.sh core            one suite
#   tests/conformance/record.sh core/v5-basic   one case (a bare case name also works)
#   tests/conformance/record.sh core/v5-basic:q3  one query of a case
#   tests/conformance/record.sh --puppet7 ...   record from the host's Puppet 7 (`puppet`) instead
#                                               (same as PUPPET=puppet)
#
# Environment: PUPPET (the command run as `$PUPPET lookup ARGS`: default oracle/puppet8-oracle.sh,
# i.e. Puppet 8.10; `puppet` for the host's Puppet 7.23; any tool with the same `lookup`
# interface, e.g. fork/p8fork), DEEP_MERGE (1.2.2, the all-in-one packages' deep_merge, by
# default; 1.1.1 for Debian's own copy, see deep-merge-1.1.1.txt: the oracle script applies
# oracle/deep_merge-1.1.1-to-1.2.2.diff itself, and record.sh does the same for a chroot tool named
# `puppet8` that has a `path` command), JOBS (parallel puppet processes, default 2).
# Idempotent: a recorded case's expected/ directory is rebuilt from scratch (a single-query
# run replaces only that query's files), and every puppet run gets fresh, empty
# confdir/codedir/vardir/logdir/rundir, so nothing leaks from one run to the next.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
SELF="$ROOT/$(basename "${BASH_SOURCE[0]}")"
if [[ ${1:-} == --puppet7 ]]; then
    shift
    export PUPPET=puppet
fi
PUPPET=${PUPPET:-$ROOT/oracle/puppet8-oracle.sh}
export DEEP_MERGE=${DEEP_MERGE:-1.2.2}
JOBS=${JOBS:-2}
# The chroot oracle binds /tmp (and the top directory of the checkout): keep the per-run dirs there.
TMPBASE=/tmp

# Split a query's argument text like the harness does: whitespace separates words,
# single quotes group (and may join with adjacent text); no other shell syntax.
split_args() {
    local s=$1 cur='' c i inq=0 have=0
    ARGS=()
    for ((i = 0; i < ${#s}; i++)); do
        c=${s:i:1}
        if ((inq)); then
            if [[ $c == "'" ]]; then inq=0; else cur+=$c; fi
        elif [[ $c == "'" ]]; then
            inq=1 have=1
        elif [[ $c == [[:space:]] ]]; then
            if ((have)); then ARGS+=("$cur"); cur='' have=0; fi
        else
            cur+=$c have=1
        fi
    done
    if ((inq)); then return 1; fi
    if ((have)); then ARGS+=("$cur"); fi
    return 0
}

# Prints "id<TAB>args" for every query line of a queries file.
query_lines() {
    sed -e 's/\r$//' "$1" | awk '
        /^[ \t]*(#|$)/ { next }
        { sub(/^[ \t]+/, ""); id = $1; rest = substr($0, length(id) + 1); sub(/^[ \t]+/, "", rest);
          printf "%s\t%s\n", id, rest }'
}

has_arg() { # has_arg WORD ARGS... : exact word present?
    local w=$1 a
    shift
    for a in "$@"; do [[ $a == "$w" ]] && return 0; done
    return 1
}

# First line of a puppet stderr worth reporting when there is no "Error:" line: skips warnings,
# their "(file: ...)" continuations and the noise Facter prints inside the Puppet 8 chroot (lines
# that are not Puppet's own messages nor a Ruby exception).
first_message() {
    grep -v '^Warning: \|^   (file\|^[[:space:]]*$' "$1" |
        grep -m1 -E "^(Error|Notice|Info|Debug): |\.rb:[0-9]+:in " ||
        grep -v '^Warning: \|^   (file\|^[[:space:]]*$\|^\[[0-9-]* [0-9:.]* *[A-Z]* \|[Ff]acter\|[Pp]ermission denied' "$1" |
        grep -m1 . || true
}

# Records one query: worker mode, called through xargs.
record_one() {
    local case_dir=$1 id=$2 outdir=$3 line args_text tmp rc rc2 status msg strict=()
    line=$(query_lines "$case_dir/queries" | awk -F'\t' -v id="$id" '$1 == id && !done { print; done = 1 }')
    args_text=${line#*$'\t'}
    split_args "$args_text" || { echo "FAIL $case_dir $id unbalanced quote" >&2; return 0; }
    local args=("${ARGS[@]}")
    local explain=0
    if has_arg --explain "${args[@]}" || has_arg --explain-options "${args[@]}"; then explain=1; fi
    local a want_strict=1
    for a in "${args[@]}"; do
        if [[ $a == --strict || $a == --strict=* ]]; then want_strict=0; fi
    done
    ((want_strict)) && strict=(--strict error --strict_variables)

    tmp=$(mktemp -d "$TMPBASE/conformance-rec.XXXXXX")
    mkdir -p "$tmp/conf" "$tmp/code/environments/production" "$tmp/var" "$tmp/log" "$tmp/run"
    local iso=(--confdir "$tmp/conf" --codedir "$tmp/code" --vardir "$tmp/var" --logdir "$tmp/log"
        --rundir "$tmp/run" --color false)

    # Puppet creates <environmentpath>/production when it is missing (layers/p8-no-envdir): note
    # which would be new, so that they are removed again and a second recording sees the same tree.
    local envpath='' created=() i
    for ((i = 0; i < ${#args[@]}; i++)); do
        case ${args[i]} in
        --environmentpath) envpath=${args[i + 1]:-} ;;
        --environmentpath=*) envpath=${args[i]#*=} ;;
        esac
    done
    if [[ -n $envpath ]]; then
        [[ $envpath == /* ]] || envpath=$case_dir/$envpath
        [[ -d $envpath && ! -e $envpath/production ]] && created=("$envpath/production")
    fi

    rc=0
    (cd "$case_dir" && exec "$PUPPET" lookup "${iso[@]}" "${strict[@]}" "${args[@]}") \
        >"$tmp/stdout" 2>"$tmp/stderr" </dev/null || rc=$?

    local exp="$case_dir/$outdir"
    mkdir -p "$exp"
    rm -f "$exp/$id.out" "$exp/$id.status" "$exp/$id.err"
    CASE="$case_dir" perl -pe 's/\Q$ENV{CASE}\E/<CASE>/g' "$tmp/stdout" >"$exp/$id.out"

    local errline uncaught note=''
    errline=$(grep -m1 '^Error: ' "$tmp/stderr" || true)
    # An uncaught Ruby exception (unknown environment) prints "<file>:<line>:in `m': text (Class)"
    # (Ruby <= 3.3) or "<file>:<line>:in 'm': text (Class)" (Ruby 3.4) and exits 1.
    uncaught=$(grep -m1 -E "^/[^:]+\.rb:[0-9]+:in [\`'][^']+': .* \([A-Z][A-Za-z:]+\)\$" "$tmp/stderr" || true)
    if ((rc == 0)); then
        status=0
    elif ((rc == 1)) && [[ -n $errline ]]; then
        status=2
        msg=${errline#Error: }
        msg=${msg#Could not run: }
    elif ((rc == 1)) && [[ -n $uncaught ]]; then
        status=2
        msg=$uncaught
    elif ((rc == 1)) && ((explain == 0)); then
        # Silent exit 1: a miss or a LookupError. Ask --explain which (text render, so that the
        # error text, a root text, is printed).
        local rerun=() skip=0
        for a in "${args[@]}"; do
            if ((skip)); then skip=0; continue; fi
            case $a in
            --render-as) skip=1; continue ;;
            --render-as=*) continue ;;
            esac
            rerun+=("$a")
        done
        rc2=0
        (cd "$case_dir" && exec "$PUPPET" lookup "${iso[@]}" "${strict[@]}" "${rerun[@]}" --explain) \
            >"$tmp/stdout2" 2>"$tmp/stderr2" </dev/null || rc2=$?
        local last
        last=$(grep -v '^[[:space:]]*$' "$tmp/stdout2" | tail -n1 || true)
        if [[ $last == "Function lookup() did not find a value"* ]]; then
            status=1
        elif [[ -n $last ]] && ((rc2 == 0)); then
            status=2
            msg=$last
        else
            status=2
            msg=$(first_message "$tmp/stderr")
            note="ODD: silent exit 1 and explain re-run gave rc=$rc2 (message taken from stderr)"
        fi
    else
        status=2
        msg=$(first_message "$tmp/stderr")
        [[ -n $msg ]] || msg="exit status $rc"
        note="ODD: puppet exit $rc without an Error: line"
    fi

    printf '%s\n' "$status" >"$exp/$id.status"
    if ((status == 2)); then
        msg=${msg//"$case_dir"/<CASE>}
        # An uncaught Ruby exception (unknown environment) prints "<file>:<line>:in `m': text
        # (Class)" (Ruby 3.4: "in 'm'"): keep Puppet's text only.
        if [[ $msg =~ ^/[^:]+\.rb:[0-9]+:in\ [\`\'][^\']+\':\ (.*)\ \([A-Z][A-Za-z:]+\)$ ]]; then
            msg=${BASH_REMATCH[1]}
        fi
        # Ruby inspects some objects with their address (#<Puppet::Parser::Scope:0x00007f...>),
        # different in every run: recorded as 0x…, which hiera-lookup prints.
        msg=$(printf '%s' "$msg" | sed -E 's/(#<[A-Za-z:]+:)0x[0-9a-f]+>/\10x…>/g')
        printf '%s\n' "$msg" >"$exp/$id.err"
    fi
    if grep -q "$tmp\|/tmp/puppet8-iso\|/tmp/puppet8-oracle\." "$exp/$id.out" "$exp/$id.err" 2>/dev/null; then
        note="${note:+$note; }LEAK: output mentions the temporary puppet dirs"
    fi
    rm -rf "$tmp"
    if ((${#created[@]})); then rmdir "${created[@]}" 2>/dev/null || true; fi
    local rel=${case_dir#"$ROOT"/}
    echo "$status $rel $id${note:+ $note}"
}

if [[ ${1:-} == --worker ]]; then
    record_one "$2" "$3" "$4"
    exit 0
fi

command -v "$PUPPET" >/dev/null || { echo "record.sh: '$PUPPET' not found (PUPPET=puppet needs apt-get install puppet)" >&2; exit 1; }
if [[ $PUPPET == */puppet8-oracle.sh && ! -x $("$PUPPET" path)/usr/bin/puppet ]]; then
    echo "record.sh: the Puppet 8.10 oracle is not built yet: run (as root) $PUPPET setup" >&2
    exit 1
fi

# deep_merge: Puppet's all-in-one packages bundle 1.2.2, Debian's Puppet (the chroot's) 1.1.1.
# oracle/puppet8-oracle.sh patches it itself (DEEP_MERGE is exported to it). For another chroot
# tool named `puppet8` with a `path` command (the team's earlier oracle), unless DEEP_MERGE=1.1.1:
# the chroot's core.rb patched with the same diff, put first on Ruby's load path (RUBYLIB passes
# through such a tool).
if [[ $DEEP_MERGE == 1.2.2 && $PUPPET == */puppet8 && -z ${RUBYLIB:-} ]]; then
    dm_dir=$(mktemp -d /tmp/deep_merge-1.2.2.XXXXXX)
    # Removed however the script ends (the trap below takes this one over).
    trap 'rm -rf "$dm_dir"' EXIT
    mkdir -p "$dm_dir/lib/deep_merge"
    cp "$("$PUPPET" path)/usr/lib/ruby/vendor_ruby/deep_merge/core.rb" "$dm_dir/lib/deep_merge/core.rb"
    (cd "$dm_dir" && patch -s -p1 <"$ROOT/oracle/deep_merge-1.1.1-to-1.2.2.diff") ||
        { echo "record.sh: cannot patch deep_merge to 1.2.2" >&2; exit 1; }
    export RUBYLIB=$dm_dir/lib
fi
puppet_version() {
    case $(basename "$PUPPET") in
    puppet8 | puppet8-oracle.sh) (cd "$TMPBASE" && "$PUPPET" run puppet --version 2>/dev/null) ;;
    *) "$PUPPET" --version 2>/dev/null ;;
    esac
}

# Resolve selections to case directories (+ optional single query id).
declare -a SEL=()
add_case() { SEL+=("$1${2:+:$2}"); }
select_arg() {
    local arg=$1 qid='' d
    if [[ $arg == *:* ]]; then qid=${arg##*:}; arg=${arg%:*}; fi
    arg=${arg%/}
    if [[ -f $ROOT/$arg/queries ]]; then add_case "$ROOT/$arg" "$qid"; return; fi
    if [[ -d $ROOT/$arg ]]; then
        for d in "$ROOT/$arg"/*/; do [[ -f $d/queries ]] && add_case "${d%/}"; done
        return 0
    fi
    local found=0
    for d in "$ROOT"/*/"$arg"/; do
        [[ -f $d/queries ]] && { add_case "${d%/}" "$qid"; found=1; }
    done
    ((found)) || { echo "record.sh: no suite or case named '$arg'" >&2; exit 1; }
}
if (($# == 0)); then
    for s in "$ROOT"/*/; do select_arg "$(basename "$s")"; done
else
    for a in "$@"; do select_arg "$a"; done
fi

start=$(date +%s)
jobs_file=$(mktemp)
results=$(mktemp)
trap 'rm -f "$jobs_file" "$results"; [[ -n ${dm_dir:-} ]] && rm -rf "$dm_dir"' EXIT
problems=0
for sel in "${SEL[@]}"; do
    case_dir=${sel%%:*}
    qid=''
    [[ $sel == *:* ]] && qid=${sel#*:}
    # Check the queries file: ids, quoting, mandatory flags, duplicates.
    declare -A seen=()
    while IFS=$'\t' read -r id rest; do
        if [[ ! $id =~ ^[a-z0-9_-]+$ ]]; then
            echo "BAD ${case_dir#"$ROOT"/}: invalid id '$id'" >&2; problems=1; continue
        fi
        if [[ -n ${seen[$id]:-} ]]; then echo "BAD ${case_dir#"$ROOT"/}: duplicate id $id" >&2; problems=1; fi
        seen[$id]=1
        if ! split_args "$rest"; then echo "BAD ${case_dir#"$ROOT"/} $id: unbalanced quote" >&2; problems=1; continue; fi
        if ! has_arg --node "${ARGS[@]}" || ! has_arg --facts "${ARGS[@]}"; then
            echo "BAD ${case_dir#"$ROOT"/} $id: queries must pass --node and --facts" >&2; problems=1
        fi
        # A whole case is recorded into expected.new/ and swapped in at the end, so an interrupted
        # run never leaves a half-recorded expected/; a single query goes straight to expected/.
        if [[ -z $qid ]]; then
            printf '%s\0%s\0%s\0' "$case_dir" "$id" expected.new >>"$jobs_file"
        elif [[ $qid == "$id" ]]; then
            printf '%s\0%s\0%s\0' "$case_dir" "$id" expected >>"$jobs_file"
        fi
    done < <(query_lines "$case_dir/queries")
    unset seen
    rm -rf "$case_dir/expected.new"
done
((problems == 0)) || { echo "record.sh: fix the queries files first" >&2; exit 1; }

total=$(tr -cd '\0' <"$jobs_file" | wc -c)
total=$((total / 3))
echo "recording $total queries from ${#SEL[@]} case(s) with puppet $(puppet_version) ($PUPPET), $JOBS in parallel"
xargs -r -0 -n3 -P "$JOBS" "$SELF" --worker <"$jobs_file" | tee "$results" | awk '/ODD|LEAK|FAIL/ { print }'

# Swap in the freshly recorded cases that are complete.
for sel in "${SEL[@]}"; do
    [[ $sel == *:* ]] && continue
    new="$sel/expected.new"
    want=$(query_lines "$sel/queries" | wc -l)
    got=$(find "$new" -name '*.status' 2>/dev/null | wc -l)
    if ((want == got)); then
        rm -rf "$sel/expected"
        if ((want > 0)); then mv "$new" "$sel/expected"; else rm -rf "$new"; fi
    else
        echo "WARNING: ${sel#"$ROOT"/}: only $got of $want queries recorded; expected/ left unchanged"
        rm -rf "$new"
    fi
done

elapsed=$(($(date +%s) - start))
echo "---- summary ----"
awk '{ split($2, p, "/"); key = p[1]; n[key]++; s[key, $1]++ }
     END { for (k in n) printf "%-10s %4d queries: %d found, %d not found, %d errors\n", k, n[k], s[k, 0], s[k, 1], s[k, 2] }' "$results" | sort
odd=$(grep -c 'ODD\|LEAK\|FAIL' "$results" || true)
recorded=$(wc -l <"$results")
if ((recorded != total)); then
    echo "WARNING: only $recorded of $total queries were recorded (a worker failed; see messages above)"
    odd=$((odd + total - recorded))
fi
echo "cases: $(awk '{ print $2 }' "$results" | sort -u | wc -l), queries: $(wc -l <"$results"), anomalies: $odd, time: ${elapsed}s"
