#!/usr/bin/env bash
# gen-lutractl-completion.sh LUTRACTL TEMPLATE OUT
# Writes lutractl's bash completion: its commands and options read from `lutractl --help` and
# `lutractl <command> --help` (so the completion never lists a verb or option lutractl lacks),
# followed by TEMPLATE (lutractl-completion.bash), the code that completes from them and asks
# the ctld for parameter names (list_param) when they are wanted.
set -euo pipefail
lutractl=$1 template=$2 out=$3

# Option lines of CLI11 help ("  -H,--hosts TEXT   ..."): prints "names valued|flag".
options() {
  sed -n '/^Options:/,/^$/p' | awk '/^  -/ {
    names = $1; gsub(",", " ", names)
    valued = ($2 ~ /^[A-Z]+([:=].*)?$/) ? "valued" : "flag"
    print names, valued
  }'
}
# The names of options, or of those taking a value.
names() { awk '{ $NF = ""; print }' | xargs; }
valued() { awk '$NF == "valued" { $NF = ""; print }' | xargs; }

help=$("$lutractl" --help)
commands=$(sed -n '/^Subcommands:/,/^$/s/^  \([a-z_-]\+\) .*/\1/p' <<<"$help" | xargs)
[[ -n $commands ]] || { echo "$0: no commands found in $lutractl --help" >&2; exit 1; }
global=$(options <<<"$help")

mkdir -p "$(dirname "$out")"
{
  echo "# bash completion for lutractl, generated from its --help by"
  echo "# packaging/gen-lutractl-completion.sh (do not edit)."
  echo "_lutractl_commands='$commands'"
  echo "_lutractl_options='$(names <<<"$global")'"
  echo "_lutractl_valued='$(valued <<<"$global")'"
  echo "_lutractl_command_options() {"
  echo "    case \$1 in"
  for command in $commands; do
    own=$("$lutractl" "$command" --help | options)
    echo "    $command) echo '$(names <<<"$own")' ;;"
  done
  echo "    esac"
  echo "}"
  echo "_lutractl_command_valued() {"
  echo "    case \$1 in"
  for command in $commands; do
    own=$("$lutractl" "$command" --help | options)
    echo "    $command) echo '$(valued <<<"$own")' ;;"
  done
  echo "    esac"
  echo "}"
  cat "$template"
} >"$out.tmp"
bash -n "$out.tmp"
mv "$out.tmp" "$out"
