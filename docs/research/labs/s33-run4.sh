#!/bin/bash
# Session 33, run 4 (device; carry .cubin): the overlap trace (s33-overlap-trace.patch, built by
# TRACE_PATCH=s33-overlap-trace.patch lab_trace.sh tr, packed as .cubin/tr.txz) at B=1: the default order against
# GDN_CUDA_PREP_OVERLAP=4 (the per-item prep at three per SM), and the state pass alone (=0: the prep first).
set -u
L=/tmp/L; mkdir -p "$L"; tar -C "$L" -xJf .cubin/tr.txz
for T in 4096 32768; do
  for m in 1 4 0; do
    echo "=== T=$T GDN_CUDA_PREP_OVERLAP=$m"
    GDN_CUDA_PREP_OVERLAP=$m timeout 60 $L/tr/bench_trace --one 1 $T --chunked > "$OUT/tr_${T}_$m.log" 2>&1
    grep -oE "median +[0-9]+\.[0-9]+" "$OUT/tr_${T}_$m.log"; grep "^trace" "$OUT/tr_${T}_$m.log" | head -40
  done
done
echo "=== T=32768 default, GDN_CUDA_PREP_CTAS=60"
GDN_CUDA_PREP_CTAS=60 timeout 60 $L/tr/bench_trace --one 1 32768 --chunked > "$OUT/tr_32768_c60.log" 2>&1
grep -oE "median +[0-9]+\.[0-9]+" "$OUT/tr_32768_c60.log"; grep "^trace" "$OUT/tr_32768_c60.log" | grep -v "chunk " | head
