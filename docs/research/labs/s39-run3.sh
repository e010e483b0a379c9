#!/bin/bash
# Session 39, run 3: the first round as its own kernel instantiation (s39-first-round-kernel.patch: the persistent
# prep without the one-head path compiled in, so that its registers are main's), built from the patched tree
# (build/gdn, build/tests/test_cuda), against itself with GDN_CUDA_PREP_FR=0 and main (m39 = d1a426a's build/gdn).
set -u
L=/tmp/L; mkdir -p $L; tar -C $L -xJf .cubin/m39.txz
f() { grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv | tail -1
echo "== fr3 test_cuda rs"; timeout 200 build/tests/test_cuda rs > $OUT/fr3_rs.log 2>&1; echo rc=$?; grep -E "FAIL|^PASS|overlapped|first round" $OUT/fr3_rs.log | tail -5
echo "== fr3 test_cuda rs, GDN_CUDA_PREP_FR=0"; GDN_CUDA_PREP_FR=0 timeout 200 build/tests/test_cuda rs > $OUT/fr30_rs.log 2>&1; echo rc=$?; grep -E "FAIL|^PASS|first round" $OUT/fr30_rs.log | tail -3
one() { local l=$1; shift; local j; j=$(timeout 90 env "$@" --backend cuda --json 2>>$OUT/stderr.txt); echo "$j" >> $OUT/json.txt
  local m; m=$(echo "$j" | f median_us); echo "$l $m" >> $OUT/medians.txt
  printf '%-34s %9s us  err %s ok %s\n' "$l" "$m" "$(echo "$j" | f rel_err)" "$(echo "$j" | f ok)"; }
S=$SECONDS
for r in 1 2 3; do
  for T in 2048 4096 32768; do
    one "fr3 B=1 T=$T r$r" X=1 build/gdn bench --algo chunked --B 1 --T $T
    one "fr3off B=1 T=$T r$r" GDN_CUDA_PREP_FR=0 build/gdn bench --algo chunked --B 1 --T $T
    one "m39 B=1 T=$T r$r" X=1 $L/m39/gdn bench --algo chunked --B 1 --T $T
  done
  for T in 4096 32768; do
    one "fr3 B=1 T=$T bf16 r$r" X=1 build/gdn bench --algo chunked --B 1 --T $T --precision bf16
    one "m39 B=1 T=$T bf16 r$r" X=1 $L/m39/gdn bench --algo chunked --B 1 --T $T --precision bf16
  done
  echo "round $r at $((SECONDS-S)) s"
done
a=$(grep "^fr3 B=1 T=4096 r1 " $OUT/medians.txt | cut -d' ' -f5); b=$(grep "^m39 B=1 T=4096 r1 " $OUT/medians.txt | cut -d' ' -f5)
if awk "BEGIN{exit !($a < $b)}"; then
  echo "== fr3 test_cuda quick"; timeout 150 build/tests/test_cuda quick > $OUT/fr3_quick.log 2>&1; echo rc=$?; grep -E "FAIL|^PASS" $OUT/fr3_quick.log | tail -3
  echo "== fr3 memcheck rs"; timeout 90 compute-sanitizer --tool memcheck build/tests/test_cuda rs > $OUT/fr3_mc.log 2>&1; echo rc=$?; grep -E "ERROR SUMMARY|^PASS|^FAIL" $OUT/fr3_mc.log | tail -2
  echo "== fr3 racecheck rs"; timeout 150 compute-sanitizer --tool racecheck build/tests/test_cuda rs > $OUT/fr3_rc.log 2>&1; echo rc=$?; grep -E "RACECHECK SUMMARY|^PASS|^FAIL" $OUT/fr3_rc.log | tail -2
else echo "fr3 not faster at T=4096 ($a against $b): no sanitizer runs"; fi
