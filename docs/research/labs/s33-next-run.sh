#!/bin/bash
# Session 33's labs for the next session (built here, not run: the device time was spent). Session 33's trace found
# the B=1 state pass pacing the overlapped call and taking 3.5-4.6% more SM cycles a chunk beside the prep than
# alone (docs/PERF.md, session 33). These find where:
#   ns3 = s33-state-pass-three-stages.patch -DGDN_LAB_NS3=1: three stages (216 KB), each stage's copies a chunk more
#         to land under the prep's traffic;
#   ph  = the state pass's steps per chunk by clock64 (s33-state-pass-phase-trace.patch, session 29's rebased), run
#         overlapped and alone (GDN_CUDA_PREP_OVERLAP=0): which steps grow beside the prep (the stage's wait is
#         step 0 -> 1).
# Build (a Release build in build/ first; about 4 minutes each, two at once):
#   docs/research/labs/lab_build.sh base "" ""
#   docs/research/labs/lab_build.sh ns3 s33-state-pass-three-stages.patch -DGDN_LAB_NS3=1
#   TRACE_PATCH=s33-state-pass-phase-trace.patch TRACE_DEF=-DGDN_LAB_RSTRACE=1 docs/research/labs/lab_trace.sh ph
#   for l in base ns3; do mkdir -p /tmp/pk/$l && cp /tmp/labs/$l/{gdn,bench_cuda,test_cuda} /tmp/pk/$l/ &&
#       tar -C /tmp/pk -cJf .cubin/$l.txz $l; done
#   mkdir -p /tmp/pk/ph && cp /tmp/labs/ph/{bench_trace,bench_cuda} /tmp/pk/ph/ && tar -C /tmp/pk -cJf .cubin/ph.txz ph
# Then on the device (carry .cubin): bash docs/research/labs/s33-next-run.sh   (about 3 minutes; logs under $OUT)
set -u
L=/tmp/L; mkdir -p "$L"; for l in base ns3 ph; do tar -C "$L" -xJf .cubin/$l.txz; done
echo "== ns3 test_cuda rs"; timeout 60 $L/ns3/test_cuda rs > "$OUT/ns3_rs.log" 2>&1; echo "rc=$?"
grep -E "FAIL|^PASS" "$OUT/ns3_rs.log" | tail -2
echo "== bench_cuda --one B T --chunked: base ns3, two rounds"
for c in "1 512" "1 4096" "1 32768" "8 4096"; do set -- $c
  r=""; for l in base ns3 base ns3; do
    r="$r $(timeout 60 "$L/$l/bench_cuda" --one $1 $2 --chunked 2>&1 | grep -oE "median +[0-9]+\.[0-9]+" | grep -oE "[0-9.]+$")"; done
  echo "B=$1 T=$2: $r"; done
for T in 4096 32768; do for m in 1 0; do echo "== ph T=$T GDN_CUDA_PREP_OVERLAP=$m"
  GDN_CUDA_PREP_OVERLAP=$m timeout 60 $L/ph/bench_trace --one 1 $T --chunked > "$OUT/ph_${T}_$m.log" 2>&1
  grep -oE "median +[0-9]+\.[0-9]+" "$OUT/ph_${T}_$m.log"; grep "^trace" "$OUT/ph_${T}_$m.log" | head -30; done; done
