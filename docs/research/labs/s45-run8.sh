#!/bin/bash
# Session 45 run 8: s45-pairs-tail-two-tiles.patch (jt; GDN_LAB_TAIL=K: the last K heads at two tiles per CTA) in gdn
# bench, verify T=4, two rounds, K = 0 (main's grid) and up; test_cuda rs at K = 264 and 100000 (every head of the
# pairs kernel's D=128 J=4 calls at J=2). Carry .cubin (jt.txz).
set -u
L=/tmp/L; mkdir -p $L; tar -C $L -xJf .cubin/jt.txz
f() { grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2; }
row() { local B=$1 r="" x k j; shift; for x in 1 2; do for k in "$@"; do
    j=$(GDN_LAB_TAIL=$k timeout 60 $L/jt/gdn bench --backend cuda --json --B $B --T 4 2>&1)
    r="$r $(echo "$j" | f median_us)"; [ "$(echo "$j" | f ok)" = "true" ] || r="$r(NOT OK)"; done; r="$r |"; done
  echo "gdn bench B=$B T=4 (K = $*): $r"; }
(nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
row 64 0 66 132 264 396 528
row 128 0 132 264 528
row 256 0 264 528 1056
row 32 0 66 132 264
echo "== jt rs, K=264: $(GDN_LAB_TAIL=264 timeout 200 $L/jt/test_cuda rs 2>&1 | tail -n 1)"
echo "== jt rs, K=100000: $(GDN_LAB_TAIL=100000 timeout 200 $L/jt/test_cuda rs 2>&1 | tail -n 1)"
) 2>&1 | tee $OUT/run8.log
