#!/bin/bash
# Session 31, fourth device command: the state pass's shared-memory loads ahead of the products (GDN_LAB_EL, the
# patch s31-state-pass-early-loads.patch): el9 = V^T's ldmatrix before X^T and sq before S'; el15 = also sk, bt at
# the top and cf before D^T; against base. Pack as s31-run1.sh (base el9 el15). Run (carry .cubin).
set -u
L=/tmp/L; mkdir -p "$L"; for l in base el9 el15; do tar -C "$L" -xJf .cubin/$l.txz; done
for l in el9 el15; do echo "== $l test_cuda rs"; timeout 60 $L/$l/test_cuda rs > "$OUT/${l}_rs.log" 2>&1; echo "rc=$?"
  grep -E "FAIL|^PASS" "$OUT/${l}_rs.log" | tail -3; done
echo "== bench_cuda --one B T --chunked: base el9 el15, two rounds"
for c in "1 512" "1 4096" "1 32768"; do set -- $c
  r=""; for l in base el9 el15 base el9 el15; do
    r="$r $(timeout 60 "$L/$l/bench_cuda" --one $1 $2 --chunked 2>&1 | grep -oE "median +[0-9]+\.[0-9]+" | grep -oE "[0-9.]+$")"; done
  echo "B=$1 T=$2: $r"; done
echo "== GDN_CUDA_PREP_OVERLAP=0 B=1 T=4096: base el9 el15"
r=""; for l in base el9 el15; do
  r="$r $(GDN_CUDA_PREP_OVERLAP=0 timeout 60 "$L/$l/bench_cuda" --one 1 4096 --chunked 2>&1 | grep -oE "median +[0-9]+\.[0-9]+" | grep -oE "[0-9.]+$")"; done
echo "$r"
echo "== gdn bench B=1 T=4096: base / el9 / el15"
r=""; for l in base el9 el15; do
  r="$r | $(timeout 60 "$L/$l/gdn" bench --backend cuda --algo chunked --B 1 --T 4096 2>&1 | awk '/^prefill/ {print $4, $10}')"; done
echo "$r"
