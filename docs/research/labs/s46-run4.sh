#!/bin/bash
# Session 46, run 4. m51 = the drain rule at K = 2/11 of the resident CTAs (96 on the H200) from T = 3, and
# gdn_cuda_fast_tail_calls asserted by test_cuda's "fast qwen verify B=64". Checks, then gdn bench verify, two rounds,
# the rule (-1) against none (0) and session 45's K (heads / 32). Carry .cubin (m51 .txz).
set -u
L=/tmp/L; mkdir -p $L; for x in m51; do tar -C $L -xJf .cubin/$x.txz; done
f() { grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2; }
row() { local bin=$1 var=$2 B=$3 T=$4 r="" x k j; shift 4; for x in 1 2; do for k in "$@"; do
    j=$(env $var=$k timeout 60 $L/$bin/gdn bench --backend cuda --json --B $B --T $T 2>&1)
    r="$r $(echo "$j" | f median_us)"; [ "$(echo "$j" | f ok)" = "true" ] || r="$r(NOT OK)"; done; r="$r |"; done
  echo "$bin gdn bench B=$B T=$T ($var = $*): $r"; }
(nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
timeout 150 $L/m51/test_cuda quick > $OUT/quick.log 2>&1; echo "== m51 quick: $(tail -n 1 $OUT/quick.log)"; grep "drain" $OUT/quick.log
echo "== m51 rs: $(timeout 120 $L/m51/test_cuda rs 2>&1 | tail -n 1)"
echo "== m51 quick, pairs + tail forced: $(GDN_CUDA_FAST_LPR=2 GDN_CUDA_FAST_TAIL=3 timeout 150 $L/m51/test_cuda quick 2>&1 | tail -n 1)"
row m51 GDN_CUDA_FAST_TAIL 64 4 -1 0 64
row m51 GDN_CUDA_FAST_TAIL 96 4 -1 0
row m51 GDN_CUDA_FAST_TAIL 128 4 -1 0
row m51 GDN_CUDA_FAST_TAIL 256 4 -1 0 256
row m51 GDN_CUDA_FAST_TAIL 64 3 -1 0 64
row m51 GDN_CUDA_FAST_TAIL 256 3 -1 0
row m51 GDN_CUDA_FAST_TAIL 64 8 -1 0 64
row m51 GDN_CUDA_FAST_TAIL 256 8 -1 0
row m51 GDN_CUDA_FAST_TAIL 48 4 -1 0
for BT in "1 1" "64 1" "256 1" "1 4"; do set -- $BT; row m51 X $1 $2 0; done
) 2>&1 | tee $OUT/run4.log
