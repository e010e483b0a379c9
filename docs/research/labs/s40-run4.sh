#!/bin/bash
# Session 40, run 4: run 1's pw2 traced (tr2 = s40-overlap-trace.patch + s40-prep-traffic-lab2.patch -DGDN_LAB_PW=2;
# tr0 the trace alone: TRACE_PATCH=s40-overlap-trace.patch lab_trace.sh tr0 / tr2 "-DGDN_LAB_PW=2"
# s40-prep-traffic-lab2.patch), and the persistent prep alone (ncu) for nr0, nr1, pw0,
# pw2: does the prep get faster with its rows from L2? tr1 = the trace with s40-prep-next-rows-l2.patch -DGDN_LAB_NR=1.
set -u
L=/tmp/L; mkdir -p "$L"; tar -C "$L" -xJf .cubin/tr.txz; tar -C "$L" -xJf .cubin/nr.txz nr0/bench_cuda nr1/bench_cuda
tar -C "$L" -xJf .cubin/pw.txz pw0/bench_cuda pw2/bench_cuda
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw --format=csv
med() { grep -oE "median +[0-9]+\.[0-9]+" | grep -oE "[0-9.]+$"; }
for T in 4096 32768; do for x in 1 2; do for l in tr0 tr2 tr1; do
  echo "== $l T=$T round $x"; timeout 60 "$L/$l/bench_trace" --one 1 $T --chunked 2>&1 | grep -E "median|late|items [0-9]+\.\.|state start"
done; done; done
echo "== ncu, the persistent prep kernel alone (ncu serializes the two passes): nr0 nr1 pw0 pw2, B=1 T=4096 and 32768"
for T in 4096 32768; do for l in nr0 nr1 pw0 pw2; do
  echo "-- $l T=$T"; timeout 120 ncu --section SpeedOfLight -k regex:persistent -c 1 "$L/$l/bench_cuda" --one 1 $T --chunked 2>&1 | grep -E "Duration|DRAM Throughput|L2 Cache Throughput|SM Frequency" | head -6
done; done
nvidia-smi --query-gpu=clocks.sm,power.draw --format=csv
