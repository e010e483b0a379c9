#!/bin/bash
# Session 32, run 2 (device; carry .cubin): the prep's ldmatrix solve alone (lso = s32-prep-solve-ldmatrix.patch)
# against ls2 (the solve and the publish without its generation read) and base; then the overlapped prep on fewer
# CTAs (GDN_CUDA_PREP_CTAS, default 68 = the SMs the state pass leaves) with base and ls2: does a slower prep slow
# the state pass less? Logs under $OUT.
# Builds (lab_build.sh, then packed: mkdir -p /tmp/pk/N && cp /tmp/labs/N/{gdn,bench_cuda,test_cuda} /tmp/pk/N/ &&
# tar -C /tmp/pk -cJf .cubin/N.txz N): base = b4dc48f's tree ("" ""); lso = c044ee7's tree (the merged solve);
# pub = b4dc48f + s32-prep-publish-gen-once.patch; ls2 = c044ee7 + that patch; ls2lf = ls2 + s31-state-pass-cf-and-
# fence.patch with -DGDN_LAB_LF=1; nd2 = c044ee7 + s32-prep-norms-from-diagonals.patch (nd: its Q Q^T loop unrolled 2).
set -u
L=/tmp/L; mkdir -p "$L"; for l in base ls2 lso; do tar -C "$L" -xJf .cubin/$l.txz; done
echo "== lso test_cuda rs"; timeout 60 $L/lso/test_cuda rs > "$OUT/lso_rs.log" 2>&1; echo "rc=$?"
grep -E "FAIL|^PASS" "$OUT/lso_rs.log" | tail -3
echo "== bench_cuda --one B T --chunked: base ls2 lso, three rounds"
for c in "1 512" "1 1024" "1 4096" "1 32768" "8 4096" "64 4096"; do set -- $c
  r=""; for l in base ls2 lso base ls2 lso base ls2 lso; do
    r="$r $(timeout 60 "$L/$l/bench_cuda" --one $1 $2 --chunked 2>&1 | grep -oE "median +[0-9]+\.[0-9]+" | grep -oE "[0-9.]+$")"; done
  echo "B=$1 T=$2: $r"; done
echo "== GDN_CUDA_PREP_CTAS = 68 / 64 / 60 / 56 / 48: base, then ls2"
for c in "1 4096" "1 32768"; do set -- $c
  for l in base ls2; do r=""; for n in 68 64 60 56 48; do
    r="$r $(GDN_CUDA_PREP_CTAS=$n timeout 60 "$L/$l/bench_cuda" --one $1 $2 --chunked 2>&1 | grep -oE "median +[0-9]+\.[0-9]+" | grep -oE "[0-9.]+$")"; done
    echo "B=$1 T=$2 $l: $r"; done; done
echo "== gdn bench: base / ls2 / lso (median, rel_err)"
for c in "1 512" "1 4096" "1 32768" "64 4096"; do
  r=""; for l in base ls2 lso; do set -- $c
    r="$r | $(timeout 60 "$L/$l/gdn" bench --backend cuda --algo chunked --B $1 --T $2 2>&1 | awk '/^prefill/ {print $4, $10}')"; done
  echo "$c: $r"; done
