#!/usr/bin/env bash
# The GitHub Action's run step (action.yml), in the control repo: `lint` or `diff` with the
# action's inputs (INPUT_COMMAND, INPUT_FACTS_DIR, INPUT_BASE, INPUT_FORMAT, INPUT_ARGS), the
# same commands README's CI section gives. diff exits 1 when answers change (what a pull
# request is for): only 2 fails the step.
set -euo pipefail
command=${INPUT_COMMAND:-lint}
format=${INPUT_FORMAT:-github}
args=()
[[ -n "${INPUT_FACTS_DIR:-}" ]] && args+=(--facts-dir "$INPUT_FACTS_DIR")
args+=(--format "$format")
# More arguments, split as a shell splits words (no globbing).
if [[ -n "${INPUT_ARGS:-}" ]]; then
  set -f
  # shellcheck disable=SC2206
  args+=($INPUT_ARGS)
  set +f
fi
case "$command" in
  lint)
    exec hiera-lookup lint "${args[@]}"
    ;;
  diff)
    base=${INPUT_BASE:-}
    if [[ -z "$base" ]]; then
      [[ -n "${GITHUB_BASE_REF:-}" ]] || {
        echo "hiera-lookup action: diff needs a base revision: run it on pull_request, or give the input base" >&2
        exit 2
      }
      base=origin/$GITHUB_BASE_REF
      # actions/checkout fetches one commit unless told otherwise: the base branch too.
      if ! git rev-parse --verify --quiet "$base^{commit}" >/dev/null \
        && ! git fetch --no-tags --quiet origin "$GITHUB_BASE_REF:refs/remotes/origin/$GITHUB_BASE_REF" 2>/dev/null; then
        echo "hiera-lookup action: could not fetch $base: check out with actions/checkout's fetch-depth: 0, or give the input base" >&2
        exit 2
      fi
    fi
    status=0
    hiera-lookup diff "$base" HEAD --all "${args[@]}" || status=$?
    [[ $status -eq 1 ]] && status=0
    exit "$status"
    ;;
  *)
    echo "hiera-lookup action: command is '$command': give lint or diff" >&2
    exit 2
    ;;
esac
