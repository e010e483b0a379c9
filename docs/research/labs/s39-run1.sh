#!/bin/bash
# Session 39, run 1: s38-first-round-all-sms.patch (built from the patched tree) against itself with
# GDN_CUDA_PREP_FR=0 and main's kernels (m38); tests rs both ways; quick and the sanitizers last.
set -u
L=/tmp/L; mkdir -p $L; tar -C $L -xJf .cubin/m38.txz
f() { grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv | tail -1
echo "== fr test_cuda rs"; timeout 200 build/tests/test_cuda rs > $OUT/fr_rs.log 2>&1; echo rc=$?; grep -E "FAIL|^PASS|overlapped|first round" $OUT/fr_rs.log | tail -5
echo "== fr test_cuda rs, GDN_CUDA_PREP_FR=0"; GDN_CUDA_PREP_FR=0 timeout 200 build/tests/test_cuda rs > $OUT/fr0_rs.log 2>&1; echo rc=$?; grep -E "FAIL|^PASS|first round" $OUT/fr0_rs.log | tail -3
one() { local l=$1; shift; local j; j=$(timeout 90 env "$@" --backend cuda --json 2>>$OUT/stderr.txt); echo "$j" >> $OUT/json.txt
  printf '%-34s %9s us  err %s ok %s\n' "$l" "$(echo "$j" | f median_us)" "$(echo "$j" | f rel_err)" "$(echo "$j" | f ok)"; }
S=$SECONDS
for r in 1 2 3; do
  for T in 512 2048 4096 32768; do
    one "fr B=1 T=$T r$r" X=1 build/gdn bench --algo chunked --B 1 --T $T
    one "fr off B=1 T=$T r$r" GDN_CUDA_PREP_FR=0 build/gdn bench --algo chunked --B 1 --T $T
  done
  for T in 4096 32768; do
    one "m38 B=1 T=$T r$r" X=1 $L/m38/gdn bench --algo chunked --B 1 --T $T
    one "fr B=1 T=$T bf16 r$r" X=1 build/gdn bench --algo chunked --B 1 --T $T --precision bf16
    one "fr off B=1 T=$T bf16 r$r" GDN_CUDA_PREP_FR=0 build/gdn bench --algo chunked --B 1 --T $T --precision bf16
  done
  one "fr B=8 T=4096 r$r" X=1 build/gdn bench --algo chunked --B 8 --T 4096
  one "fr off B=8 T=4096 r$r" GDN_CUDA_PREP_FR=0 build/gdn bench --algo chunked --B 8 --T 4096
  echo "round $r at $((SECONDS-S)) s"
done
echo "== fr test_cuda quick"; timeout 150 build/tests/test_cuda quick > $OUT/fr_quick.log 2>&1; echo rc=$?; grep -E "FAIL|^PASS" $OUT/fr_quick.log | tail -3
echo "== fr memcheck rs"; timeout 90 compute-sanitizer --tool memcheck build/tests/test_cuda rs > $OUT/fr_mc.log 2>&1; echo rc=$?; grep -E "ERROR SUMMARY|^PASS|^FAIL" $OUT/fr_mc.log | tail -2
echo "== fr racecheck rs"; timeout 150 compute-sanitizer --tool racecheck build/tests/test_cuda rs > $OUT/fr_rc.log 2>&1; echo rc=$?; grep -E "RACECHECK SUMMARY|^PASS|^FAIL" $OUT/fr_rc.log | tail -2
