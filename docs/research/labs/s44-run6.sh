#!/bin/bash
# Session 44, run 6: main with the fast path's pre-wait prefetch evict-last where the call's state outgrows L2 (m47;
# GDN_CUDA_L2_KEEP unset = that rule, 0 = never, as before, 1 = always), decode and verify over the batch sizes in gdn
# bench, two rounds; test_cuda quick with it always on. Carry .cubin (m47.txz).
set -u
L=/tmp/L; mkdir -p $L; tar -C $L -xJf .cubin/m47.txz
f() { grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2; }
row() { # B T
  local r="" x k j; for x in 1 2; do for k in auto 0 1; do
    if [ $k = auto ]; then j=$(timeout 60 $L/m47/gdn bench --backend cuda --json --B $1 --T $2 2>&1)
    else j=$(GDN_CUDA_L2_KEEP=$k timeout 60 $L/m47/gdn bench --backend cuda --json --B $1 --T $2 2>&1); fi
    r="$r $(echo "$j" | f median_us) ($(echo "$j" | f pct_mem_bw))"; [ "$(echo "$j" | f ok)" = "true" ] || r="$r(NOT OK)"; done; r="$r |"; done
  echo "gdn bench B=$1 T=$2 (auto, 0, 1): $r"; }
(nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
for B in 64 256 32 16 8 1; do row $B 1; done
for B in 64 256 8 1; do row $B 4; done
echo "== m47 quick, L2_KEEP=1: $(GDN_CUDA_L2_KEEP=1 timeout 200 $L/m47/test_cuda quick 2>&1 | tail -n 1)"
) 2>&1 | tee $OUT/run6.log
