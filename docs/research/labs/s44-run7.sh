#!/bin/bash
# Session 44, run 7: s44-pairs-all-tiles-keep.patch (pj1: with the evict-last prefetch, the pairs kernel's first item
# prefetches all its tiles) against main 1ef3619 (m47) at verify T=4, gdn bench, two rounds; pj1's test_cuda quick with
# the policy at every call. Carry .cubin (m47, pj1 .txz).
set -u
L=/tmp/L; mkdir -p $L; for x in m47 pj1; do tar -C $L -xJf .cubin/$x.txz; done
f() { grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2; }
row() { local r="" x l j; for x in 1 2; do for l in m47 pj1; do
    j=$(timeout 60 $L/$l/gdn bench --backend cuda --json --B $1 --T $2 2>&1)
    r="$r $(echo "$j" | f median_us)"; [ "$(echo "$j" | f ok)" = "true" ] || r="$r(NOT OK)"; done; r="$r |"; done
  echo "gdn bench B=$1 T=$2 (m47 pj1): $r"; }
(nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
row 64 4; row 256 4; row 32 4
echo "== pj1 quick, L2_KEEP=1: $(GDN_CUDA_L2_KEEP=1 timeout 150 $L/pj1/test_cuda quick 2>&1 | tail -n 1)"
) 2>&1 | tee $OUT/run7.log
