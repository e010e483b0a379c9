#!/bin/bash
# Session 45 run 5: s45-pairs-ring.patch (rg: two tiles in flight per pairs CTA through a shared-memory ring) against
# main (m48) in gdn bench, verify at every batch the pairs kernel takes, two rounds; rg's tests (rs; quick with the
# pairs kernel forced on every multi-token call, and on its persistent grid); rgtl (the ring with the timeline
# patch) at verify T=4 B=64 and 16, for s45-timeline.py. Carry .cubin (m48, rg, rgtl .txz).
set -u
L=/tmp/L; mkdir -p $L; for x in m48 rg rgtl; do tar -C $L -xJf .cubin/$x.txz; done
f() { grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2; }
row() { local r="" x l j; for x in 1 2; do for l in m48 rg; do
    j=$(timeout 60 $L/$l/gdn bench --backend cuda --json --B $1 --T $2 2>&1)
    r="$r $(echo "$j" | f median_us)"; [ "$(echo "$j" | f ok)" = "true" ] || r="$r(NOT OK)"; done; r="$r |"; done
  echo "gdn bench B=$1 T=$2 (m48 rg): $r"; }
(nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
row 64 4; row 12 4; row 16 4; row 32 4; row 128 4; row 256 4; row 64 2; row 64 8; row 256 8
export GDN_CUDA_FAST_J=2; echo "GDN_CUDA_FAST_J=2:"; row 64 4; unset GDN_CUDA_FAST_J
for c in "64 4" "16 4"; do set -- $c
  echo "== rgtl --one $1 $2: $(GDN_LAB_TL_FILE=$OUT/rgtl_$1_$2.bin timeout 60 $L/rgtl/bench_cuda --one $1 $2 2>&1 | tail -n 1)"; done
echo "== rg rs: $(timeout 200 $L/rg/test_cuda rs 2>&1 | tail -n 1)"
echo "== rg quick, pairs forced: $(GDN_CUDA_FAST_LPR=2 timeout 250 $L/rg/test_cuda quick 2>&1 | tail -n 1)"
echo "== rg quick, persistent: $(GDN_CUDA_FAST_LPR=3 timeout 250 $L/rg/test_cuda quick 2>&1 | tail -n 1)"
) 2>&1 | tee $OUT/run5.log
