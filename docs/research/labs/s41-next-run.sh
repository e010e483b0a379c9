#!/bin/bash
# For session 41 (written in session 40, not run): are the k, q rows read from HBM twice in an overlapped B=1 call
# (once by the prep, again by the state pass's tensor copies after the lines were evicted), and does pw2 (the prep's
# rows from the first chunk: 3.5% faster, session 40) remove that second read? Session 40's run 6 tried
# `ncu --graph-profiling graph -c 1` and got 33-63 KB: the first graph bench_cuda launches is not the call's. This
# takes the first 8 graphs and prints each one's DRAM bytes; the call's graph (4 calls) should read about
# 4 x (32 MiB k, q + 32 MiB v + ...) at T=4096 if nothing is read twice. Needs session 40's .cubin/pw.txz (pw0 = main
# before session 40, pw2) and .cubin/m40.txz (main's bench_cuda at session 40's end: tar cJf .cubin/m40.txz -C
# build/tests bench_cuda) carried.
set -u
L=/tmp/L; mkdir -p "$L"; tar -C "$L" -xJf .cubin/pw.txz pw0/bench_cuda pw2/bench_cuda
mkdir -p "$L/main" && tar -C "$L/main" -xJf .cubin/m40.txz
for l in pw0 main pw2; do
  echo "== $l B=1 T=4096"
  timeout 300 ncu --graph-profiling graph -c 8 --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum \
      "$L/$l/bench_cuda" --one 1 4096 --chunked 2>&1 | grep -E "^  [A-Za-z_]|dram__bytes|gpu__time" | tr -s ' '
done
