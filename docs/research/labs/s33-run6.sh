#!/bin/bash
# Session 33, run 6 (device; carry .cubin): the state pass alone against overlapped, by the trace lab with CTA
# (0,0)'s stamps in every order (tra: TRACE_PATCH=s33-overlap-trace.patch lab_trace.sh tra "" s33-trace-state-alone.patch).
set -u
L=/tmp/L; mkdir -p "$L"; tar -C "$L" -xJf .cubin/tra.txz
for T in 4096 32768; do for m in 1 0 1 0; do echo "== T=$T GDN_CUDA_PREP_OVERLAP=$m"
  GDN_CUDA_PREP_OVERLAP=$m timeout 60 $L/tra/bench_trace --one 1 $T --chunked > "$OUT/tra_${T}_$m.log" 2>&1
  grep -oE "median +[0-9]+\.[0-9]+" "$OUT/tra_${T}_$m.log"; grep -E "^trace: (CTA|per=|[0-9]+ of)" "$OUT/tra_${T}_$m.log"; done; done
nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv
