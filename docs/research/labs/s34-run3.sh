#!/bin/bash
# Session 34 (device; carry .cubin): the per-item prep at two CTAs per SM (p2 = lab_build.sh p2 "" -DSP_PER_SM=2:
# 116 registers, no spills) against base at the calls that run it in one wave.
set -u
L=/tmp/L; mkdir -p $L; for l in base p2; do tar -C $L -xJf .cubin/$l.txz; done
b() { timeout 60 $L/$1/gdn bench --backend cuda --algo chunked --B $2 --T $3 2>&1 | awk '/^prefill/ {print $4, $10}'; }
for c in "1 256" "1 512" "1 1024" "2 512" "4 512"; do set -- $c
  echo "gdn bench B=$1 T=$2: base $(b base $1 $2) | p2 $(b p2 $1 $2) | base $(b base $1 $2) | p2 $(b p2 $1 $2)"; done
for c in "1 256" "1 512" "1 1024" "2 512" "4 512"; do set -- $c
  r=""; for l in base p2 base p2; do r="$r $(timeout 60 $L/$l/bench_cuda --one $1 $2 --chunked 2>&1 | grep -oE "median +[0-9]+\.[0-9]+" | grep -oE "[0-9.]+$")"; done
  echo "bench_cuda B=$1 T=$2 (base p2 base p2): $r"; done
for l in base p2; do for T in 256 512; do echo "== ncu $l T=$T"
 ncu --clock-control none --cache-control none --metrics gpu__time_duration.sum -k regex:chunk_split $L/$l/gdn bench --backend cuda --algo chunked --B 1 --T $T --reps 3 2>&1 | grep -E "duration" | sed 's/  */ /g' | tail -4
done; done
echo "== p2 test_cuda rs"; timeout 100 $L/p2/test_cuda rs > $OUT/p2_rs.log 2>&1; echo rc=$?; grep -E "FAIL|^PASS" $OUT/p2_rs.log | tail -3
