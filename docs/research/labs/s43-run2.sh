#!/bin/bash
# Session 43, run 2: lz = s43-state-pass-lazy-decay.patch with -DGDN_LAB_LZ=1 (the two-stage state pass keeps S = p B;
# no gl S in the compute warps) against m43 (0ea3e7b's main build): checks, bench_cuda, gdn bench against the oracle.
set -u
L=/tmp/L; mkdir -p $L; for x in m43 lz; do tar -C $L -xJf .cubin/$x.txz; done
med() { grep -oE "median +[0-9]+\.[0-9]+" | grep -oE "[0-9.]+$"; }
(nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
echo "== lz test_cuda rs: $(timeout 100 $L/lz/test_cuda rs 2>&1 | tail -n 1); overlap 2: $(GDN_CUDA_PREP_OVERLAP=2 timeout 100 $L/lz/test_cuda rs 2>&1 | tail -n 1)"
for c in "1 512" "1 2048" "1 4096" "1 32768" "2 4096"; do
  r=""; for x in 1 2 3; do for l in m43 lz; do
    r="$r $(timeout 60 "$L/$l/bench_cuda" --one $c --chunked 2>&1 | med)"; done; r="$r |"; done
  echo "bench_cuda B,T=$c (m43 lz): $r"; done
for l in m43 lz; do for T in 4096 32768; do for pr in "" "--precision bf16"; do
  echo "$l T=$T $pr: $(timeout 60 $L/$l/gdn bench --backend cuda --json --algo chunked --B 1 --T $T $pr 2>&1 | grep -oE '"(median_us|rel_err|ok)": *[^,}]+' | tr '\n' ' ')"; done; done; done
echo "== lz quick: $(timeout 200 $L/lz/test_cuda quick 2>&1 | tail -n 1)") 2>&1 | tee $OUT/run2.log
