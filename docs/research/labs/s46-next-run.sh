#!/bin/bash
# Written in session 45 for the next session (built, not run). m50 = 1fe00de's build (main: the drain rule from T=4);
# t3 = s46-pairs-tail-three-levels.patch on it. test_cuda rs and quick with the pairs kernel and the tail forced (m50);
# gdn bench verify, two rounds: the rule's K swept by GDN_CUDA_FAST_TAIL at B=64 and 256 (-1 = the rule, 1/32 of the
# heads), T=3 (not measured yet) with it off and on, and t3's last K2 heads at one tile per CTA (GDN_LAB_TAIL2).
# Carry .cubin (m50, t3 .txz).
set -u
L=/tmp/L; mkdir -p $L; for x in m50 t3; do tar -C $L -xJf .cubin/$x.txz; done
f() { grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2; }
row() { local bin=$1 var=$2 B=$3 T=$4 r="" x k j; shift 4; for x in 1 2; do for k in "$@"; do
    j=$(env $var=$k timeout 60 $L/$bin/gdn bench --backend cuda --json --B $B --T $T 2>&1)
    r="$r $(echo "$j" | f median_us)"; [ "$(echo "$j" | f ok)" = "true" ] || r="$r(NOT OK)"; done; r="$r |"; done
  echo "$bin gdn bench B=$B T=$T ($var = $*): $r"; }
(nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
echo "== m50 rs: $(timeout 120 $L/m50/test_cuda rs 2>&1 | tail -n 1)"
echo "== m50 quick, pairs + tail forced: $(GDN_CUDA_FAST_LPR=2 GDN_CUDA_FAST_TAIL=3 timeout 150 $L/m50/test_cuda quick 2>&1 | tail -n 1)"
row m50 GDN_CUDA_FAST_TAIL 64 4 -1 0 16 32 48 96
row m50 GDN_CUDA_FAST_TAIL 256 4 -1 0 128 384
row m50 GDN_CUDA_FAST_TAIL 64 3 0 64
row t3 GDN_LAB_TAIL2 64 4 0 8 16 32
row t3 GDN_LAB_TAIL2 256 4 0 32 64
echo "== t3 sanitize (not under a sanitizer), every head in the tail, the last 16 at a quarter: $(GDN_LAB_TAIL2=16 GDN_CUDA_FAST_TAIL=100000 GDN_CUDA_FAST_LPR=2 timeout 120 $L/t3/test_cuda sanitize 2>&1 | tail -n 1)"
echo "== t3 quick, pairs + tail forced, GDN_LAB_TAIL2=2: $(GDN_LAB_TAIL2=2 GDN_CUDA_FAST_LPR=2 GDN_CUDA_FAST_TAIL=3 timeout 150 $L/t3/test_cuda quick 2>&1 | tail -n 1)"
) 2>&1 | tee $OUT/next.log
