#!/usr/bin/env bash
# The documentation's commands, run: every fenced ```sh block of README.md and docs/*.md.
#
#   docs_commands_test.sh commands SOURCE_DIR PARITY      run the blocks, check the relative links
#   docs_commands_test.sh cli-reference SOURCE_DIR PARITY  check docs/cli.md against `--help`
#
# commands: each page runs in a scratch folder of its own holding a copy of models/, with `parity`
# on PATH, its blocks in page order (a block may use files an earlier block of the page wrote).
# Within a block each command (a line, or lines joined by a trailing backslash; comment lines
# skipped) runs on its own and must exit 0. The fence's info string says otherwise:
#   ```sh fails                 every command must exit 1 (a user error, one [E] line); a trailing
#                               comment `# [E] text ... text` names the error: each piece of text
#                               between the "..." must appear in the command's output
#   ```sh tested-by=FILE        run elsewhere (FILE, relative to the source folder): a command
#                               starting with `parity` must have its subcommand words and every
#                               --option in FILE; any other command must appear in FILE verbatim
# README.md's first block is not run here: it must be `make` and `make test`, the commands CI runs.
#
# cli-reference: docs/cli.md must have a `## parity <command>` section for every command that
# `parity --help` lists, and name every option that command's --help shows.
set -uo pipefail

mode=$1
source_dir=$(cd "$2" && pwd)
parity=$(realpath "$3")
[[ -x $parity ]] || { echo "FAIL: $3 is not an executable parity"; exit 1; }
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

scratch_root=$(mktemp -d)
trap 'rm -rf "$scratch_root"' EXIT
mkdir "$scratch_root/bin"
ln -s "$parity" "$scratch_root/bin/parity"
export PATH="$scratch_root/bin:$PATH"

