#!/bin/bash
# Session 40, run 5: L2 cache policies on the lines the two B=1 passes share (s40-l2-hints.patch, -DGDN_LAB_HN:
# 1 the prep's k, q rows evict-first, 2 evict-last; 4 the state pass's k, q tiles evict-first, 12 also its T, P,
# scalars). Hints only: results correct. Built with lab_build.sh hnN s40-l2-hints.patch -DGDN_LAB_HN=N, packed in
# .cubin/hn.txz; pw0 (run 1's, main's code) the base. Also s40-state-pass-l2-prefetch.patch (-DGDN_LAB_PF: the state
# pass's producer prefetches chunk c + 1's (pf1) or c + 2's (pf2) k, q, v tiles into L2 by their tensor maps).
set -u
L=/tmp/L; mkdir -p "$L"; tar -C "$L" -xJf .cubin/hn.txz; tar -C "$L" -xJf .cubin/pw.txz pw0/bench_cuda pw2/bench_cuda
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw --format=csv
med() { grep -oE "median +[0-9]+\.[0-9]+" | grep -oE "[0-9.]+$"; }
echo "== test_cuda rs: hn12, hn2, pf1, pf2"
for l in hn12 hn2 pf1 pf2; do echo "$l: $(timeout 120 "$L/$l/test_cuda" rs 2>&1 | tail -n 1)"; done
echo "== bench_cuda --one B T --chunked: pw0 hn1 hn2 hn4 hn12 pf1 pf2 pw2, three rounds"
for BT in "1 2048" "1 4096" "1 32768" "8 4096"; do
  r=""; for x in 1 2 3; do for l in pw0 hn1 hn2 hn4 hn12 pf1 pf2 pw2; do
    r="$r $(timeout 60 "$L/$l/bench_cuda" --one $BT --chunked 2>&1 | med)"; done; r="$r |"; done
  echo "B T=$BT: $r"; done
nvidia-smi --query-gpu=clocks.sm,power.draw --format=csv
