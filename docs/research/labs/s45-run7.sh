#!/bin/bash
# Session 45 run 7: s45-pairs-inputs-l2.patch (the first 64 / 8 CTAs prefetch the call's inputs into L2, evict-last:
# ip64 / ip8) against main (m48) in gdn bench, verify at every batch the pairs kernel takes, two rounds; test_cuda rs
# on both. Carry .cubin (m48, ip64, ip8 .txz).
set -u
L=/tmp/L; mkdir -p $L; for x in m48 ip64 ip8; do tar -C $L -xJf .cubin/$x.txz; done
f() { grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2; }
row() { local r="" x l j; for x in 1 2; do for l in m48 ip64 ip8; do
    j=$(timeout 60 $L/$l/gdn bench --backend cuda --json --B $1 --T $2 2>&1)
    r="$r $(echo "$j" | f median_us)"; [ "$(echo "$j" | f ok)" = "true" ] || r="$r(NOT OK)"; done; r="$r |"; done
  echo "gdn bench B=$1 T=$2 (m48 ip64 ip8): $r"; }
(nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
row 64 4; row 12 4; row 16 4; row 32 4; row 128 4; row 256 4; row 64 2; row 64 8
echo "== ip64 rs: $(timeout 200 $L/ip64/test_cuda rs 2>&1 | tail -n 1)"
echo "== ip8 rs: $(timeout 200 $L/ip8/test_cuda rs 2>&1 | tail -n 1)"
) 2>&1 | tee $OUT/run7.log
