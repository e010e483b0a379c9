#!/bin/bash
# For session 39 (written in session 38, not run): the overlapped prep's first round on every SM
# (s38-first-round-all-sms.patch, on by default in its build, GDN_CUDA_PREP_FR=0 turns it off in the same binary).
# The fill before the state pass's first chunk is one prep item's latency (about 13.8 us at B=1: rows, products, two
# value heads, the publish; PERF.md session 33), while the 64 SMs the state pass will take sit idle. With the patch the
# prep grid is one CTA per SM; the first round makes the first fr_k chunks' items one per value head (about 9.3 us,
# session 27's phases without the second head), the 64 CTAs past fr_keep take the first of them and leave, and the
# state CTAs start on their SMs; the 68 others go on per key head as before. Predicted: about 3-4 us off every
# overlapped B=1 call (T=4096 106 -> 102-103, T=32768 707 -> 703-704; bf16 702 -> 698-699). Carry build/gdn and
# build/tests/test_cuda built from the patched tree, and .cubin/m38.txz (main's kernels, lab_build.sh m38 "" "").
set -u
L=/tmp/L; mkdir -p $L; tar -C $L -xJf .cubin/m38.txz
f() { grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2; }
echo "== fr test_cuda rs"; timeout 200 build/tests/test_cuda rs > $OUT/fr_rs.log 2>&1; echo rc=$?; grep -E "FAIL|^PASS|overlapped|first round" $OUT/fr_rs.log | tail -5
echo "== fr test_cuda rs, GDN_CUDA_PREP_FR=0"; GDN_CUDA_PREP_FR=0 timeout 200 build/tests/test_cuda rs > $OUT/fr0_rs.log 2>&1; echo rc=$?; grep -E "FAIL|^PASS|first round" $OUT/fr0_rs.log | tail -3
echo "== fr test_cuda quick"; timeout 200 build/tests/test_cuda quick > $OUT/fr_quick.log 2>&1; echo rc=$?; grep -E "FAIL|^PASS" $OUT/fr_quick.log | tail -3
one() { local l=$1; shift; local j; j=$(timeout 90 env "$@" --backend cuda --json 2>>$OUT/stderr.txt); echo "$j" >> $OUT/json.txt
  printf '%-34s %9s us  err %s ok %s\n' "$l" "$(echo "$j" | f median_us)" "$(echo "$j" | f rel_err)" "$(echo "$j" | f ok)"; }
for r in 1 2 3; do
  for T in 1024 2048 4096 8192 32768; do
    one "fr B=1 T=$T r$r" X=1 build/gdn bench --algo chunked --B 1 --T $T
    one "fr off B=1 T=$T r$r" GDN_CUDA_PREP_FR=0 build/gdn bench --algo chunked --B 1 --T $T
    one "m38 B=1 T=$T r$r" X=1 $L/m38/gdn bench --algo chunked --B 1 --T $T
  done
  for T in 4096 32768; do
    one "fr B=1 T=$T bf16 r$r" X=1 build/gdn bench --algo chunked --B 1 --T $T --precision bf16
    one "m38 B=1 T=$T bf16 r$r" X=1 $L/m38/gdn bench --algo chunked --B 1 --T $T --precision bf16
  done
done
echo "== fr memcheck rs"; timeout 90 compute-sanitizer --tool memcheck build/tests/test_cuda rs > $OUT/fr_mc.log 2>&1; echo rc=$?; grep -E "ERROR SUMMARY|^PASS|^FAIL" $OUT/fr_mc.log | tail -2
echo "== fr racecheck rs"; timeout 150 compute-sanitizer --tool racecheck build/tests/test_cuda rs > $OUT/fr_rc.log 2>&1; echo rc=$?; grep -E "RACECHECK SUMMARY|^PASS|^FAIL" $OUT/fr_rc.log | tail -2
