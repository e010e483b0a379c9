#!/bin/bash
# Session 39, run 7: session 35's early launch of the state pass in stream order (s35-split-early.patch) at one
# sequence only (the launcher turns it off for N > 1), against the same binary with GDN_CUDA_SPLIT_EARLY=0, two rounds.
set -u
f() { grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2; }
echo "== test_cuda rs"; timeout 100 build/tests/test_cuda rs > $OUT/rs.log 2>&1; echo rc=$?; grep -E "FAIL|^PASS|overlapped" $OUT/rs.log | tail -3
one() { local l=$1; shift; local j; j=$(timeout 60 env "$@" --backend cuda --json 2>>$OUT/stderr.txt); echo "$j" >> $OUT/json.txt
  printf '%-30s %9s us  err %s ok %s\n' "$l" "$(echo "$j" | f median_us)" "$(echo "$j" | f rel_err)" "$(echo "$j" | f ok)"; }
for r in 1 2; do
  for c in "1 256" "1 512" "1 768" "1 1024" "1 1280" "1 1536" "1 4096" "2 512"; do set -- $c
    one "early B=$1 T=$2 r$r" X=1 build/gdn bench --algo chunked --B $1 --T $2
    one "off B=$1 T=$2 r$r" GDN_CUDA_SPLIT_EARLY=0 build/gdn bench --algo chunked --B $1 --T $2
  done
done
echo "== test_cuda quick"; timeout 120 build/tests/test_cuda quick > $OUT/quick.log 2>&1; echo rc=$?; grep -E "FAIL|^PASS" $OUT/quick.log | tail -3
