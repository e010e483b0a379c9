#!/usr/bin/env bash
# Installs the build into a temporary prefix, then builds a consumer twice: with CMake
# find_package(gdn) and with pkg-config. Usage: test_install.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1 build=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
cmake -S "$src/tests/consumer" -B "$tmp/cmake" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/cmake" >/dev/null
"$tmp/cmake/consumer"
libdir=$(ls -d "$tmp"/prefix/lib*/pkgconfig | head -n 1)
flags=$(PKG_CONFIG_PATH="$libdir" pkg-config --static --cflags --libs gdn)
cc -std=c11 "$src/tests/consumer/main.c" $flags -o "$tmp/pc_consumer"
"$tmp/pc_consumer"
