#!/bin/bash
# Written in session 47 for the next session (built, not run): tl3 = s47-pairs-range-timeline.patch with
# -DGDN_LAB_TL=1 on c07ce3e: where a pairs CTA's time goes, item by item, on each grid (GDN_CUDA_FAST_LPR 5 = one
# item per CTA, 3 = persistent, 4 = ranges) at verify T=4 B=64 (ranges 4.6 us slower than one item per CTA there)
# and T=8 B=64 (ranges 3.2 us faster). bench_cuda --one B T; the last call's stamps; s47-timeline3.py prints the
# medians, the CTAs' ends and per 1 us the CTAs in their tiles and in setup, and the state traffic. Carry .cubin (tl3.txz).
set -u
L=/tmp/L; mkdir -p $L; tar -C $L -xJf .cubin/tl3.txz
(nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
for c in "64 4" "64 8"; do set -- $c; for g in 5 3 4; do
  echo "== tl3 --one $1 $2, GDN_CUDA_FAST_LPR=$g: $(GDN_CUDA_FAST_LPR=$g GDN_LAB_TL_FILE=$OUT/a_$1_$2_$g.bin \
    GDN_LAB_TL2_FILE=$OUT/b_$1_$2_$g.bin timeout 60 $L/tl3/bench_cuda --one $1 $2 2>&1 | tail -n 1)"
  python3 docs/research/labs/s47-timeline3.py $OUT/a_$1_$2_$g.bin $OUT/b_$1_$2_$g.bin > $OUT/tl_$1_$2_$g.txt 2>&1
  head -n 3 $OUT/tl_$1_$2_$g.txt; done; done
) 2>&1 | tee $OUT/timeline.log
