#!/bin/bash
# Session 45 run 2: per-CTA timelines of the fast path (s45-fast-timeline.patch: tl) at verify T=4 B=16, 64, 256 (also
# at GDN_CUDA_FAST_J=2) and decode B=64, written under $OUT for s45-timeline.py; s45-pairs-tile0-at-wait.patch (ea0)
# against main (m48) in gdn bench, two rounds; ea0's tests (rs, and quick on the persistent grid, where later items
# load their tile 0 in the loop). Carry .cubin (m48, tl, ea0 .txz).
set -u
L=/tmp/L; mkdir -p $L; for x in m48 tl ea0; do tar -C $L -xJf .cubin/$x.txz; done
f() { grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2; }
row() { local r="" x l j; for x in 1 2; do for l in m48 ea0; do
    j=$(timeout 60 $L/$l/gdn bench --backend cuda --json --B $1 --T $2 2>&1)
    r="$r $(echo "$j" | f median_us)"; [ "$(echo "$j" | f ok)" = "true" ] || r="$r(NOT OK)"; done; r="$r |"; done
  echo "gdn bench B=$1 T=$2 (m48 ea0): $r"; }
(nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
for c in "64 4" "64 1" "256 4" "16 4"; do set -- $c
  echo "== tl --one $1 $2: $(GDN_LAB_TL_FILE=$OUT/tl_$1_$2.bin timeout 60 $L/tl/bench_cuda --one $1 $2 2>&1 | tail -n 1)"; done
echo "== tl --one 64 4, J=2: $(GDN_CUDA_FAST_J=2 GDN_LAB_TL_FILE=$OUT/tl_64_4_j2.bin timeout 60 $L/tl/bench_cuda --one 64 4 2>&1 | tail -n 1)"
echo "== m48 --one 64 4: $(timeout 60 $L/m48/bench_cuda --one 64 4 2>&1 | tail -n 1)"
row 64 4; row 8 4; row 16 4; row 32 4; row 128 4; row 256 4; row 64 2; row 64 8
echo "== ea0 rs: $(timeout 200 $L/ea0/test_cuda rs 2>&1 | tail -n 1)"
echo "== ea0 quick, persistent grid: $(GDN_CUDA_FAST_LPR=3 timeout 250 $L/ea0/test_cuda quick 2>&1 | tail -n 1)"
) 2>&1 | tee $OUT/run2.log