# Prints a page's sh blocks as records: "BLOCK <line> <info>", "CMD <line> <command>", "END".
extract_blocks() {
  awk '
    /^```sh( |$)/ { inblock = 1; info = substr($0, 6); sub(/^ +/, "", info); print "BLOCK " NR " " info; cmd = ""; next }
    inblock && /^```/ { if (cmd != "") print "CMD " start " " cmd; print "END"; inblock = 0; next }
    inblock {
      line = $0
      if (cmd == "" && line ~ /^[ \t]*(#.*)?$/) next
      if (cmd == "") start = NR
      if (line ~ /\\$/) { sub(/\\$/, "", line); cmd = cmd line; next }
      print "CMD " start " " cmd line
      cmd = ""
    }' "$1"
}

# The words and options of a parity command line found in FILE (see tested-by above).
check_tested_by() {
  local where=$1 file=$2 cmd=$3
  local text
  text=$(cat "$source_dir/$file" 2>/dev/null) || { fail "$where: tested-by file $file does not exist"; return; }
  # shellcheck disable=SC2206
  local words=(${cmd%%#*})
  local i=0
  while [[ $i -lt ${#words[@]} && ${words[$i]} == *=* && ${words[$i]} != -* ]]; do i=$((i + 1)); done
  if [[ ${words[$i]:-} != parity ]]; then
    local line="${cmd%%#*}"
    line="${line%"${line##*[![:space:]]}"}"
    [[ $text == *"$line"* ]] || fail "$where: '$line' does not appear in $file"
    return
  fi
  local in_subcommand=1 w
  for w in "${words[@]:$((i + 1))}"; do
    if [[ $w == --* ]]; then
      in_subcommand=0
      [[ $text == *"${w%%=*}"* ]] || fail "$where: option ${w%%=*} is not exercised by $file"
    elif [[ $in_subcommand == 1 && $w =~ ^[a-z][a-z-]*$ ]]; then
      [[ $text == *"$w"* ]] || fail "$where: subcommand word '$w' is not exercised by $file"
    else
      in_subcommand=0
    fi
  done
}

# Relative links of a page ([text](path) and ![alt](path)) must name files or folders that exist.
check_links() {
  local page=$1 rel=${1#"$source_dir"/} target
  while IFS= read -r target; do
    target=${target%%#*}
    [[ -z $target || $target == *://* || $target == mailto:* ]] && continue
    [[ -e $(dirname "$page")/$target ]] || fail "$rel: link to '$target', which does not exist"
  done < <(grep -oE '\]\([^) ]+\)' "$page" | sed -E 's/^\]\((.*)\)$/\1/')
}

run_page() {
  local page=$1
  local rel=${page#"$source_dir"/}
  local scratch
  scratch=$(mktemp -d "$scratch_root/page.XXXXXX")
  cp -r "$source_dir/models" "$scratch/models"
  local info="" block_line=0 first_block=1 commands_in_block=0 tag line cmd
  while IFS= read -r record; do
    tag=${record%% *}
    case $tag in
      BLOCK)
        record=${record#BLOCK }
        block_line=${record%% *}
        info=${record#"$block_line"}
        info=${info# }
        commands_in_block=0
        ;;
      CMD)
        record=${record#CMD }
        line=${record%% *}
        cmd=${record#"$line" }
        commands_in_block=$((commands_in_block + 1))
        if [[ $rel == README.md && $first_block == 1 ]]; then
          local want=("make" "make test")
          [[ $commands_in_block -le 2 && ${cmd%%#*} =~ ^${want[$((commands_in_block - 1))]}[[:space:]]*$ ]] ||
            fail "README.md:$line: the first block must be \`make\` and \`make test\` (CI runs the README's test command), found: $cmd"
          continue
        fi
        if [[ $info == tested-by=* ]]; then
          check_tested_by "$rel:$line" "${info#tested-by=}" "$cmd"
          continue
        fi
        local want_code=0
        [[ $info == fails ]] && want_code=1
        [[ -z $info || $info == fails ]] || { fail "$rel:$block_line: unknown block kind 'sh $info'"; continue; }
        local start end rc
        start=$(date +%s%N)
        (cd "$scratch" && bash -c "$cmd") </dev/null >"$scratch/.log" 2>&1
        rc=$?
        end=$(date +%s%N)
        local missing=""
        if [[ $want_code == 1 && $cmd =~ \#\ (\[E\].*)$ ]]; then
          local expected=${BASH_REMATCH[1]} piece output
          output=$(cat "$scratch/.log")
          while [[ -n $expected ]]; do
            piece=${expected%%...*}
            [[ $piece == "$expected" ]] && expected="" || expected=${expected#*...}
            piece=$(echo "$piece" | sed 's/^ *//; s/ *$//')
            [[ -z $piece || $output == *"$piece"* ]] || missing+=" '$piece'"
          done
        fi
        if [[ $rc != "$want_code" || -n $missing ]]; then
          fail "$rel:$line: exit $rc (wanted $want_code)${missing:+, output lacks$missing}: $cmd"
          tail -n 15 "$scratch/.log" | sed 's/^/    /'
        else
          printf 'ok %s:%s (%d ms): %s\n' "$rel" "$line" $(((end - start) / 1000000)) "$cmd"
        fi
        ;;
      END)
        [[ $rel != README.md || $first_block == 0 || $commands_in_block == 2 ]] ||
          fail "README.md:$block_line: the first block must be \`make\` and \`make test\`"
        first_block=0
        ;;
    esac
  done < <(extract_blocks "$page")
}

# The command names `parity --help` lists: the lowercase words before each summary.
list_commands() {
  parity --help | awk '/^Commands:/ { on = 1; next }
    on && /^$/ { exit }
    on { name = ""; for (i = 1; i <= NF && $i ~ /^[a-z][a-z0-9-]*$/; i++) name = name (name == "" ? "" : " ") $i; print name }'
}

check_cli_reference() {
  local doc="$source_dir/docs/cli.md"
  [[ -f $doc ]] || { fail "docs/cli.md is missing"; return; }
  local text commands command
  text=$(cat "$doc")
  commands=$(list_commands)
  [[ -n $commands ]] || { fail "parity --help lists no commands"; return; }
  while IFS= read -r command; do
    [[ $text == *"## parity $command"$'\n'* ]] || fail "docs/cli.md has no section '## parity $command'"
    local options option
    # shellcheck disable=SC2086
    options=$(parity $command --help | grep -oE '(^|[ ,])--[a-z0-9][a-z0-9-]*' | sed 's/^[ ,]//' | sort -u)
    for option in $options; do
      [[ $text == *"$option"* ]] || fail "docs/cli.md does not name '$option' of 'parity $command'"
    done
  done <<<"$commands"
}

case $mode in
  commands)
    for page in "$source_dir/README.md" "$source_dir"/docs/*.md; do
      check_links "$page"
      run_page "$page"
    done
    ;;
  cli-reference) check_cli_reference ;;
  *) echo "unknown mode '$mode' (commands or cli-reference)"; exit 2 ;;
esac

if [[ $failures != 0 ]]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "all passed"
