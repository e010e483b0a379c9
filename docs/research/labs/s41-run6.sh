#!/bin/bash
# Session 41, run 6: one dry pass of the overlapped B=1 state pass's chunk loop while the prep's first items run
# (s41-state-pass-warm.patch, wm = -DGDN_LAB_WARM=1; m41 = main): does chunk 0 start warm and the call end sooner?
set -u
L=/tmp/L; mkdir -p $L; tar -C $L -xJf .cubin/m41.txz; tar -C $L -xJf .cubin/wm.txz
med() { grep -oE "median +[0-9]+\.[0-9]+" | grep -oE "[0-9.]+$"; }
echo "== wm test_cuda rs: $(timeout 100 $L/wm/test_cuda rs 2>&1 | tail -n 1); overlap 2: $(GDN_CUDA_PREP_OVERLAP=2 timeout 100 $L/wm/test_cuda rs 2>&1 | tail -n 1)"
for T in 2048 4096 32768; do
  r=""; for x in 1 2; do for l in m41 wm; do
    r="$r $(timeout 60 "$L/$l/bench_cuda" --one 1 $T --chunked 2>&1 | med)"; done; r="$r |"; done
  echo "B=1 T=$T (m41 wm): $r"; done
for l in m41 wm; do echo "$l gdn bench T=4096 $(timeout 60 "$L/$l/gdn" bench --backend cuda --json --algo chunked --B 1 --T 4096 2>/dev/null | grep -oE '"(median_us|rel_err)":[^,}]*' | tr '\n' ' ')"; done
