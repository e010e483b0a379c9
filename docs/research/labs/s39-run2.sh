#!/bin/bash
# Session 39, run 2: the first round as its own launch (s39-first-round-launch.patch, built from the patched tree:
# build/gdn, build/tests/test_cuda) against itself with GDN_CUDA_PREP_FR=0 and main (m39 = d1a426a's build/gdn);
# the bf16 precision mode of main against m38 (b2b32c2's kernels, before the review's bt load change).
set -u
L=/tmp/L; mkdir -p $L; tar -C $L -xJf .cubin/m38.txz; tar -C $L -xJf .cubin/m39.txz
f() { grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv | tail -1
echo "== fr2 test_cuda rs"; timeout 200 build/tests/test_cuda rs > $OUT/fr2_rs.log 2>&1; echo rc=$?; grep -E "FAIL|^PASS|overlapped|first round" $OUT/fr2_rs.log | tail -5
echo "== fr2 test_cuda rs, GDN_CUDA_PREP_FR=0"; GDN_CUDA_PREP_FR=0 timeout 200 build/tests/test_cuda rs > $OUT/fr20_rs.log 2>&1; echo rc=$?; grep -E "FAIL|^PASS|first round" $OUT/fr20_rs.log | tail -3
one() { local l=$1; shift; local j; j=$(timeout 90 env "$@" --backend cuda --json 2>>$OUT/stderr.txt); echo "$j" >> $OUT/json.txt
  printf '%-34s %9s us  err %s ok %s\n' "$l" "$(echo "$j" | f median_us)" "$(echo "$j" | f rel_err)" "$(echo "$j" | f ok)"; }
S=$SECONDS
for r in 1 2 3; do
  for T in 2048 4096 32768; do
    one "fr2 B=1 T=$T r$r" X=1 build/gdn bench --algo chunked --B 1 --T $T
    one "fr2 off B=1 T=$T r$r" GDN_CUDA_PREP_FR=0 build/gdn bench --algo chunked --B 1 --T $T
    one "m39 B=1 T=$T r$r" X=1 $L/m39/gdn bench --algo chunked --B 1 --T $T
  done
  for T in 4096 32768; do
    one "fr2 B=1 T=$T bf16 r$r" X=1 build/gdn bench --algo chunked --B 1 --T $T --precision bf16
    one "m39 B=1 T=$T bf16 r$r" X=1 $L/m39/gdn bench --algo chunked --B 1 --T $T --precision bf16
    one "m38 B=1 T=$T bf16 r$r" X=1 $L/m38/gdn bench --algo chunked --B 1 --T $T --precision bf16
  done
  one "fr2 B=8 T=4096 r$r" X=1 build/gdn bench --algo chunked --B 8 --T 4096
  echo "round $r at $((SECONDS-S)) s"
done
echo "== fr2 test_cuda quick"; timeout 150 build/tests/test_cuda quick > $OUT/fr2_quick.log 2>&1; echo rc=$?; grep -E "FAIL|^PASS" $OUT/fr2_quick.log | tail -3
echo "== fr2 memcheck rs"; timeout 90 compute-sanitizer --tool memcheck build/tests/test_cuda rs > $OUT/fr2_mc.log 2>&1; echo rc=$?; grep -E "ERROR SUMMARY|^PASS|^FAIL" $OUT/fr2_mc.log | tail -2
echo "== fr2 racecheck rs"; timeout 150 compute-sanitizer --tool racecheck build/tests/test_cuda rs > $OUT/fr2_rc.log 2>&1; echo rc=$?; grep -E "RACECHECK SUMMARY|^PASS|^FAIL" $OUT/fr2_rc.log | tail -2
