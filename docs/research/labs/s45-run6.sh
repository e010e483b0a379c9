#!/bin/bash
# Session 45 run 6: the pairs kernel's phases, CTA by CTA (s45-fast-timeline2.patch: tl2), at verify T=4 B=64, 256 and
# 16, written under $OUT for s45-timeline2.py. Carry .cubin (tl2.txz).
set -u
L=/tmp/L; mkdir -p $L; tar -C $L -xJf .cubin/tl2.txz
(nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
for c in "64 4" "256 4" "16 4"; do set -- $c
  echo "== tl2 --one $1 $2: $(GDN_LAB_TL_FILE=$OUT/tl2a_$1_$2.bin GDN_LAB_TL2_FILE=$OUT/tl2b_$1_$2.bin timeout 60 $L/tl2/bench_cuda --one $1 $2 2>&1 | tail -n 1)"; done
) 2>&1 | tee $OUT/run6.log
