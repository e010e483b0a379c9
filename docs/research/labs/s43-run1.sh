#!/bin/bash
# Session 43, run 1: session 42's two unrun labs in one command (s43-next-run.sh and s43-next-run2.sh, with m43 =
# 0ea3e7b's main build as main). pw0-pw8: s42-prep-traffic-lab3.patch with -DGDN_LAB_PW=0/1/2/8 (pw0 = main's code;
# pw2 reads the prep's rows from the first chunk: timing only, wrong results); ea: s42-state-pass-inputs-every-chunk.patch
# with -DGDN_LAB_EA=1. Carry .cubin (m43.txz, pw0.txz ... pw8.txz, ea.txz).
set -u
L=/tmp/L; mkdir -p $L; for x in m43 pw0 pw1 pw2 pw8 ea; do tar -C $L -xJf .cubin/$x.txz; done
med() { grep -oE "median +[0-9]+\.[0-9]+" | grep -oE "[0-9.]+$"; }
(nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
echo "== ea test_cuda rs: $(timeout 100 $L/ea/test_cuda rs 2>&1 | tail -n 1); overlap 2: $(GDN_CUDA_PREP_OVERLAP=2 timeout 100 $L/ea/test_cuda rs 2>&1 | tail -n 1)"
for c in "1 512" "1 4096" "1 32768"; do
  r=""; for x in 1 2 3; do for l in m43 ea; do
    r="$r $(timeout 60 "$L/$l/bench_cuda" --one $c --chunked 2>&1 | med)"; done; r="$r |"; done
  echo "bench_cuda B,T=$c (m43 ea): $r"; done
for c in "1 2048" "1 4096" "1 32768" "8 4096"; do
  r=""; for x in 1 2 3; do for l in pw0 pw1 pw2 pw8; do
    r="$r $(timeout 60 "$L/$l/bench_cuda" --one $c --chunked 2>&1 | med)"; done; r="$r |"; done
  echo "bench_cuda B,T=$c (pw0 pw1 pw2 pw8): $r"; done) 2>&1 | tee $OUT/run1.log
