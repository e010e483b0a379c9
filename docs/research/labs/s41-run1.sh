#!/bin/bash
# Session 41, run 1: verify without staging (pd: fast_pairs_direct_kernel, forced by GDN_CUDA_FAST_LPR=4; J by
# GDN_CUDA_FAST_J) against main's fast_pairs_kernel (m41 = main at 809d213's kernels); correctness of pd on the
# test suite; the DRAM bytes of an overlapped B=1 chunked call (ncu, the first 8 graphs; s41-next-run.sh's question).
set -u
L=/tmp/L; mkdir -p "$L"; tar -C "$L" -xJf .cubin/m41.txz; tar -C "$L" -xJf .cubin/pd.txz
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw --format=csv
med() { grep -oE "median +[0-9]+\.[0-9]+" | grep -oE "[0-9.]+$"; }
echo "== pd test_cuda rs: LPR=4 (J=1), LPR=4 J=2"
GDN_CUDA_FAST_LPR=4 timeout 120 "$L/pd/test_cuda" rs 2>&1 | tail -n 2
GDN_CUDA_FAST_LPR=4 GDN_CUDA_FAST_J=2 timeout 120 "$L/pd/test_cuda" rs 2>&1 | tail -n 2
echo "== bench_cuda --one B T: m41 | pd LPR=4 J=1 | pd LPR=4 J=2 | pd default (= main's routing), three rounds"
for BT in "64 1" "16 4" "32 4" "64 4" "128 4" "256 4" "64 2" "64 8" "8 4"; do
  r=""; for x in 1 2 3; do
    r="$r $(timeout 60 "$L/m41/bench_cuda" --one $BT 2>&1 | med)"
    r="$r $(GDN_CUDA_FAST_LPR=4 timeout 60 "$L/pd/bench_cuda" --one $BT 2>&1 | med)"
    r="$r $(GDN_CUDA_FAST_LPR=4 GDN_CUDA_FAST_J=2 timeout 60 "$L/pd/bench_cuda" --one $BT 2>&1 | med)"
    r="$r $(timeout 60 "$L/pd/bench_cuda" --one $BT 2>&1 | med) |"; done
  echo "B T=$BT: $r"; done
echo "== gdn bench verify B=64 T=4 (checked): m41, pd LPR=4, pd LPR=4 J=2"
for e in "m41 -" "pd GDN_CUDA_FAST_LPR=4" "pd GDN_CUDA_FAST_LPR=4,GDN_CUDA_FAST_J=2"; do set -- $e
  env $(echo $2 | tr ',' ' ' | sed 's/^-$//') timeout 120 "$L/$1/gdn" bench --backend cuda --json --B 64 --T 4 2>/dev/null | grep -oE '"(median_us|rel_err|pct_mem_bw)":[^,}]*' | tr '\n' ' '; echo " ($e)"; done
echo "== pd test_cuda quick, LPR=4"
GDN_CUDA_FAST_LPR=4 timeout 200 "$L/pd/test_cuda" quick 2>&1 | tail -n 2
echo "== ncu: DRAM bytes of the first 8 graphs, m41 B=1 T=4096 --chunked"
timeout 200 ncu --graph-profiling graph -c 8 --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum \
  "$L/m41/bench_cuda" --one 1 4096 --chunked 2>&1 | grep -E "dram__bytes|gpu__time|==PROF==|rror" | tr -s ' ' | head -40
nvidia-smi --query-gpu=clocks.sm,power.draw --format=csv
