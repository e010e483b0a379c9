#!/bin/bash
# Written in session 44 for the next session (built, not run): s45-fast-store-hints.patch (sh1: the pairs kernel's state
# stores evict-first where the evict-last prefetch applies; sh3: and decode's; sh4: the prefetch's evict-last on half
# the lines) against main (m48 = d83cba9's build, kernels as 1ef3619) in gdn bench, decode and verify at large batch,
# two rounds; test_cuda quick on sh3 with the policy at every call. Carry .cubin (m48, sh1, sh3, sh4 .txz).
set -u
L=/tmp/L; mkdir -p $L; for x in m48 sh1 sh3 sh4; do tar -C $L -xJf .cubin/$x.txz; done
f() { grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2; }
row() { local r="" x l j; for x in 1 2; do for l in m48 sh1 sh3 sh4; do
    j=$(timeout 60 $L/$l/gdn bench --backend cuda --json --B $1 --T $2 2>&1)
    r="$r $(echo "$j" | f median_us) ($(echo "$j" | f pct_mem_bw))"; [ "$(echo "$j" | f ok)" = "true" ] || r="$r(NOT OK)"; done; r="$r |"; done
  echo "gdn bench B=$1 T=$2 (m48 sh1 sh3 sh4): $r"; }
(nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
row 64 4; row 256 4; row 64 1; row 256 1; row 32 1
echo "== sh3 quick, L2_KEEP=1: $(GDN_CUDA_L2_KEEP=1 timeout 200 $L/sh3/test_cuda quick 2>&1 | tail -n 1)"
) 2>&1 | tee $OUT/next2.log
