#!/bin/bash
# Session 32, run 3 (device; carry .cubin): nd = lso (the solve by ldmatrix) with the rows' sums of squares from the
# diagonal tiles (K K^T's own, Q Q^T's by the warps of fewest tiles) instead of the A fragments; nd2 = nd with the
# Q Q^T loop rolled (the 80-register kernels spill 8 bytes instead of 40); against lso and base. nd2's checks
# (rs, quick, memcheck rs, racecheck rs), then the times. Logs under $OUT.
# Builds (lab_build.sh, then packed: mkdir -p /tmp/pk/N && cp /tmp/labs/N/{gdn,bench_cuda,test_cuda} /tmp/pk/N/ &&
# tar -C /tmp/pk -cJf .cubin/N.txz N): base = b4dc48f's tree ("" ""); lso = c044ee7's tree (the merged solve);
# pub = b4dc48f + s32-prep-publish-gen-once.patch; ls2 = c044ee7 + that patch; ls2lf = ls2 + s31-state-pass-cf-and-
# fence.patch with -DGDN_LAB_LF=1; nd2 = c044ee7 + s32-prep-norms-from-diagonals.patch (nd: its Q Q^T loop unrolled 2).
set -u
L=/tmp/L; mkdir -p "$L"; for l in base lso nd nd2; do tar -C "$L" -xJf .cubin/$l.txz; done
echo "== nd2 test_cuda rs"; timeout 60 $L/nd2/test_cuda rs > "$OUT/nd2_rs.log" 2>&1; echo "rc=$?"
grep -E "FAIL|^PASS" "$OUT/nd2_rs.log" | tail -3; grep "T=4096" "$OUT/nd2_rs.log" | head -6
echo "== bench_cuda --one B T --chunked: base lso nd nd2, two rounds"
for c in "1 512" "1 4096" "1 32768" "64 4096"; do set -- $c
  r=""; for l in base lso nd nd2 base lso nd nd2; do
    r="$r $(timeout 60 "$L/$l/bench_cuda" --one $1 $2 --chunked 2>&1 | grep -oE "median +[0-9]+\.[0-9]+" | grep -oE "[0-9.]+$")"; done
  echo "B=$1 T=$2: $r"; done
echo "== gdn bench: base / lso / nd / nd2 (median, rel_err)"
for c in "1 512" "1 4096" "1 32768" "64 4096"; do
  r=""; for l in base lso nd nd2; do set -- $c
    r="$r | $(timeout 60 "$L/$l/gdn" bench --backend cuda --algo chunked --B $1 --T $2 2>&1 | awk '/^prefill/ {print $4, $10}')"; done
  echo "$c: $r"; done
echo "== nd2 quick"; timeout 130 $L/nd2/test_cuda quick > "$OUT/nd2_quick.log" 2>&1; echo "rc=$?"
grep -E "FAIL|^PASS" "$OUT/nd2_quick.log" | tail -3
echo "== nd2 memcheck rs"; timeout 60 compute-sanitizer --tool memcheck $L/nd2/test_cuda rs > "$OUT/nd2_mc.log" 2>&1
echo "rc=$?"; grep -E "ERROR SUMMARY|^PASS" "$OUT/nd2_mc.log" | tail -2
echo "== nd2 racecheck rs"; timeout 110 compute-sanitizer --tool racecheck $L/nd2/test_cuda rs > "$OUT/nd2_rc.log" 2>&1
echo "rc=$?"; grep -E "RACECHECK SUMMARY|^PASS" "$OUT/nd2_rc.log" | tail -2
