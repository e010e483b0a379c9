#!/bin/bash
# Session 32's labs for the next session (s32-prep-ndi-and-beside.patch on c044ee7 / 15123e9), built, not run. Session
# 32 found that at B=1 the overlapped prep's rate paces the state pass (GDN_CUDA_PREP_CTAS 68 -> 64: T=32768 715 ->
# 754 us, nearly in proportion), so these make the prep's items shorter or put more of them in flight:
#   ndi  = -DGDN_LAB_NDI=1: in the persistent prep, the rows' sums of squares from diagonal tiles (K K^T's own
#          tile; Q Q^T's tile (mt, mt) made inside the products' loop, its mma chain beside theirs) instead of 16
#          FMA-path instructions a k-step in every warp (session 32's nd made Q Q^T after the loop: slower);
#   ndilf = ndi with s31-state-pass-cf-and-fence.patch -DGDN_LAB_LF=1 (lf took 2 us off the state pass alone);
#   bes  = -DGDN_LAB_BESIDE=1: GDN_CUDA_PREP_OVERLAP=4 (state pass first, the per-item prep as its dependent)
#          without the shared-memory padding that keeps a prep CTA off a state CTA's SM, so one prep item runs
#          beside each state CTA (registers 40960 + 20480, shared memory about 152 + 41 KB): 268 items in flight
#          instead of 136, at the cost of issue slots on the state pass's SMs. Measurement only (CUDA does not
#          promise the dependent runs beside the state pass; under memcheck it did not finish, session 27).
# Build (Release build in build/; about 4 minutes each, two at once):
#   docs/research/labs/lab_build.sh base "" ""
#   docs/research/labs/lab_build.sh ndi s32-prep-ndi-and-beside.patch -DGDN_LAB_NDI=1
#   docs/research/labs/lab_build.sh ndilf "s32-prep-ndi-and-beside.patch s31-state-pass-cf-and-fence.patch" "-DGDN_LAB_NDI=1 -DGDN_LAB_LF=1"
#   docs/research/labs/lab_build.sh bes s32-prep-ndi-and-beside.patch -DGDN_LAB_BESIDE=1
#   for l in base ndi ndilf bes; do mkdir -p /tmp/pk/$l && cp /tmp/labs/$l/{gdn,bench_cuda,test_cuda} /tmp/pk/$l/ &&
#       tar -C /tmp/pk -cJf .cubin/$l.txz $l; done
# Built and packed in session 32 (.cubin/{base,ndi,ndilf,bes}.txz, base = e915597's tree): ptxas, ndi's persistent prep
# 127-128 registers, no spills (the per-item kernels as base's); ndilf's state pass at most 250, no spills.
# Then on the device (carry .cubin): bash docs/research/labs/s32-next-run.sh   (about 7 minutes; logs under $OUT)
set -u
L=/tmp/L; mkdir -p "$L"; for l in base ndi ndilf bes; do tar -C "$L" -xJf .cubin/$l.txz; done
for l in ndi ndilf; do echo "== $l test_cuda rs"; timeout 60 $L/$l/test_cuda rs > "$OUT/${l}_rs.log" 2>&1; echo "rc=$?"
  grep -E "FAIL|^PASS" "$OUT/${l}_rs.log" | tail -3; grep "T=4096" "$OUT/${l}_rs.log" | head -2; done
echo "== bes test_cuda rs, GDN_CUDA_PREP_OVERLAP=4"
GDN_CUDA_PREP_OVERLAP=4 timeout 90 $L/bes/test_cuda rs > "$OUT/bes_rs.log" 2>&1; echo "rc=$?"
grep -E "FAIL|^PASS" "$OUT/bes_rs.log" | tail -3
echo "== bench_cuda --one B T --chunked: base ndi ndilf, two rounds"
for c in "1 512" "1 4096" "1 32768" "64 4096"; do set -- $c
  r=""; for l in base ndi ndilf base ndi ndilf; do
    r="$r $(timeout 60 "$L/$l/bench_cuda" --one $1 $2 --chunked 2>&1 | grep -oE "median +[0-9]+\.[0-9]+" | grep -oE "[0-9.]+$")"; done
  echo "B=$1 T=$2: $r"; done
echo "== GDN_CUDA_PREP_OVERLAP=4: base (padded) / bes (beside), two rounds; then the default order of each"
for c in "1 2048" "1 4096" "1 32768"; do set -- $c
  r=""; for l in base bes base bes; do
    r="$r $(GDN_CUDA_PREP_OVERLAP=4 timeout 60 "$L/$l/bench_cuda" --one $1 $2 --chunked 2>&1 | grep -oE "median +[0-9]+\.[0-9]+" | grep -oE "[0-9.]+$")"; done
  echo "B=$1 T=$2 (=4): $r | default: $(timeout 60 "$L/bes/bench_cuda" --one $1 $2 --chunked 2>&1 | grep -oE "median +[0-9]+\.[0-9]+" | grep -oE "[0-9.]+$")"; done
echo "== gdn bench: base / ndi / ndilf (median, rel_err)"
for c in "1 512" "1 4096" "1 32768" "64 4096"; do
  r=""; for l in base ndi ndilf; do set -- $c
    r="$r | $(timeout 60 "$L/$l/gdn" bench --backend cuda --algo chunked --B $1 --T $2 2>&1 | awk '/^prefill/ {print $4, $10}')"; done
  echo "$c: $r"; done
echo "== ndi quick"; timeout 130 $L/ndi/test_cuda quick > "$OUT/ndi_quick.log" 2>&1; echo "rc=$?"
grep -E "FAIL|^PASS" "$OUT/ndi_quick.log" | tail -3
