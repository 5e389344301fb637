#!/usr/bin/env bash
# The Debian packages, built and checked the way an admin meets them:
#   build  packaging/build-packages.sh (optimised, unsanitized, no tests) -> three .deb files
#   check  lintian (no error, no warning: fixed or overridden with a reason), package contents,
#          dependencies from dpkg-shlibdeps, systemd-analyze verify, desktop-file-validate,
#          appstreamcli validate
#   run    from the unpacked files only (dpkg -x into a throwaway root; no LUTRA_PLUGIN_PATH):
#          lutra-target and lutra-ctld started with the command lines of their installed units
#          and their installed config (paths adjusted), lutractl get_param through them, the tcp
#          plugin loaded from its installed directory, lutractl's bash completion asking the
#          ctld for parameter names, a program built against the installed client library
#          writing and reading a file on that target, every man page present and every
#          program's libraries found.
# Usage: test_packages.sh SOURCE_DIR BUILD_DIR LOCK_FILE (the build takes LOCK_FILE: the one
# build at a time on this machine).
set -euo pipefail
src=$1 build=$2 lock=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/lutra-packaging.XXXXXX")
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
step() { printf '\n== %s\n' "$*"; }
started=$SECONDS

step "build the packages ($build)"
# The build's own time, from when it holds the lock.
flock "$lock" bash -c 'SECONDS=0; "$1" "$2" && echo "packages built in $SECONDS s"' _ \
  "$src/packaging/build-packages.sh" "$build" >"$work/build.log" 2>&1 ||
  { tail -50 "$work/build.log"; fail "packaging/build-packages.sh failed (log above)"; }
build_seconds=$(sed -n 's/^packages built in \([0-9]*\) s$/\1/p' "$work/build.log")
checks_started=$SECONDS
version=$(sed -n 's/^CPACK_PACKAGE_VERSION:.*=//p; s/^CMAKE_PROJECT_VERSION:.*=//p' \
  "$build/CMakeCache.txt" | head -1)
arch=$(dpkg --print-architecture)
declare -A deb
for pkg in lutra-datapath lutra-ctld lutra-console; do
  deb[$pkg]=$build/${pkg}_${version}_${arch}.deb
  [[ -f ${deb[$pkg]} ]] || fail "cpack did not write ${deb[$pkg]}"
  echo "${deb[$pkg]} ($(stat -c %s "${deb[$pkg]}") bytes)"
done

step "lintian"
# Overridden tags are not reported; each override in packaging/lintian/ says why.
if ! lintian --fail-on error,warning --tag-display-limit 0 "${deb[@]}" >"$work/lintian.txt" 2>&1
then
  cat "$work/lintian.txt"
  fail "lintian reports errors or warnings (above): fix them or override them with a reason"
fi
cat "$work/lintian.txt"
echo "lintian: no errors, no warnings"

step "package contents"
libdir=usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)
# Every file each package must hold (each package may hold more: docs, overrides).
expect_files() { # package files...
  local pkg=$1 listing
  shift
  listing=$(dpkg-deb -c "${deb[$pkg]}" | awk '{print $6}' | sed 's|^\./|/|')
  for file in "$@"; do
    grep -qxF "$file" <<<"$listing" || fail "$pkg lacks $file; it holds:"$'\n'"$listing"
  done
}
doc=/usr/share/doc
expect_files lutra-datapath /usr/bin/lutra-target /usr/bin/lutra-params /usr/bin/lutra-bench \
  /usr/include/lutra/client.h "/$libdir/liblutra-client.a" "/$libdir/pkgconfig/lutra-client.pc" \
  "/$libdir/lutra/plugins/liblutra-transport-tcp.so" \
  "/$libdir/lutra/plugins/liblutra-transport-verbs.so" /lib/systemd/system/lutra-target@.service \
  /etc/lutra/targets/ $doc/lutra-datapath/examples/targets/ost0.conf \
  $doc/lutra-datapath/copyright $doc/lutra-datapath/changelog.gz \
  /usr/share/man/man1/lutra-target.1.gz /usr/share/man/man1/lutra-params.1.gz \
  /usr/share/man/man1/lutra-bench.1.gz
expect_files lutra-ctld /usr/sbin/lutra-ctld /usr/bin/lutractl /usr/bin/lutra-ctl-bench \
  /lib/systemd/system/lutra-ctld.service \
  /etc/lutra/ctld.yaml /etc/lutra/profiles/base.yaml /etc/lutra/profiles/compute.yaml \
  $doc/lutra-ctld/examples/slurm-epilog.sh /usr/share/bash-completion/completions/lutractl \
  /usr/share/man/man8/lutra-ctld.8.gz /usr/share/man/man1/lutractl.1.gz \
  /usr/share/man/man1/lutra-ctl-bench.1.gz \
  $doc/lutra-ctld/copyright $doc/lutra-ctld/changelog.gz
