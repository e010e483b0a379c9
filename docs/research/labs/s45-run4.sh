#!/bin/bash
# Session 45 run 4: s45-pairs-five-per-sm.patch, the pairs kernel compiled for 5 (o5: 96 registers, 128 bytes
# spilled) or 6 (o6) CTAs per SM, against main (m48) in gdn bench, verify at every batch the pairs kernel takes, two
# rounds; also at GDN_CUDA_FAST_J=2; test_cuda rs on o5 and o6. Carry .cubin (m48, o5, o6 .txz).
set -u
L=/tmp/L; mkdir -p $L; for x in m48 o5 o6; do tar -C $L -xJf .cubin/$x.txz; done
f() { grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2; }
row() { local r="" x l j; for x in 1 2; do for l in m48 o5 o6; do
    j=$(timeout 60 $L/$l/gdn bench --backend cuda --json --B $1 --T $2 2>&1)
    r="$r $(echo "$j" | f median_us)"; [ "$(echo "$j" | f ok)" = "true" ] || r="$r(NOT OK)"; done; r="$r |"; done
  echo "gdn bench B=$1 T=$2 (m48 o5 o6): $r"; }
(nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
row 64 4; row 12 4; row 16 4; row 32 4; row 128 4; row 256 4; row 64 2; row 64 8
export GDN_CUDA_FAST_J=2; echo "GDN_CUDA_FAST_J=2:"; row 64 4; row 256 4; unset GDN_CUDA_FAST_J
echo "== o5 rs: $(timeout 200 $L/o5/test_cuda rs 2>&1 | tail -n 1)"
echo "== o6 rs: $(timeout 200 $L/o6/test_cuda rs 2>&1 | tail -n 1)"
) 2>&1 | tee $OUT/run4.log
