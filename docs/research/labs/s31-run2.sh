#!/bin/bash
# Session 31, second device command: the scaled state with the producer's flag wait first (sgf, the tree) and
# with a sixth warp doing the rescaling (sgw, -DGDN_LAB_SGW=1), against base (HEAD's kernels); all lab_build.sh.
# Run; results in docs/PERF.md, session 31.
# Pack as s31-run1.sh (base sgf sgw). Run (carry .cubin): bash docs/research/labs/s31-run2.sh
set -u
L=/tmp/L; mkdir -p "$L"; for l in base sgf sgw; do tar -C "$L" -xJf .cubin/$l.txz; done
for l in sgf sgw; do echo "== $l test_cuda rs"; timeout 60 $L/$l/test_cuda rs > "$OUT/${l}_rs.log" 2>&1; echo "rc=$?"
  grep -E "FAIL|^PASS" "$OUT/${l}_rs.log" | tail -3; done
echo "== bench_cuda --one B T --chunked: base sgf sgw, two rounds"
for c in "1 512" "1 4096" "1 32768" "2 4096"; do set -- $c
  r=""; for l in base sgf sgw base sgf sgw; do
    r="$r $(timeout 60 "$L/$l/bench_cuda" --one $1 $2 --chunked 2>&1 | grep -oE "median +[0-9]+\.[0-9]+" | grep -oE "[0-9.]+$")"; done
  echo "B=$1 T=$2: $r"; done
echo "== the same, GDN_CUDA_PREP_OVERLAP=0 (the state pass after the prep: its own rate)"
for c in "1 4096" "1 32768"; do set -- $c
  r=""; for l in base sgf sgw base sgf sgw; do
    r="$r $(GDN_CUDA_PREP_OVERLAP=0 timeout 60 "$L/$l/bench_cuda" --one $1 $2 --chunked 2>&1 | grep -oE "median +[0-9]+\.[0-9]+" | grep -oE "[0-9.]+$")"; done
  echo "B=$1 T=$2: $r"; done
echo "== gdn bench: base / sgf / sgw (median, rel_err)"
for c in "1 512" "1 4096" "1 32768"; do
  r=""; for l in base sgf sgw; do set -- $c
    r="$r | $(timeout 60 "$L/$l/gdn" bench --backend cuda --algo chunked --B $1 --T $2 2>&1 | awk '/^prefill/ {print $4, $10}')"; done
  echo "$c: $r"; done
for l in sgf sgw; do echo "== $l quick"; timeout 130 $L/$l/test_cuda quick > "$OUT/${l}_quick.log" 2>&1; echo "rc=$?"
  grep -E "FAIL|^PASS" "$OUT/${l}_quick.log" | tail -3; done
for l in sgf sgw; do echo "== $l memcheck rs"; timeout 60 compute-sanitizer --tool memcheck $L/$l/test_cuda rs > "$OUT/${l}_mc.log" 2>&1
  echo "rc=$?"; grep -E "ERROR SUMMARY|FAIL|^PASS" "$OUT/${l}_mc.log" | tail -2; done
echo "== sgw racecheck rs"; timeout 110 compute-sanitizer --tool racecheck $L/sgw/test_cuda rs > "$OUT/sgw_rc.log" 2>&1; echo "rc=$?"
grep -E "RACECHECK SUMMARY|FAIL|^PASS" "$OUT/sgw_rc.log" | tail -2
