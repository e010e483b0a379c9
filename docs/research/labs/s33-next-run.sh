#!/bin/bash
# Session 33's labs for the next session (built here, not run: the device time was spent). Session 33's trace found
# the B=1 state pass pacing the overlapped call and taking 3.5-4.6% more SM cycles a chunk beside the prep than
# alone (docs/PERF.md, session 33). These find where:
#   ns3 = s33-state-pass-three-stages.patch -DGDN_LAB_NS3=1: three stages (216 KB), each stage's copies a chunk more
#         to land under the prep's traffic;
#   ns3lf, ns3pfr = ns3 with session 31's lf (-DGDN_LAB_LF=1, s31-state-pass-cf-and-fence.patch) or with the prep's
#         rows one item ahead (-DGDN_LAB_PFR=1, s33-prep-rows-one-item-ahead.patch): each lost overlapped in session
#         33, perhaps through the stage's landing that ns3 gives more time;
#   clpw = s33-state-pass-cluster-producer.patch -DGDN_LAB_CLPW=1: the two row tiles of a head in a cluster, k, q, T,
#         P and the scalars multicast (half the state pass's L2 reads of them), two stages with the producer warps;
#   ph  = the state pass's steps per chunk by clock64 (s33-state-pass-phase-trace.patch, session 29's rebased), run
#         overlapped and alone (GDN_CUDA_PREP_OVERLAP=0): which steps grow beside the prep (the stage's wait is
#         step 0 -> 1).
# Build (a Release build in build/ first; about 4 minutes each, two at once):
#   docs/research/labs/lab_build.sh base "" ""
#   docs/research/labs/lab_build.sh ns3 s33-state-pass-three-stages.patch -DGDN_LAB_NS3=1
#   docs/research/labs/lab_build.sh ns3lf "s33-state-pass-three-stages.patch s31-state-pass-cf-and-fence.patch" "-DGDN_LAB_NS3=1 -DGDN_LAB_LF=1"
#   docs/research/labs/lab_build.sh ns3pfr "s33-state-pass-three-stages.patch s33-prep-rows-one-item-ahead.patch" "-DGDN_LAB_NS3=1 -DGDN_LAB_PFR=1"
#   docs/research/labs/lab_build.sh clpw s33-state-pass-cluster-producer.patch -DGDN_LAB_CLPW=1
#   TRACE_PATCH=s33-state-pass-phase-trace.patch TRACE_DEF=-DGDN_LAB_RSTRACE=1 docs/research/labs/lab_trace.sh ph
#   for l in base ns3 ns3lf ns3pfr clpw; do mkdir -p /tmp/pk/$l && cp /tmp/labs/$l/{gdn,bench_cuda,test_cuda} /tmp/pk/$l/ &&
#       tar -C /tmp/pk -cJf .cubin/$l.txz $l; done
#   mkdir -p /tmp/pk/ph && cp /tmp/labs/ph/{bench_trace,bench_cuda} /tmp/pk/ph/ && tar -C /tmp/pk -cJf .cubin/ph.txz ph
# Then on the device (carry .cubin): bash docs/research/labs/s33-next-run.sh   (about 7 minutes; logs under $OUT)
set -u
L=/tmp/L; mkdir -p "$L"; for l in base ns3 ns3lf ns3pfr clpw ph; do tar -C "$L" -xJf .cubin/$l.txz; done
for l in ns3 ns3lf ns3pfr clpw; do echo "== $l test_cuda rs"; timeout 60 $L/$l/test_cuda rs > "$OUT/${l}_rs.log" 2>&1
  echo "rc=$?"; grep -E "FAIL|^PASS" "$OUT/${l}_rs.log" | tail -2; done
echo "== bench_cuda --one B T --chunked: base ns3 ns3lf ns3pfr clpw, two rounds"
for c in "1 512" "1 4096" "1 32768"; do set -- $c
  r=""; for l in base ns3 ns3lf ns3pfr clpw base ns3 ns3lf ns3pfr clpw; do
    r="$r $(timeout 60 "$L/$l/bench_cuda" --one $1 $2 --chunked 2>&1 | grep -oE "median +[0-9]+\.[0-9]+" | grep -oE "[0-9.]+$")"; done
  echo "B=$1 T=$2: $r"; done
for T in 4096 32768; do for m in 1 0; do echo "== ph T=$T GDN_CUDA_PREP_OVERLAP=$m"
  GDN_CUDA_PREP_OVERLAP=$m timeout 60 $L/ph/bench_trace --one 1 $T --chunked > "$OUT/ph_${T}_$m.log" 2>&1
  grep -oE "median +[0-9]+\.[0-9]+" "$OUT/ph_${T}_$m.log"; grep "^trace" "$OUT/ph_${T}_$m.log" | head -30; done; done
echo "== gdn bench: base / ns3 / ns3lf / ns3pfr / clpw (median, rel_err)"
for c in "1 512" "1 4096" "1 32768"; do
  r=""; for l in base ns3 ns3lf ns3pfr clpw; do set -- $c
    r="$r | $(timeout 60 "$L/$l/gdn" bench --backend cuda --algo chunked --B $1 --T $2 2>&1 | awk '/^prefill/ {print $4, $10}')"; done
  echo "$c: $r"; done
