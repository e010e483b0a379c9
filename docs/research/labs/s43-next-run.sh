#!/bin/bash
# Written in session 42 for the next session (not run): does session 40's pw2 effect (the prep's k, q rows read from
# L2 instead of HBM: B=1 T=4096 -3.4 to -3.9 us, T=32768 -22 to -27, timing only) survive session 42's whole-line
# workspace blocks? Build first (about 2.5 min each; two at once are fine):
#   docs/research/labs/lab_build.sh pw0 s42-prep-traffic-lab3.patch ""      (main's code)
#   docs/research/labs/lab_build.sh pw1 s42-prep-traffic-lab3.patch -DGDN_LAB_PW=1
#   docs/research/labs/lab_build.sh pw2 s42-prep-traffic-lab3.patch -DGDN_LAB_PW=2
#   docs/research/labs/lab_build.sh pw8 s42-prep-traffic-lab3.patch -DGDN_LAB_PW=8
# then tar -C /tmp/labs -cJf .cubin/pwN.txz pwN/gdn pwN/bench_cuda pwN/test_cuda for each, and carry .cubin.
set -u
L=/tmp/L; mkdir -p $L; for x in pw0 pw1 pw2 pw8; do tar -C $L -xJf .cubin/$x.txz; done
med() { grep -oE "median +[0-9]+\.[0-9]+" | grep -oE "[0-9.]+$"; }
for c in "1 2048" "1 4096" "1 32768" "8 4096"; do
  r=""; for x in 1 2 3; do for l in pw0 pw1 pw2 pw8; do
    r="$r $(timeout 60 "$L/$l/bench_cuda" --one $c --chunked 2>&1 | med)"; done; r="$r |"; done
  echo "bench_cuda B,T=$c (pw0 pw1 pw2 pw8): $r"; done
