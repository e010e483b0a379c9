#!/bin/bash
# for session 38 (written in session 37, not run): decode at small and mid batch with one tile per CTA against the
# launcher's choice. Session 37's occupancy lab ran decode B=8 at J=1 in 9.51 us against main's 9.78 (J=2), but at
# 6 CTAs per SM (s37-decode-occupancy.patch); this asks whether main's own J=1 form gives it (then the launcher's
# J rule for decode should change below some batch). Carry build/gdn.
set -u
G=build/gdn
f() { grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2; }
one() { local l=$1; shift; local j; j=$(timeout 60 env "$@" 2>>$OUT/stderr.txt); echo "$j" >> $OUT/json.txt
  printf '%-28s %9s us  %%BW %6s ok %s\n' "$l" "$(echo "$j" | f median_us)" "$(echo "$j" | f pct_mem_bw)" "$(echo "$j" | f ok)"; }
for r in 1 2; do
  for B in 2 4 6 8 12 16 24 32 48 64; do
    one "B=$B default r$r" X=0 $G bench --backend cuda --json --B $B --T 1
    one "B=$B J=1 r$r" GDN_CUDA_FAST_J=1 $G bench --backend cuda --json --B $B --T 1
    one "B=$B LPR=8 J=1 r$r" GDN_CUDA_FAST_J=1 GDN_CUDA_FAST_LPR=8 $G bench --backend cuda --json --B $B --T 1
  done
done
