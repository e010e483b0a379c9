#!/bin/bash
# Session 39, run 6: the overlap rule with the per-item prep's one wave (main + chunked_split.cuh's change, build/gdn
# and build/tests/test_cuda) against main (m39): tests, and B=1 around the new threshold, two rounds.
set -u
L=/tmp/L; mkdir -p $L; tar -C $L -xJf .cubin/m39.txz
f() { grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2; }
echo "== test_cuda rs"; timeout 200 build/tests/test_cuda rs > $OUT/rs.log 2>&1; echo rc=$?; grep -E "FAIL|^PASS|overlapped" $OUT/rs.log | tail -4
echo "== test_cuda rs, GDN_CUDA_PREP_OVERLAP=2"; GDN_CUDA_PREP_OVERLAP=2 timeout 200 build/tests/test_cuda rs > $OUT/rs2.log 2>&1; echo rc=$?; grep -E "FAIL|^PASS|overlapped" $OUT/rs2.log | tail -3
one() { local l=$1; shift; local j; j=$(timeout 90 env "$@" --backend cuda --json 2>>$OUT/stderr.txt); echo "$j" >> $OUT/json.txt
  printf '%-36s %9s us  err %s ok %s\n' "$l" "$(echo "$j" | f median_us)" "$(echo "$j" | f rel_err)" "$(echo "$j" | f ok)"; }
for r in 1 2; do
  for T in 1088 1280 1536 1600 2048 4096; do
    one "new B=1 T=$T r$r" X=1 build/gdn bench --algo chunked --B 1 --T $T
    one "m39 B=1 T=$T r$r" X=1 $L/m39/gdn bench --algo chunked --B 1 --T $T
  done
done
echo "== test_cuda quick"; timeout 150 build/tests/test_cuda quick > $OUT/quick.log 2>&1; echo rc=$?; grep -E "FAIL|^PASS" $OUT/quick.log | tail -3
