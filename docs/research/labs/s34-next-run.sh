#!/bin/bash
# Session 34's labs for the next session (built and compile-checked here, not run: the device time was spent).
#   1. s34-wgmma-issue.cu: one warpgroup's wgmma issue cycles by descriptor and scale-d form (see its header).
#      Session 33's phase trace put every wgmma of the B=1 state pass at 19-21 cycles of issue whatever its N; if a
#      form without the per-product R2UR issues faster, D^T's wait and S' move up by up to about 200 cycles of the
#      chunk's 2400 (docs/PERF.md, session 34).
#   2. us = s34-state-pass-stage-unrolled.patch -DGDN_LAB_US=1: the two-stage state pass's body once per stage (its
#      buffer a constant, so each descriptor is the base plus constants): 246 / 244 registers against base's 250 /
#      248, no spills, no C7518. Its rs test, its times against base, and both kernels' SASS counts.
#   3. f1 = s34-prep-first-chunk-per-head.patch -DGDN_LAB_F1=1: chunk 0's overlapped prep items one per value head
#      (the shared items' code as before: the persistent prep 128 registers, no spills), to shorten the fill before
#      the state pass's first chunk by about 3 us; usf1 = both. rs tests (default and GDN_CUDA_PREP_OVERLAP=2) and times.
# Build here first (a Release build in build/; about 4 minutes each, two at once):
#   docs/research/labs/lab_build.sh base "" ""
#   docs/research/labs/lab_build.sh us s34-state-pass-stage-unrolled.patch -DGDN_LAB_US=1
#   docs/research/labs/lab_build.sh f1 s34-prep-first-chunk-per-head.patch -DGDN_LAB_F1=1
#   docs/research/labs/lab_build.sh usf1 "s34-state-pass-stage-unrolled.patch s34-prep-first-chunk-per-head.patch" \
#       "-DGDN_LAB_US=1 -DGDN_LAB_F1=1"
#   for l in base us f1 usf1; do mkdir -p /tmp/pk/$l && cp /tmp/labs/$l/{gdn,bench_cuda,test_cuda} /tmp/pk/$l/ &&
#       tar -C /tmp/pk -cJf .cubin/$l.txz $l; done
# Then on the device (carry .cubin; about 5 minutes): bash docs/research/labs/s34-next-run.sh
set -u
W=$OUT/wgmma_issue
if nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Xptxas -v -o $W docs/research/labs/s34-wgmma-issue.cu \
    > $OUT/wgmma_ptxas.log 2>&1; then
  $W
  cuobjdump -sass $W > $OUT/wgmma_sass.txt 2>&1
  for m in 0 1 2 3 4 5 6; do
    awk -v f="issue_kernelILi${m}E" '/Function :/ {on = index($0, f) > 0} on' $OUT/wgmma_sass.txt > $OUT/wgmma_sass_$m.txt
    echo "mode $m SASS: $(grep -c HGMMA $OUT/wgmma_sass_$m.txt) HGMMA, $(grep -c R2UR $OUT/wgmma_sass_$m.txt) R2UR, $(grep -c ISETP $OUT/wgmma_sass_$m.txt) ISETP, $(grep -c UIADD3 $OUT/wgmma_sass_$m.txt) UIADD3"
  done
else
  echo "wgmma_issue: build failed"; tail -5 $OUT/wgmma_ptxas.log
fi
L=/tmp/L; mkdir -p $L; for l in base us f1 usf1; do tar -C $L -xJf .cubin/$l.txz; done
for l in base us; do
  cuobjdump -sass -fun '_Z27chunk_split_state_rs_kernelILi128ELi2ELi1ELi1ELb0EEv15gdn_cuda_params7rs_maps' $L/$l/gdn > $OUT/${l}_rs_sass.txt 2>&1
  echo "$l state pass SASS: $(grep -c HGMMA $OUT/${l}_rs_sass.txt) HGMMA, $(grep -c R2UR $OUT/${l}_rs_sass.txt) R2UR, $(grep -c UIADD3 $OUT/${l}_rs_sass.txt) UIADD3, $(grep -cE '^ +/\*[0-9a-f]+\*/' $OUT/${l}_rs_sass.txt) instructions"
done
for l in us f1 usf1; do for m in 1 2; do echo "== $l test_cuda rs GDN_CUDA_PREP_OVERLAP=$m"
  GDN_CUDA_PREP_OVERLAP=$m timeout 100 $L/$l/test_cuda rs > $OUT/${l}_rs_$m.log 2>&1; echo rc=$?
  grep -E "FAIL|^PASS" $OUT/${l}_rs_$m.log | tail -2; done; done
for c in "1 512" "1 2048" "1 4096" "1 32768" "2 4096"; do set -- $c
  r=""; for l in base us f1 usf1 base us f1 usf1; do r="$r $(timeout 60 $L/$l/bench_cuda --one $1 $2 --chunked 2>&1 | grep -oE "median +[0-9]+\.[0-9]+" | grep -oE "[0-9.]+$")"; done
  echo "bench_cuda B=$1 T=$2 (base us f1 usf1, twice): $r"; done
for c in "1 512" "1 4096" "1 32768"; do set -- $c
  r=""; for l in base us f1 usf1; do r="$r | $(timeout 60 $L/$l/gdn bench --backend cuda --algo chunked --B $1 --T $2 2>&1 | awk '/^prefill/ {print $4, $10}')"; done
  echo "gdn bench B=$1 T=$2 (base us f1 usf1): $r"; done
