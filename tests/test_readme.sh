#!/usr/bin/env bash
# The README's C example must be tests/test_example.c verbatim (which CTest builds and runs).
# Usage: test_readme.sh SOURCE_DIR
set -euo pipefail
src=$1
block=$(awk '/^```c$/ {on=1; next} on && /^```$/ {exit} on {print}' "$src/README.md")
if ! diff <(printf '%s\n' "$block") "$src/tests/test_example.c" >/dev/null; then
  echo "README.md: the C example differs from tests/test_example.c:"
  diff <(printf '%s\n' "$block") "$src/tests/test_example.c" || true
  exit 1
fi
echo "README example == tests/test_example.c"
