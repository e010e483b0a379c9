#!/bin/bash
# Written in session 44 for the next session (built, not run): main 8468198's build (m48; its kernels are 1ef3619's
# but for the persistent prep's review in 8468198) through test_cuda rs, whose new run_chain (calls chained on one stream without synchronization: 4096 tokens and a
# decode as one chunked call against two; 1e-5 agreement, 3 chunked calls overlapped) has not run on a GPU yet, and a
# full test_cuda run. Carry .cubin (m48.txz).
set -u
L=/tmp/L; mkdir -p $L; tar -C $L -xJf .cubin/m48.txz
(nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
timeout 200 $L/m48/test_cuda rs 2>&1 | grep -E "chain|FAIL|PASS"
GDN_CUDA_PREP_OVERLAP=2 timeout 200 $L/m48/test_cuda rs 2>&1 | grep -E "chain|FAIL|PASS"
timeout 400 $L/m48/test_cuda 2>&1 | grep -E "chain|FAIL|PASS|worst"
) 2>&1 | tee $OUT/next.log
