#!/bin/bash
# Session 34's lab for the next session (built and compile-checked here, not run: the device time was spent):
# s34-wgmma-issue.cu, what one warpgroup's wgmma issue costs (see its header). Session 33's phase trace put every
# wgmma of the B=1 state pass at 19-21 cycles of issue whatever its N; if a form without the per-product R2UR and
# setp issues faster, D^T's wait and S' move up by up to about 200 cycles of the chunk's 2400 (docs/PERF.md,
# session 34). On the device (no carry needed; about 1 minute):
#   bash docs/research/labs/s34-next-run.sh
set -u
B=$OUT/wgmma_issue
nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Xptxas -v -o $B docs/research/labs/s34-wgmma-issue.cu \
    > $OUT/ptxas.log 2>&1 || { echo "build failed"; tail -20 $OUT/ptxas.log; exit 1; }
$B
cuobjdump -sass $B > $OUT/sass.txt 2>&1
for m in 0 1 2 3 4 5 6; do
  awk -v f="issue_kernelILi${m}E" '/Function :/ {on = index($0, f) > 0} on' $OUT/sass.txt > $OUT/sass_$m.txt
  echo "mode $m SASS: $(grep -c HGMMA $OUT/sass_$m.txt) HGMMA, $(grep -c R2UR $OUT/sass_$m.txt) R2UR, $(grep -c ISETP $OUT/sass_$m.txt) ISETP, $(grep -c UIADD3 $OUT/sass_$m.txt) UIADD3, $(grep -cE '^ +/\*[0-9a-f]+\*/' $OUT/sass_$m.txt) instructions"
done
