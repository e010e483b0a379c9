#!/bin/bash
# session 37: decode (fast1_kernel) at 6 and 8 CTAs per SM (s37-decode-occupancy.patch, lab_build.sh m6 / m8 with
# -DGDN_LAB_FAST1_MINB=6 / 8, binaries in .cubin/m6, .cubin/m8) against main's gdn (build/gdn); carry build/gdn, .cubin
set -u
f() { grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2; }
one() { local l=$1; shift; local j; j=$(timeout 60 env "$@" 2>>$OUT/stderr.txt); echo "$j" >> $OUT/json.txt
  printf '%-30s %9s us  %%BW %6s ok %s\n' "$l" "$(echo "$j" | f median_us)" "$(echo "$j" | f pct_mem_bw)" "$(echo "$j" | f ok)"; }
for r in 1 2; do
  for B in 1 8 64 128 256; do
    one "B=$B base r$r" X=0 build/gdn bench --backend cuda --json --B $B --T 1
    for m in m6 m8; do one "B=$B $m r$r" X=0 .cubin/$m/gdn bench --backend cuda --json --B $B --T 1; done
    for m in m6 m8; do one "B=$B $m J=1 r$r" GDN_CUDA_FAST_J=1 .cubin/$m/gdn bench --backend cuda --json --B $B --T 1; done
  done
done
for m in m6 m8; do timeout 110 .cubin/$m/test_cuda quick > $OUT/test_$m.txt 2>&1; echo "$m test_cuda quick rc=$? $(tail -1 $OUT/test_$m.txt)"; done
