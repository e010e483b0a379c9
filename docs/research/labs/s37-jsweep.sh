#!/bin/bash
# session 37: the large-batch fast path's tiles per CTA (GDN_CUDA_FAST_J) and lanes per row (GDN_CUDA_FAST_LPR) again
# under gdn bench's new timing (graphs of >= 8 calls, back to back); carry build/gdn
set -u
G=build/gdn
f() { grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2; }
one() { local l=$1; shift; local j; j=$(timeout 60 env "$@" 2>>$OUT/stderr.txt); echo "$j" >> $OUT/json.txt
  printf '%-40s %9s us  %%BW %6s ok %s kernel %s\n' "$l" "$(echo "$j" | f median_us)" "$(echo "$j" | f pct_mem_bw)" "$(echo "$j" | f ok)" "$(echo "$j" | f kernel)"; }
for r in 1 2; do
  for c in "64 1" "256 1" "64 4" "128 1"; do set -- $c
    for e in "X=0" "GDN_CUDA_FAST_J=1" "GDN_CUDA_FAST_J=2" "GDN_CUDA_FAST_J=4" "GDN_CUDA_FAST_J=8" "GDN_CUDA_FAST_LPR=16" "GDN_CUDA_FAST_LPR=32" "GDN_CUDA_PDL=0"; do
      one "B=$1 T=$2 $e r$r" $e $G bench --backend cuda --json --B $1 --T $2
    done
  done
done
