#!/bin/bash
# Session 47 run 6: pf1 / pf2 = s47-pairs-item-l2.patch with -DGDN_LAB_PF=1 / 2 on c07ce3e (m58's tree): on the
# persistent and range grids each later item's tile 0 into L2 at the item's start (1) or the next item's (2), against
# m58. pf1 rs with every pairs call on ranges; gdn bench by grid (GDN_CUDA_FAST_LPR 0 = the rule, 3, 4), two rounds.
# Carry .cubin (m58.txz, pf1.txz, pf2.txz).
set -u
L=/tmp/L; mkdir -p $L; for x in m58 pf1 pf2; do tar -C $L -xJf .cubin/$x.txz; done
f() { grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2; }
one() { local b=$1 B=$2 T=$3 j; shift 3; j=$(env "$@" timeout 60 $L/$b/gdn bench --backend cuda --json --B $B --T $T 2>&1)
  echo -n " $(echo "$j" | f median_us)"; [ "$(echo "$j" | f ok)" = "true" ] || echo -n "(NOT OK)"; }
row() { local B=$1 T=$2 x k b; shift 2; echo -n "B=$B T=$T (m58 pf1 pf2 at LPR = $*):"
  for x in 1 2; do for k in "$@"; do for b in m58 pf1 pf2; do one $b $B $T GDN_CUDA_FAST_LPR=$k; done; done; echo -n " |"; done; echo; }
(nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
echo "== pf1 rs LPR=4: $(GDN_CUDA_FAST_LPR=4 timeout 120 $L/pf1/test_cuda rs 2>&1 | tail -n 1)"
echo "== pf2 rs LPR=4: $(GDN_CUDA_FAST_LPR=4 timeout 120 $L/pf2/test_cuda rs 2>&1 | tail -n 1)"
row 64 4 3 4; row 64 8 0; row 256 8 0
echo -n "m58 B=64 T=4 rule:"; one m58 64 4 X=0; one m58 64 4 X=0; echo
) 2>&1 | tee $OUT/run6.log
