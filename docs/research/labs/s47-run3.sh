#!/bin/bash
# Session 47 run 3: verify above T=4, where run 2 found the persistent grids faster at B=64 T=8: m57 = main (0040245),
# one item per CTA with its drain rule; m57 with GDN_CUDA_FAST_LPR=3 (its persistent grid: CTA b items b + k G);
# rg = s47-pairs-range.patch with -DGDN_LAB_RANGE (contiguous tile ranges). gdn bench, two rounds. Carry .cubin.
set -u
L=/tmp/L; mkdir -p $L; for x in m57 rg; do tar -C $L -xJf .cubin/$x.txz; done
f() { grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2; }
one() { local b=$1 B=$2 T=$3 j; shift 3; j=$(env "$@" timeout 60 $L/$b/gdn bench --backend cuda --json --B $B --T $T 2>&1)
  echo -n " $(echo "$j" | f median_us)"; [ "$(echo "$j" | f ok)" = "true" ] || echo -n "(NOT OK)"; }
row() { local B=$1 T=$2 x; echo -n "B=$B T=$T (m57 | m57 LPR=3 | rg):"
  for x in 1 2; do one m57 $B $T X=0; one m57 $B $T GDN_CUDA_FAST_LPR=3; one rg $B $T X=0; echo -n " |"; done; echo; }
(nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
for B in 64 128 256 32 16; do row $B 8; done
for B in 64 128 256 32; do row $B 6; done
for T in 5 7 2; do row 64 $T; row 256 $T; done
) 2>&1 | tee $OUT/run3.log
