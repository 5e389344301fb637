#!/usr/bin/env bash
# Builds lutra's Debian packages lutra-datapath, lutra-ctld and lutra-console with CPack.
#   packaging/build-packages.sh [BUILD_DIR]        (default: build/packages)
# An optimised, unsanitized build with Debian's hardening flags (dpkg-buildflags) and no tests,
# installed under /usr; cpack then writes the three .deb files into BUILD_DIR and this script
# prints their paths. Dependencies come from dpkg-shlibdeps; binaries are stripped.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src/build/packages}
cd "$src" # dpkg-buildflags maps this directory out of the binaries (-ffile-prefix-map)

# All of Debian's hardening (PIE, bindnow); no -g: cpack strips the binaries anyway.
export DEB_BUILD_MAINT_OPTIONS=hardening=+all DEB_CXXFLAGS_MAINT_STRIP=-g
cxxflags="$(dpkg-buildflags --get CPPFLAGS) $(dpkg-buildflags --get CXXFLAGS)"
ldflags=$(dpkg-buildflags --get LDFLAGS)
cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=None -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_INSTALL_PREFIX=/usr -DLUTRA_BUILD_TESTS=OFF -DLUTRA_SANITIZE=OFF -DLUTRA_BUILD_PACKAGES=ON \
  -DCMAKE_CXX_FLAGS="$cxxflags" -DCMAKE_EXE_LINKER_FLAGS="$ldflags" \
  -DCMAKE_SHARED_LINKER_FLAGS="$ldflags" -DCMAKE_MODULE_LINKER_FLAGS="$ldflags" >/dev/null
cmake --build "$build"
if [[ -f "$build/CPackConfig.cmake" ]]; then
  (cd "$build" && cpack -G DEB >/dev/null)
  ls "$build"/lutra-*.deb
fi
