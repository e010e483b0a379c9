#!/usr/bin/env bash
# tests/cuda_h200.sh — one call on a GPU machine (the `device` tool's H200): the CUDA tests, the
# timings of docs/PERF.md "CUDA, H200" (and fla's fused_recurrent beside them when its sources are
# carried in .fla/), then compute-sanitizer memcheck and racecheck on a short test run; the tests and the
# sanitizers run a second time with GDN_CUDA_CHUNK=1 (the chunk kernel on every multi-token case).
# Usage: tests/cuda_h200.sh BIN_DIR   (BIN_DIR holds test_cuda and bench_cuda); logs go to $OUT.
# GDN_BENCH_ARGS: bench_cuda's arguments (default --rpt-sweep); GDN_BENCH_KERNELS=1: the multi-token cases
# on both kernels (GDN_CUDA_CHUNK=0 and 1); GDN_NCU=0, GDN_SASS=0, GDN_FLA=0 leave those steps out.
set -u
BIN=${1:-build/tests}
OUT=${OUT:-/tmp/gdn-cuda-out}
mkdir -p "$OUT"
nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv
timeout 240 "$BIN/test_cuda" > "$OUT/test_cuda.log" 2>&1
echo "test_cuda rc=$?"
grep -E "^(FAIL|PASS|suite|matrix|large|contexts|worst|device|skipped)" "$OUT/test_cuda.log" | head -40
# the chunk kernel (block items) on every multi-token case, capture included (by default it runs
# only without capture at larger batch, so the small cases of the suite would not reach it)
GDN_CUDA_CHUNK=1 timeout 120 "$BIN/test_cuda" > "$OUT/test_cuda_chunk.log" 2>&1
echo "test_cuda (GDN_CUDA_CHUNK=1) rc=$?"
grep -E "^(FAIL|PASS)" "$OUT/test_cuda_chunk.log" | head -20
if [ -n "${GDN_TEST_RPT:-}" ]; then # the same tests on another rows-per-lane variant
  GDN_CUDA_RPT=$GDN_TEST_RPT timeout 120 "$BIN/test_cuda" quick > "$OUT/test_cuda_rpt.log" 2>&1
  echo "test_cuda (GDN_CUDA_RPT=$GDN_TEST_RPT) rc=$?"
  grep -E "^(FAIL|PASS)" "$OUT/test_cuda_rpt.log" | head -20
fi
timeout 200 "$BIN/bench_cuda" ${GDN_BENCH_ARGS---rpt-sweep} > "$OUT/bench_cuda.log" 2>&1
echo "bench_cuda rc=$?"
cat "$OUT/bench_cuda.log"
if [ "${GDN_BENCH_KERNELS:-0}" = 1 ]; then # each multi-token case on both kernels (30 replays each)
  for c in 0 1; do
    GDN_CUDA_CHUNK=$c timeout 100 "$BIN/bench_cuda" --quick > "$OUT/bench_chunk$c.log" 2>&1
    echo "bench_cuda --quick GDN_CUDA_CHUNK=$c rc=$?"
    grep -E "^(verify|prefill)" "$OUT/bench_chunk$c.log"
  done
fi
if [ -f .fla/bench_fla.py ] && [ "${GDN_FLA:-1}" = 1 ]; then
  PYTHONUNBUFFERED=1 timeout 120 python3 .fla/bench_fla.py > "$OUT/bench_fla.log" 2>&1
  echo "bench_fla rc=$?"
  grep -v "Warning\|warn" "$OUT/bench_fla.log" | tail -n 12
fi
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1)
if [ -n "$NCU" ] && [ "${GDN_NCU:-1}" = 1 ]; then
  # decode B=64 (bandwidth), decode B=1 (latency), prefill T=64 (token loop): where the time goes
  for c in "64 1 4" "1 1 4" "1 64 2"; do
    set -- $c
    echo "== ncu: bench_cuda --one $1 $2 (kernel launch $3)" >> "$OUT/ncu.log"
    timeout 60 "$NCU" --clock-control none -k regex:recurrent_kernel -s "$3" -c 1 --section SpeedOfLight \
      --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats \
      --section SourceCounters --section MemoryWorkloadAnalysis "$BIN/bench_cuda" --one "$1" "$2" \
      >> "$OUT/ncu.log" 2>&1
    echo "ncu $1 $2 rc=$?"
  done
  grep -E "^== ncu|DRAM Throughput|Duration|Achieved Occupancy|Registers Per|Stall|Warp Cycles Per Issued" "$OUT/ncu.log" | head -40
fi
OBJ=$(command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump 2>/dev/null | head -n 1)
[ -n "$OBJ" ] && [ "${GDN_SASS:-1}" = 1 ] && "$OBJ" -sass "$BIN/bench_cuda" 2>/dev/null | awk '/Function : .*recurrent_kernelILi4ELi[12]ELb1/{p=1} /Function : .*recurrent_kernelILi4ELi[12]ELb0/{p=0} /Function : .*check_kernel/{p=0} p' > "$OUT/sass.txt"
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
if [ -n "$CS" ]; then
  timeout 150 "$CS" --tool memcheck --error-exitcode 3 "$BIN/test_cuda" sanitize > "$OUT/memcheck.log" 2>&1
  echo "memcheck rc=$?"
  tail -n 4 "$OUT/memcheck.log"
  timeout 100 "$CS" --tool racecheck --error-exitcode 3 "$BIN/test_cuda" sanitize > "$OUT/racecheck.log" 2>&1
  echo "racecheck rc=$?"
  tail -n 4 "$OUT/racecheck.log"
  for tool in memcheck racecheck; do # the chunk kernel on every multi-token case
    GDN_CUDA_CHUNK=1 timeout 120 "$CS" --tool $tool --error-exitcode 3 "$BIN/test_cuda" sanitize \
      > "$OUT/${tool}_chunk.log" 2>&1
    echo "$tool (GDN_CUDA_CHUNK=1) rc=$?"
    tail -n 2 "$OUT/${tool}_chunk.log"
  done
fi
