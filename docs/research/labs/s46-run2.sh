#!/bin/bash
# Session 46, run 2. m50 = 1fe00de's build (main: the drain rule); t3 = s46-pairs-tail-three-levels.patch on it; ni = t3 +
# s46-pairs-next-inputs-l2.patch (GDN_LAB_NI=W,J,OW,KEEP). gdn bench verify, two rounds: the rule's K (GDN_CUDA_FAST_TAIL)
# at B=64, 96, 128, 256 past the 16-96 of run 1; t3's quarter-tile heads at K=128; ni's inputs prefetched a wave ahead.
# Carry .cubin (m50, t3, ni .txz).
set -u
L=/tmp/L; mkdir -p $L; for x in m50 t3 ni; do tar -C $L -xJf .cubin/$x.txz; done
f() { grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2; }
row() { local bin=$1 var=$2 B=$3 T=$4 r="" x k j; shift 4; for x in 1 2; do for k in "$@"; do
    j=$(env GDN_CUDA_FAST_TAIL=${TAIL:--1} $var=$k timeout 60 $L/$bin/gdn bench --backend cuda --json --B $B --T $T 2>&1)
    r="$r $(echo "$j" | f median_us)"; [ "$(echo "$j" | f ok)" = "true" ] || r="$r(NOT OK)"; done; r="$r |"; done
  echo "$bin gdn bench B=$B T=$T (TAIL=${TAIL:--1}; $var = $*): $r"; }
(nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
row m50 GDN_CUDA_FAST_TAIL 64 4 -1 96 112 128 144 176
row m50 GDN_CUDA_FAST_TAIL 96 4 -1 128 160 192
row m50 GDN_CUDA_FAST_TAIL 128 4 -1 96 160 192
row m50 GDN_CUDA_FAST_TAIL 256 4 -1 96 128 160 192
TAIL=128 row t3 GDN_LAB_TAIL2 64 4 0 16 32 64
TAIL=128 row t3 GDN_LAB_TAIL2 256 4 0 16 32 64
for B in 64 256 32 16; do row ni GDN_LAB_NI $B 4 0,0,0,0 0,0,1,0 0,0,1,1 528,0,0,1 528,1,0,0 528,1,0,1 660,1,0,0 528,1,1,0; done
echo "== ni rs, GDN_LAB_NI=528,1,1,1: $(GDN_LAB_NI=528,1,1,1 timeout 120 $L/ni/test_cuda rs 2>&1 | tail -n 1)"
echo "== ni sanitize (not under a sanitizer), pairs + every head in the tail, GDN_LAB_NI=8,0,1,1: $(GDN_LAB_NI=8,0,1,1 GDN_CUDA_FAST_TAIL=100000 GDN_CUDA_FAST_LPR=2 timeout 120 $L/ni/test_cuda sanitize 2>&1 | tail -n 1)"
) 2>&1 | tee $OUT/run2.log
