#!/usr/bin/env bash
# The GitHub Action's step (action.yml): runs `swc compact` from the registry's transcript-compact package with the
# action's inputs, passed in INPUT_* variables. Every check of the values is swc's own, so a bad input fails the step
# with the one-line error and exit code 2 the command line gives.
set -euo pipefail
# Glob patterns reach swc as typed: it expands them itself (and a file that exists is always a file).
set -f

version=${INPUT_VERSION:-}
if [ -z "$version" ]; then
  # The package version this copy of the action was released with.
  version=$(node -p 'require(process.argv[1]).version' "$GITHUB_ACTION_PATH/package.json")
fi

args=(compact)
case "${INPUT_MODE:-check}" in
  check) args+=(--check) ;;
  in-place) args+=(--in-place) ;;
  dry-run) args+=(--dry-run) ;;
  *)
    echo "swc: error: the action's mode must be check, in-place or dry-run, got \"${INPUT_MODE}\"" >&2
    exit 2
    ;;
esac
[ -n "${INPUT_TARGET:-}" ] && args+=(--target "$INPUT_TARGET")
[ -n "${INPUT_CONTEXT_WINDOW:-}" ] && args+=(--context-window "$INPUT_CONTEXT_WINDOW")
[ -n "${INPUT_SHARD:-}" ] && args+=(--shard "$INPUT_SHARD")
[ -n "${INPUT_REPORT:-}" ] && args+=(--report "$INPUT_REPORT")
if [ -n "${INPUT_ARGS:-}" ]; then
  # Split as a shell splits words, quotes and backslashes included, and never evaluated: nothing in it is expanded or
  # run. Bad quoting fails the step before swc runs, rather than running it with the words cut off.
  # shellcheck source=split-words.sh
  source "$GITHUB_ACTION_PATH/.github/action/split-words.sh"
  if ! split_words "$INPUT_ARGS"; then
    echo "swc: error: the action's args have $split_error: $INPUT_ARGS" >&2
    exit 2
  fi
  args+=("${words[@]}")
fi

# One input per line, surrounding blanks trimmed; `--` keeps a path that starts with a dash a path.
args+=(--)
while IFS= read -r line || [ -n "$line" ]; do
  line=${line#"${line%%[![:space:]]*}"}
  line=${line%"${line##*[![:space:]]}"}
  [ -n "$line" ] && args+=("$line")
done <<< "${INPUT_INPUTS:-}"

exec npx --yes "transcript-compact@$version" "${args[@]}"
