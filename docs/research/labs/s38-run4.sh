#!/bin/bash
# Session 38, run 4 (device; carry .cubin with m38, sp, ei, spei .txz from lab_build.sh):
#   m38  = main at b2b32c2 (diag(b) in the prep's tf32 T; decode J=1 at 16 lanes);
#   sp   = s38-scalars-permuted.patch: the prep writes a chunk's per-token scalars (sk, bt, sq, cf) for the
#          register-sourced pass in the order 16 t4 + 2 j + e, so that a lane's 16 values of a row are four 16-byte
#          loads (cf by float4 where it is used; sk, sq, bt by float2 at the new offsets);
#   ei   = s38-early-inputs.patch: the producer issues a buffer's first fill's k, q, v before the prep item's flag;
#   spei = both.
# spei: test_cuda rs, quick, memcheck rs, racecheck rs; sp, ei: rs; then the chunked rows, three rounds, and
# main's decode and verify rows (m38's gdn), two rounds.
set -u
L=/tmp/L; mkdir -p $L; for l in m38 sp ei spei; do tar -C $L -xJf .cubin/$l.txz; done
f() { grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2; }
for l in sp ei spei; do echo "== $l test_cuda rs"; timeout 200 $L/$l/test_cuda rs > $OUT/${l}_rs.log 2>&1; echo rc=$?; grep -E "FAIL|^PASS" $OUT/${l}_rs.log | tail -3; done
grep "rel RMS" $OUT/spei_rs.log
one() { local l=$1; local g=$2; shift 2; local j; j=$(timeout 90 $g bench --backend cuda --json "$@" 2>>$OUT/stderr.txt); echo "$j" >> $OUT/json.txt
  printf '%-34s %9s us  %%BW %7s err %s ok %s\n' "$l" "$(echo "$j" | f median_us)" "$(echo "$j" | f pct_mem_bw)" "$(echo "$j" | f rel_err)" "$(echo "$j" | f ok)"; }
for r in 1 2 3; do
  for c in "1 512" "1 4096" "1 32768" "8 4096" "64 4096"; do set -- $c
    for l in m38 sp ei spei; do one "$l B=$1 T=$2 r$r" $L/$l/gdn --algo chunked --B $1 --T $2; done
  done
done
for r in 1 2; do
  for B in 1 8 64 256; do one "decode B=$B r$r" $L/m38/gdn --B $B --T 1; done
  for B in 1 64; do one "verify T=4 B=$B r$r" $L/m38/gdn --B $B --T 4; done
  one "verify T=4 B=64 capture r$r" $L/m38/gdn --B 64 --T 4 --capture
  for T in 4096 32768; do one "m38 B=1 T=$T bf16 r$r" $L/m38/gdn --algo chunked --B 1 --T $T --precision bf16; done
done
echo "== spei test_cuda quick"; timeout 200 $L/spei/test_cuda quick > $OUT/spei_quick.log 2>&1; echo rc=$?; grep -E "FAIL|^PASS" $OUT/spei_quick.log | tail -3
echo "== spei memcheck rs"; timeout 90 compute-sanitizer --tool memcheck $L/spei/test_cuda rs > $OUT/spei_mc.log 2>&1; echo rc=$?; grep -E "ERROR SUMMARY|^PASS|^FAIL" $OUT/spei_mc.log | tail -2
echo "== spei racecheck rs"; timeout 150 compute-sanitizer --tool racecheck $L/spei/test_cuda rs > $OUT/spei_rc.log 2>&1; echo rc=$?; grep -E "RACECHECK SUMMARY|^PASS|^FAIL" $OUT/spei_rc.log | tail -2
