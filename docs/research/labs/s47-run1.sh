#!/bin/bash
# Session 47 run 1: s47-next-run.sh with m57 (HEAD 0040245: the merged front and tail in their final form) for m56.
# first and last K heads at half the tiles per CTA, D = 128; params.fast_front, fast_tail), whose final form has not run
# on the H200. test_cuda rs and quick (its "fast qwen verify B=64" must print one call with the tail and one with the
# front), quick and memcheck on sanitize with the pairs kernel, the tail and the front forced; then gdn bench verify,
# two rounds, the rule against GDN_CUDA_FAST_FRONT=0 (the tail alone) and the front at 66 where B=96 may want it, and
# decode / verify B=1 as the standing rows. Then issue 5: tr46 (s46-overlap-trace.patch on 73b85f3, built by
# TRACE_PATCH=s46-overlap-trace.patch lab_trace.sh tr46) traces B=1 T=512, 4096 and 32768 (each call's state pass start
# against the first items' flags: where the fill goes), full traces under $OUT. Carry .cubin (m57.txz, tr46.txz).
set -u
L=/tmp/L; mkdir -p $L; tar -C $L -xJf .cubin/m57.txz; tar -C $L -xJf .cubin/tr46.txz
f() { grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2; }
row() { local var=$1 B=$2 T=$3 r="" x k j; shift 3; for x in 1 2; do for k in "$@"; do
    j=$(env $var=$k timeout 60 $L/m57/gdn bench --backend cuda --json --B $B --T $T 2>&1)
    r="$r $(echo "$j" | f median_us)"; [ "$(echo "$j" | f ok)" = "true" ] || r="$r(NOT OK)"; done; r="$r |"; done
  echo "m57 gdn bench B=$B T=$T ($var = $*): $r"; }
(nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
echo "== rs: $(timeout 120 $L/m57/test_cuda rs 2>&1 | tail -n 1)"
timeout 150 $L/m57/test_cuda quick > $OUT/quick.log 2>&1; echo "== quick: $(tail -n 1 $OUT/quick.log)"; grep "drain" $OUT/quick.log
F="GDN_CUDA_FAST=1 GDN_CUDA_FAST_LPR=2 GDN_CUDA_FAST_TAIL=3 GDN_CUDA_FAST_FRONT=5"
echo "== quick, pairs + tail + front forced: $(env $F timeout 150 $L/m57/test_cuda quick 2>&1 | grep -E 'FAIL|PASS' | tail -n 3)"
echo "== memcheck sanitize, so forced: $(env $F timeout 150 compute-sanitizer --tool memcheck $L/m57/test_cuda sanitize 2>&1 | grep -E 'ERROR SUMMARY|PASS|FAIL' | tail -n 3)"
row GDN_CUDA_FAST_FRONT 64 4 -1 0
row GDN_CUDA_FAST_FRONT 96 4 -1 0 66
row GDN_CUDA_FAST_FRONT 128 4 -1 0
row GDN_CUDA_FAST_FRONT 256 4 -1 0
row GDN_CUDA_FAST_FRONT 64 3 -1 0
row GDN_CUDA_FAST_FRONT 256 3 -1 0
row GDN_CUDA_FAST_FRONT 64 8 -1 0
for BT in "1 1" "64 1" "256 1" "1 4"; do set -- $BT; row X $1 $2 0; done
for T in 512 4096 32768; do for x in 1 2; do
  timeout 120 $L/tr46/bench_trace --one 1 $T --chunked > $OUT/trace_T${T}_$x.log 2>&1
  echo "== trace B=1 T=$T round $x:"; grep -v "trace: chunk " $OUT/trace_T${T}_$x.log | head -n 30
  grep "trace: chunk " $OUT/trace_T${T}_$x.log | head -n 6; done; done
) 2>&1 | tee $OUT/next.log
