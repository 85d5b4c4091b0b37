#!/usr/bin/env bash
# Rewrites the generated part of docs/cli.md (everything after its "generated below" marker) from
# the option tables, as `parity <command> --help` prints them: one section per command, then the
# option groups every command shares (logging, --extension, the runners' own options) once.
#
#   scripts/make_cli_reference.sh [PARITY]     (default: build/bin/parity)
set -euo pipefail
cd "$(dirname "$0")/.."
parity=${1:-build/bin/parity}
doc=docs/cli.md
marker='<!-- generated below by scripts/make_cli_reference.sh -->'
grep -qxF "$marker" "$doc" || { echo "$doc has no line '$marker'" >&2; exit 1; }

# Groups that are the same in every command's help (titles as --help prints them).
shared_group='^(Logging|Extensions|ref runner|.* runner \(--[a-z0-9-]+\)):$'

# select_groups keep|drop: the help on stdin with the shared groups kept alone, or left out.
select_groups() {
  awk -v want="$1" -v shared="$shared_group" '
    /^[^ ].*:$/ { in_shared = ($0 ~ shared) }
    (want == "drop" && !in_shared) || (want == "keep" && in_shared) { print }'
}

# awk reads to the end (no early exit) so that parity never writes into a closed pipe (SIGPIPE
# under pipefail on a loaded machine).
commands=$("$parity" --help | awk '/^Commands:/ { on = 1; next }
  on && /^$/ { on = 0 }
  on { name = ""; for (i = 1; i <= NF && $i ~ /^[a-z][a-z0-9-]*$/; i++) name = name (name == "" ? "" : " ") $i; print name }')

out=$(mktemp)
trap 'rm -f "$out"' EXIT
{
  awk -v marker="$marker" '{ print } $0 == marker { exit }' "$doc"
  while IFS= read -r command; do
    printf '\n## parity %s\n```text\n' "$command"
    # shellcheck disable=SC2086
    "$parity" $command --help | select_groups drop | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}'
    printf '```\n'
  done <<<"$commands"
  printf '\n## Option groups every command shares\n```text\n'
  "$parity" run --help | select_groups keep | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}'
  printf '```\n'
} >"$out"
cp "$out" "$doc"
echo "wrote $doc ($(wc -l <"$doc") lines, $(wc -l <<<"$commands") commands)"
