#!/bin/bash
# Session 43, run 3: lz6 = s43-state-pass-lazy-decay-warp.patch (-DGDN_LAB_LZ=1: run 2's lazy decay with the scaling
# in a sixth warp, the producer unchanged) and sr = s43-state-pass-split-release.patch (-DGDN_LAB_SR=1: q, v, T of a
# stage refilled once Y^T is done) against m43 (0ea3e7b's main build).
set -u
L=/tmp/L; mkdir -p $L; for x in m43 lz6 sr; do tar -C $L -xJf .cubin/$x.txz; done
med() { grep -oE "median +[0-9]+\.[0-9]+" | grep -oE "[0-9.]+$"; }
(nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
for l in lz6 sr; do echo "== $l test_cuda rs: $(timeout 100 $L/$l/test_cuda rs 2>&1 | tail -n 1); overlap 2: $(GDN_CUDA_PREP_OVERLAP=2 timeout 100 $L/$l/test_cuda rs 2>&1 | tail -n 1)"; done
for c in "1 512" "1 2048" "1 4096" "1 32768" "2 4096"; do
  r=""; for x in 1 2 3; do for l in m43 lz6 sr; do
    r="$r $(timeout 60 "$L/$l/bench_cuda" --one $c --chunked 2>&1 | med)"; done; r="$r |"; done
  echo "bench_cuda B,T=$c (m43 lz6 sr): $r"; done
for l in m43 lz6 sr; do for T in 4096 32768; do
  echo "$l T=$T: $(timeout 60 $L/$l/gdn bench --backend cuda --json --algo chunked --B 1 --T $T 2>&1 | grep -oE '"(median_us|rel_err|ok)": *[^,}]+' | tr '\n' ' ')"; done; done
) 2>&1 | tee $OUT/run3.log
