#!/bin/bash
# Session 33, run 7 (device; carry .cubin): three stages in the B=1 state pass (ns3: s33-state-pass-three-stages.patch
# -DGDN_LAB_NS3=1) against base (b3d131a's kernels); rs first, then two rounds.
set -u
L=/tmp/L; mkdir -p "$L"; for l in base ns3; do tar -C "$L" -xJf .cubin/$l.txz; done
echo "== ns3 test_cuda rs"; timeout 60 $L/ns3/test_cuda rs > "$OUT/ns3_rs.log" 2>&1; echo "rc=$?"
grep -E "FAIL|^PASS" "$OUT/ns3_rs.log" | tail -2
for c in "1 512" "1 4096" "1 32768"; do set -- $c
  r=""; for l in base ns3 base ns3; do
    r="$r $(timeout 60 "$L/$l/bench_cuda" --one $1 $2 --chunked 2>&1 | grep -oE "median +[0-9]+\.[0-9]+" | grep -oE "[0-9.]+$")"; done
  echo "B=$1 T=$2: $r"; done
