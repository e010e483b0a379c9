#!/bin/bash
# Session 45 run 9: main with the pairs kernel's drain rule (m49: the launcher runs the last 1/32 of the heads at
# half the tiles per CTA from three waves of CTAs, D = 128, T <= 4; GDN_CUDA_FAST_TAIL=0 turns it off, K forces the
# last K heads). test_cuda rs; quick with the pairs kernel on every multi-token call and the tail forced
# (GDN_CUDA_FAST_LPR=2, GDN_CUDA_FAST_TAIL=3); memcheck on the short sanitize run so forced; gdn bench verify, the rule against off, two
# rounds; T=2 and 8 forced against off (the rule leaves them out). Carry .cubin (m49.txz).
set -u
L=/tmp/L; mkdir -p $L; tar -C $L -xJf .cubin/m49.txz
f() { grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2; }
row() { local B=$1 T=$2 r="" x k j; shift 2; for x in 1 2; do for k in "$@"; do
    j=$(GDN_CUDA_FAST_TAIL=$k timeout 60 $L/m49/gdn bench --backend cuda --json --B $B --T $T 2>&1)
    r="$r $(echo "$j" | f median_us)"; [ "$(echo "$j" | f ok)" = "true" ] || r="$r(NOT OK)"; done; r="$r |"; done
  echo "gdn bench B=$B T=$T (GDN_CUDA_FAST_TAIL = $*): $r"; }
(nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
echo "== rs: $(timeout 120 $L/m49/test_cuda rs 2>&1 | tail -n 1)"
echo "== quick, pairs + tail forced: $(GDN_CUDA_FAST_LPR=2 GDN_CUDA_FAST_TAIL=3 timeout 150 $L/m49/test_cuda quick 2>&1 | grep -E 'FAIL|PASS' | tail -n 3)"
row 64 4 -1 0; row 48 4 -1 0; row 96 4 -1 0; row 128 4 -1 0; row 256 4 -1 0
row 64 2 0 64; row 64 8 0 64
echo "== memcheck sanitize, pairs + tail forced: $(GDN_CUDA_FAST_LPR=2 GDN_CUDA_FAST_TAIL=3 timeout 150 compute-sanitizer --tool memcheck $L/m49/test_cuda sanitize 2>&1 | grep -E 'ERROR SUMMARY|PASS|FAIL' | tail -n 3)"
) 2>&1 | tee $OUT/run9.log