expect_files lutra-console /usr/bin/lutra-console \
  /usr/share/applications/org.lutra.console.desktop \
  /usr/share/metainfo/org.lutra.console.metainfo.xml \
  /usr/share/icons/hicolor/scalable/apps/org.lutra.console.svg \
  /usr/share/man/man1/lutra-console.1.gz $doc/lutra-console/copyright
# Nothing the units create at run time is shipped.
if dpkg-deb -c "${deb[lutra-ctld]}" | grep -E '\./(var|run)/'; then
  fail "lutra-ctld ships /var or /run paths (the units create them)"
fi
# dpkg keeps an admin's edits of every file in /etc.
conffiles=$(dpkg-deb -I "${deb[lutra-ctld]}" conffiles)
for file in $(dpkg-deb -c "${deb[lutra-ctld]}" | awk '{print $6}' | grep '^\./etc/.*[^/]$'); do
  grep -qxF "${file#.}" <<<"$conffiles" || fail "${file#.} is not a conffile of lutra-ctld"
done
echo "contents and conffiles as expected"

step "dependencies (dpkg-shlibdeps)"
expect_depends() { # package pattern...
  local pkg=$1 depends
  shift
  depends=$(dpkg-deb -f "${deb[$pkg]}" Depends)
  echo "$pkg: Depends: $depends"
  for pattern in "$@"; do
    grep -qE "$pattern" <<<"$depends" || fail "$pkg does not depend on /$pattern/"
  done
}
expect_depends lutra-datapath 'libc6 \(>=' 'libisal2' 'libibverbs1' 'libgrpc\+\+1' 'adduser'
expect_depends lutra-ctld 'libc6 \(>=' 'libsqlite3-0' 'libyaml-cpp0' 'libsystemd0' \
  'libgrpc\+\+1' 'adduser'
expect_depends lutra-console 'libc6 \(>=' 'libqt6widgets6' 'libqt6charts6'

step "unpack into a throwaway root"
root=$work/root
for pkg in "${!deb[@]}"; do dpkg -x "${deb[$pkg]}" "$root"; done
# Every program and plugin finds all its libraries on this machine.
for file in "$root"/usr/bin/* "$root"/usr/sbin/* "$root/$libdir"/lutra/plugins/*.so; do
  libraries=$(ldd "$file")
  if grep -q 'not found' <<<"$libraries"; then
    echo "$libraries"
    fail "$file: libraries not found (above)"
  fi
done
# Every program has its man page (section 8 for sbin).
for program in "$root"/usr/bin/*; do
  [[ -f $root/usr/share/man/man1/$(basename "$program").1.gz ]] ||
    fail "no man page for $(basename "$program")"
done
[[ -f $root/usr/share/man/man8/lutra-ctld.8.gz ]] || fail "no man page for lutra-ctld"
grep -q '^\.SS get_param' <<<"$(zcat "$root/usr/share/man/man1/lutractl.1.gz")" ||
  fail "lutractl's man page lacks its commands"

step "systemd units, desktop file, AppStream metainfo"
# Verified as the host's systemd would load them; the programs they start are checked in the
# throwaway root instead of on this machine (only their absence here may be reported).
unit_dir=$root/lib/systemd/system
units=("$unit_dir/lutra-ctld.service" "$unit_dir/lutra-target@.service")
systemd-analyze verify --man=no "${units[@]}" >"$work/verify.txt" 2>&1 || true
problems=0
while read -r line; do
  program=$(sed -n 's/.*Command \(\/[^ ]*\) is not executable: No such file.*/\1/p' <<<"$line")
  if [[ -n $program && -x $root$program ]]; then
    continue
  fi
  echo "$line"
  problems=$((problems + 1))
done <"$work/verify.txt"
((problems == 0)) || fail "systemd-analyze verify reports problems (above)"
echo "systemd-analyze verify: lutra-ctld.service lutra-target@.service ok"
desktop-file-validate "$root/usr/share/applications/org.lutra.console.desktop" ||
  fail "desktop-file-validate org.lutra.console.desktop"
appstreamcli validate --no-net "$root/usr/share/metainfo/org.lutra.console.metainfo.xml" ||
  fail "appstreamcli validate org.lutra.console.metainfo.xml"
