#!/usr/bin/env bash
# gen-man.sh PROGRAM SECTION VERSION "NAME LINE" OUT.gz
# A man page from PROGRAM --help with help2man, gzipped. lutractl's page also holds the help of
# each of its commands. PROGRAM runs by its bare name so its usage line says "lutractl", not a
# build path.
set -euo pipefail
program=$1 section=$2 version=$3 name=$4 out=$5
dir=$(dirname "$program")
base=$(basename "$program")
export PATH="$dir:$PATH" QT_QPA_PLATFORM=offscreen
include=$(mktemp)
trap 'rm -f "$include"' EXIT
include_args=()
if [[ $base == lutractl ]]; then
  include_args=(--include="$include")
  echo "[COMMANDS]" >>"$include"
  # Command names: the indented words under "Subcommands:" of lutractl --help.
  for command in $("$base" --help | sed -n '/^Subcommands:/,/^$/s/^  \([a-z_-]\+\) .*/\1/p'); do
    printf '.SS %s\n.nf\n' "$command" >>"$include"
    # Each command's own lines: its description, usage, positionals and options.
    "$base" "$command" --help | sed '/^Nodes:/,$d; s/\\/\\\\/g; s/^\./\\\&./' >>"$include"
    printf '.fi\n' >>"$include"
  done
fi
mkdir -p "$(dirname "$out")"
help2man --no-info --section="$section" --version-string="$version" --name="$name" \
  --source="lutra $version" "${include_args[@]}" "$base" | gzip -9n >"$out.tmp"
mv "$out.tmp" "$out"
