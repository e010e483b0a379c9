#!/bin/bash
# Session 46, run 5. m52 = the merged rule (K = 2/11 of the resident CTAs at T <= 4, 1/32 of the heads above, from
# T = 3) with the tail counter: test_cuda rs and quick, then gdn bench verify, two rounds, the rule (-1) against none (0)
# at T = 4, 5 and 8. Carry .cubin (m52 .txz).
set -u
L=/tmp/L; mkdir -p $L; for x in m52; do tar -C $L -xJf .cubin/$x.txz; done
f() { grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2; }
row() { local bin=$1 var=$2 B=$3 T=$4 r="" x k j; shift 4; for x in 1 2; do for k in "$@"; do
    j=$(env $var=$k timeout 60 $L/$bin/gdn bench --backend cuda --json --B $B --T $T 2>&1)
    r="$r $(echo "$j" | f median_us)"; [ "$(echo "$j" | f ok)" = "true" ] || r="$r(NOT OK)"; done; r="$r |"; done
  echo "$bin gdn bench B=$B T=$T ($var = $*): $r"; }
(nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
echo "== m52 rs: $(timeout 120 $L/m52/test_cuda rs 2>&1 | tail -n 1)"
timeout 150 $L/m52/test_cuda quick > $OUT/quick.log 2>&1; echo "== m52 quick: $(tail -n 1 $OUT/quick.log)"; grep "drain" $OUT/quick.log
row m52 GDN_CUDA_FAST_TAIL 64 4 -1 0
row m52 GDN_CUDA_FAST_TAIL 64 8 -1 0 96
row m52 GDN_CUDA_FAST_TAIL 256 8 -1 0
row m52 GDN_CUDA_FAST_TAIL 64 5 -1 0 96
) 2>&1 | tee $OUT/run5.log