QT_QPA_PLATFORM=offscreen "$root/usr/bin/lutra-console" --help >/dev/null ||
  fail "the installed lutra-console --help"

# ExecStart= (or another key) of an installed unit, its programs moved into the root.
unit_command() { # unit key
  sed -n "s/^$2=//p" "$root/lib/systemd/system/$1" |
    sed "s| /usr/| $root/usr/|g; s|^/usr/|$root/usr/|"
}
# Waits for a line matching $2 in file $1 while process $3 lives, and prints it.
wait_line() {
  for _ in $(seq 1 200); do
    if grep -m1 "$2" "$1"; then return 0; fi
    kill -0 "$3" 2>/dev/null || { cat "$1" "$1.err" >&2; fail "process exited before '$2'"; }
    sleep 0.1
  done
  cat "$1" "$1.err" >&2
  fail "timed out waiting for '$2' in $1"
}
unset LUTRA_PLUGIN_PATH
run=$work/run
mkdir -p "$run" "$work/ost0"

step "lutra-target from lutra-target@ost0.service and the example targets/ost0.conf"
# The admin's copy of the example, with a root and port of the test's own.
sed -e "s|^LUTRA_TARGET_ROOT=.*|LUTRA_TARGET_ROOT=$work/ost0|" \
  -e "s|^LUTRA_TARGET_LISTEN=.*|LUTRA_TARGET_LISTEN=tcp://127.0.0.1:0|" \
  -e "s|^LUTRA_TARGET_OPTIONS=.*|LUTRA_TARGET_OPTIONS=--brw-size 8 --threads 2|" \
  "$root$doc/lutra-datapath/examples/targets/ost0.conf" >"$work/ost0.conf"
grep -q "^EnvironmentFile=/etc/lutra/targets/%i.conf$" "$unit_dir/lutra-target@.service" ||
  fail "lutra-target@.service does not read /etc/lutra/targets/%i.conf"
# As systemd runs it: %i is the instance, ${X} one argument, $X split at spaces.
target_command=$(unit_command lutra-target@.service ExecStart |
  sed -E 's/%i/ost0/g; s/\$\{([A-Z_]+)\}/"${\1}"/g')
