#!/bin/bash
# Session 40, run 3: what pw2's gain is (s39-prep-traffic-lab.patch -DGDN_LAB_PW=2, the prep's rows from the first
# chunk: B=1 T=32768 705 -> 681 us in run 1). s40-prep-traffic-lab2.patch adds pw8 (the state pass's k, q tiles from
# the first chunk), pw10 (8 and 2), pw16 (the prep's rows from the previous chunk, L2-resident but real neighbours).
# If pw16 gains as pw2 does, the prep's row latency paces; if pw8 gains, the state pass's own k, q reads are it.
# Built with lab_build.sh pwN s40-prep-traffic-lab2.patch -DGDN_LAB_PW=N (8, 10, 16), packed in .cubin/pwb.txz.
set -u
L=/tmp/L; mkdir -p "$L"; tar -C "$L" -xJf .cubin/pwb.txz; tar -C "$L" -xJf .cubin/pw.txz pw0/bench_cuda pw2/bench_cuda pw1/bench_cuda
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw --format=csv
med() { grep -oE "median +[0-9]+\.[0-9]+" | grep -oE "[0-9.]+$"; }
echo "== bench_cuda --one B T --chunked: pw0 pw1 pw2 pw8 pw10 pw16, three rounds"
for BT in "1 2048" "1 4096" "1 32768" "8 4096"; do
  r=""; for x in 1 2 3; do for l in pw0 pw1 pw2 pw8 pw10 pw16; do
    r="$r $(timeout 60 "$L/$l/bench_cuda" --one $BT --chunked 2>&1 | med)"; done; r="$r |"; done
  echo "B T=$BT: $r"; done
nvidia-smi --query-gpu=clocks.sm,power.draw --format=csv
