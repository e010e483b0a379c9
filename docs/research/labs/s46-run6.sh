#!/bin/bash
# Session 46, run 6. m53 = 0125cfa's build (the merged rule: K = 2/11 of the resident CTAs at T <= 4, above that the
# fewer of it and 1/32 of the heads); gb = s46-pairs-gates-bulk.patch on it (GDN_LAB_GB=1: the gates with the bulk
# input copies). gdn bench verify, two rounds; checks. Carry .cubin (m53, gb .txz).
set -u
L=/tmp/L; mkdir -p $L; for x in m53 gb; do tar -C $L -xJf .cubin/$x.txz; done
f() { grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2; }
row() { local bin=$1 var=$2 B=$3 T=$4 r="" x k j; shift 4; for x in 1 2; do for k in "$@"; do
    j=$(env $var=$k timeout 60 $L/$bin/gdn bench --backend cuda --json --B $B --T $T 2>&1)
    r="$r $(echo "$j" | f median_us)"; [ "$(echo "$j" | f ok)" = "true" ] || r="$r(NOT OK)"; done; r="$r |"; done
  echo "$bin gdn bench B=$B T=$T ($var = $*): $r"; }
(nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
echo "== m53 rs: $(timeout 120 $L/m53/test_cuda rs 2>&1 | tail -n 1)"
row m53 GDN_CUDA_FAST_TAIL 256 8 -1 0 256
row m53 GDN_CUDA_FAST_TAIL 64 8 -1 0
row m53 GDN_CUDA_FAST_TAIL 256 5 -1 0
row m53 GDN_CUDA_FAST_TAIL 64 4 -1 0
for BT in "64 4" "256 4" "128 4" "32 4" "16 4" "8 4" "1 4" "64 8" "64 2"; do set -- $BT; row gb GDN_LAB_GB $1 $2 0 1; done
echo "== gb rs, GDN_LAB_GB=1: $(GDN_LAB_GB=1 timeout 120 $L/gb/test_cuda rs 2>&1 | tail -n 1)"
echo "== gb sanitize (not under a sanitizer), persistent pairs grid, GDN_LAB_GB=1: $(GDN_LAB_GB=1 GDN_CUDA_FAST_LPR=3 timeout 120 $L/gb/test_cuda sanitize 2>&1 | tail -n 1)"
echo "== gb quick, pairs + tail forced, GDN_LAB_GB=1: $(GDN_LAB_GB=1 GDN_CUDA_FAST_LPR=2 GDN_CUDA_FAST_TAIL=3 timeout 150 $L/gb/test_cuda quick 2>&1 | tail -n 1)"
) 2>&1 | tee $OUT/run6.log