echo "$target_command"
(
  # EnvironmentFile= lines: KEY=VALUE, the value to the end of the line, quotes removed.
  while IFS= read -r line; do
    [[ $line =~ ^([A-Za-z_][A-Za-z0-9_]*)=(.*)$ ]] || continue
    key=${BASH_REMATCH[1]} value=${BASH_REMATCH[2]}
    [[ $value =~ ^\"(.*)\"$ ]] && value=${BASH_REMATCH[1]}
    export "$key=$value"
  done <"$work/ost0.conf"
  export LUTRA_RUN_DIR=$run
  eval "exec $target_command" >"$work/target.out" 2>"$work/target.out.err"
) &
pids+=($!)
target_pid=${pids[-1]}
target_uri=$(wait_line "$work/target.out" "listening on" "$target_pid" |
  sed -E 's/.*listening on ([^ ]+).*/\1/')
echo "lutra-target ost0 listening on $target_uri"
plugin=$root/$libdir/lutra/plugins/liblutra-transport-tcp.so
grep -qF "$plugin" "/proc/$target_pid/maps" ||
  fail "lutra-target did not load the tcp plugin from $plugin"
echo "tcp plugin loaded from $plugin"

step "lutra-ctld from lutra-ctld.service and /etc/lutra/ctld.yaml"
# The installed config with the test's run dir, database, profiles and free ports.
sed -e "s|^  - 127.0.0.1:7370|  - 127.0.0.1:0|" \
  -e "s|^metrics_listen: [^ ]*|metrics_listen: 127.0.0.1:0|" \
  -e "s|^run_dir: [^ ]*|run_dir: $run|" -e "s|^db: [^ ]*|db: $work/ctld.db|" \
  -e "s|^profiles_dir: [^ ]*|profiles_dir: $root/etc/lutra/profiles|" \
  "$root/etc/lutra/ctld.yaml" >"$work/ctld.yaml"
changed=$(diff "$root/etc/lutra/ctld.yaml" "$work/ctld.yaml" | grep -c '^>' || true)
((changed == 5)) ||
  fail "the test could not adjust the 5 paths and ports of /etc/lutra/ctld.yaml"
to_test_config() { sed "s|/etc/lutra/ctld.yaml|$work/ctld.yaml|"; }
# Type=notify: systemd waits for READY=1, so lutra-ctld must call sd_notify (libsystemd).
grep -q '^Type=notify$' "$unit_dir/lutra-ctld.service" ||
  fail "lutra-ctld.service is not Type=notify"
grep -qw sd_notify <<<"$(nm -D --undefined-only "$root/usr/sbin/lutra-ctld")" ||
  fail "lutra-ctld.service is Type=notify but lutra-ctld does not call sd_notify"
ctld_check=$(unit_command lutra-ctld.service ExecStartPre | to_test_config)
ctld_command=$(unit_command lutra-ctld.service ExecStart | to_test_config)
echo "$ctld_check"
checked=$(eval "$ctld_check") || fail "ExecStartPre (--check-config) refused the installed config"
echo "$checked"
# The shipped config names no node: each node is its host name.
grep -qF "(node $(uname -n | cut -d. -f1)," <<<"$checked" ||
  fail "the installed ctld.yaml does not default the node name to the host name"
echo "$ctld_command"
eval "exec $ctld_command" >"$work/ctld.out" 2>"$work/ctld.out.err" &
pids+=($!)
ctld_pid=${pids[-1]}
wait_line "$work/ctld.out" "ready" "$ctld_pid"

step "lutractl get_param through lutra-ctld"
lutractl=("$root/usr/bin/lutractl" --socket "$run/ctld.sock")
for _ in $(seq 1 100); do
  grep -q 'target-ost0.*connected' <<<"$("${lutractl[@]}" instances 2>/dev/null)" && break
  sleep 0.1
done
"${lutractl[@]}" instances
value=$("${lutractl[@]}" get_param obdfilter.ost0.brw_size) ||
  fail "lutractl get_param obdfilter.ost0.brw_size"
echo "$value"
# The option from ost0.conf (--brw-size 8) reached the target: 8 MiB.
grep -qE '^obdfilter\.ost0\.brw_size=(8|8388608|8M)$' <<<"$value" ||
  fail "expected obdfilter.ost0.brw_size=8 (from ost0.conf), got '$value'"

step "a program built against the installed client library (pkg-config lutra-client)"
client_flags=$(PKG_CONFIG_SYSROOT_DIR=$root PKG_CONFIG_LIBDIR=$root/$libdir/pkgconfig \
  pkg-config --cflags --libs lutra-client) || fail "pkg-config lutra-client"
echo "c++ client_program.cpp $client_flags"
# shellcheck disable=SC2086 # the flags are words
c++ -O1 -Wall -Werror -o "$work/client_program" "$src/tests/packaging/client_program.cpp" $client_flags ||
  fail "building a program against the installed client library"
# Outside the prefix, a program names the plugin directory.
LUTRA_PLUGIN_PATH=$root/$libdir/lutra/plugins "$work/client_program" "$target_uri" ||
  fail "the client program could not write and read back a file on ost0"

step "bash completion for lutractl"
complete_line() { # line -> the candidates bash would offer
  bash -c 'source "$1"; COMP_LINE=$2; COMP_POINT=${#2}; _lutractl
           printf "%s\n" "${COMPREPLY[@]}"' \
    _ "$root/usr/share/bash-completion/completions/lutractl" "$1"
}
lutractl_path=$root/usr/bin/lutractl
[[ $(complete_line "$lutractl_path get_p") == get_param ]] || fail "completing a command"
grep -qx -- --job <<<"$(complete_line "$lutractl_path flush --")" ||
  fail "completing flush's options"
names=$(complete_line "$lutractl_path --socket $run/ctld.sock get_param obdfilter.ost0.b")
echo "get_param obdfilter.ost0.b<TAB>: $names"
grep -qx obdfilter.ost0.brw_size <<<"$names" || fail "completing parameter names from list_param"
names=$(complete_line "$lutractl_path --socket $run/ctld.sock set_param obdfilter.ost0.brw")
grep -qx obdfilter.ost0.brw_size= <<<"$names" || fail "completing set_param names with '='"

step "stop with SIGTERM (the units' KillSignal)"
for name in lutra-ctld:$ctld_pid lutra-target:$target_pid; do
  kill -TERM "${name#*:}"
  status=0
  wait "${name#*:}" || status=$?
  if ((status != 0)); then
    cat "$work/ctld.out.err" "$work/target.out.err"
    fail "${name%:*} exited $status on SIGTERM"
  fi
  echo "${name%:*} stopped (exit 0)"
done

step "done"
echo "packaging test: build ${build_seconds} s (with the lock), checks" \
  "$((SECONDS - checks_started)) s, total $((SECONDS - started)) s"
