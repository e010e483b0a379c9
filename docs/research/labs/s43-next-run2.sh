#!/bin/bash
# Written in session 42 for the next session (not run): every stage's inputs issued at its release when its prep item
# is not yet flagged (s42-state-pass-inputs-every-chunk.patch, ea = -DGDN_LAB_EA=1) against main (m = HEAD's build).
# Build: docs/research/labs/lab_build.sh ea s42-state-pass-inputs-every-chunk.patch -DGDN_LAB_EA=1 (250 registers,
# no spills in session 42's build), tar it and main's build into .cubin/{m,ea}.txz, carry .cubin.
set -u
L=/tmp/L; mkdir -p $L; for x in m ea; do tar -C $L -xJf .cubin/$x.txz; done
med() { grep -oE "median +[0-9]+\.[0-9]+" | grep -oE "[0-9.]+$"; }
echo "== ea test_cuda rs: $(timeout 100 $L/ea/test_cuda rs 2>&1 | tail -n 1); overlap 2: $(GDN_CUDA_PREP_OVERLAP=2 timeout 100 $L/ea/test_cuda rs 2>&1 | tail -n 1)"
for c in "1 512" "1 4096" "1 32768"; do
  r=""; for x in 1 2 3; do for l in m ea; do
    r="$r $(timeout 60 "$L/$l/bench_cuda" --one $c --chunked 2>&1 | med)"; done; r="$r |"; done
  echo "bench_cuda B,T=$c (m ea): $r"; done
