#!/bin/bash
# Session 45 run 3: s45-pairs-drain-prefetch.patch against main (m48) in gdn bench, verify at every batch the pairs
# kernel takes, two rounds: tp264 / tp528 = the grid's last 264 / 528 CTAs prefetch all their tiles into L2 before
# their wait; np4 / np2 = the grid's first 528 CTAs prefetch their first 4 / 2 tiles (while the previous call
# drains). test_cuda rs on tp528 and np4. Carry .cubin (m48, tp264, tp528, np4, np2 .txz).
set -u
L=/tmp/L; mkdir -p $L; for x in m48 tp264 tp528 np4 np2; do tar -C $L -xJf .cubin/$x.txz; done
f() { grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2; }
row() { local r="" x l j; for x in 1 2; do for l in m48 tp264 tp528 np4 np2; do
    j=$(timeout 60 $L/$l/gdn bench --backend cuda --json --B $1 --T $2 2>&1)
    r="$r $(echo "$j" | f median_us)"; [ "$(echo "$j" | f ok)" = "true" ] || r="$r(NOT OK)"; done; r="$r |"; done
  echo "gdn bench B=$1 T=$2 (m48 tp264 tp528 np4 np2): $r"; }
(nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
row 64 4; row 16 4; row 32 4; row 128 4; row 256 4; row 64 2; row 64 8; row 12 4
echo "== tp528 rs: $(timeout 200 $L/tp528/test_cuda rs 2>&1 | tail -n 1)"
echo "== np4 rs: $(timeout 200 $L/np4/test_cuda rs 2>&1 | tail -n 1)"
) 2>&1 | tee $OUT/run3.log
