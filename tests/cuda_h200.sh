#!/usr/bin/env bash
# tests/cuda_h200.sh — one call on a GPU machine (the `device` tool's H200): the CUDA tests, the
# timings of docs/PERF.md "CUDA, H200" (and fla's fused_recurrent beside them when its sources are
# carried in .fla/), then compute-sanitizer memcheck and racecheck on a short test run. The tests
# and the sanitizers also run with GDN_CUDA_CHUNK=1 (the chunk kernel on every multi-token case) and
# GDN_CUDA_FAST=1 (the fast path, src/cuda/fast.cuh, on every call that qualifies); the tests once
# more with GDN_CUDA_FAST=0 (the general kernels on the fast path's shapes).
# Usage: tests/cuda_h200.sh BIN_DIR   (BIN_DIR holds test_cuda and bench_cuda); logs go to $OUT
# (few files: tests.log, bench.log, sanitize.log, sass.txt, ncu.log).
# GDN_TEST_MODES, GDN_SAN_MODES: the environment settings the tests and the sanitizers run under, one word
# each, commas between several settings ("-" = the defaults; default "- GDN_CUDA_CHUNK=1
# GDN_CUDA_CHUNK=1,GDN_CUDA_CHUNK_SPLIT=0 GDN_CUDA_FAST=1 GDN_CUDA_FAST=1,GDN_CUDA_FAST_J=8
# GDN_CUDA_FAST=1,GDN_CUDA_FAST_LPR=2 GDN_CUDA_FAST=1,GDN_CUDA_L2_KEEP=1
# GDN_CUDA_FAST=1,GDN_CUDA_FAST_LPR=2,GDN_CUDA_FAST_TAIL=3,GDN_CUDA_FAST_FRONT=5 GDN_CUDA_FAST=1,GDN_CUDA_FAST_LPR=4
# GDN_CUDA_FAST=0", the last left out
# of the sanitizer runs; GDN_CUDA_L2_KEEP=1: the fast path's pre-wait prefetch evict-last at every call, not only where
# the call's state outgrows L2; GDN_CUDA_FAST_TAIL=3, GDN_CUDA_FAST_FRONT=5: the pairs kernel's last 3 and first 5 heads
# at half the tiles per CTA in every call of D = 128 it takes at 2 or more tiles per CTA, not only from three waves;
# GDN_CUDA_FAST_LPR=2: every multi-token call of D = 128 / 256 on fast_pairs_kernel, =4: on its grid of contiguous
# tile ranges (D = 128; its persistent grid at D = 256); GDN_CUDA_CHUNK_SPLIT=0: the
# one-pass chunked kernel, chunk_tc_kernel, where the two passes of chunked_split.cuh run by default).
# GDN_BENCH_ARGS: bench_cuda's arguments (default --rpt-sweep); GDN_BENCH_KERNELS=1: the multi-token cases
# on both kernels (GDN_CUDA_CHUNK=0 and 1); GDN_TESTS=0, GDN_SAN=0, GDN_NCU=0, GDN_SASS=0, GDN_FLA=0 leave
# those steps out.
set -u
BIN=${1:-build/tests}
OUT=${OUT:-/tmp/gdn-cuda-out}
mkdir -p "$OUT"
TL="$OUT/tests.log" BL="$OUT/bench.log" SL="$OUT/sanitize.log"
nvidia-smi > "$TL" 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv
if [ "${GDN_TESTS:-1}" = 1 ]; then
  for mode in ${GDN_TEST_MODES-- GDN_CUDA_CHUNK=1 GDN_CUDA_CHUNK=1,GDN_CUDA_CHUNK_SPLIT=0 GDN_CUDA_FAST=1 GDN_CUDA_FAST=1,GDN_CUDA_FAST_J=8 GDN_CUDA_FAST=1,GDN_CUDA_FAST_LPR=2 GDN_CUDA_FAST=1,GDN_CUDA_L2_KEEP=1 GDN_CUDA_FAST=1,GDN_CUDA_FAST_LPR=2,GDN_CUDA_FAST_TAIL=3,GDN_CUDA_FAST_FRONT=5 GDN_CUDA_FAST=1,GDN_CUDA_FAST_LPR=4 GDN_CUDA_FAST=0}; do
    [ "$mode" = - ] && mode=""
    echo "== test_cuda ${mode:-(defaults)}" >> "$TL"
    env ${mode//,/ } timeout 240 "$BIN/test_cuda" $([ -n "$mode" ] && echo quick) > "$OUT/t.log" 2>&1
    rc=$?
    cat "$OUT/t.log" >> "$TL"
    echo "test_cuda ${mode:-(defaults)} rc=$rc"
    grep -E "^(FAIL|PASS|suite|matrix|large|contexts|worst|skipped)" "$OUT/t.log" | head -20
  done
  rm -f "$OUT/t.log"
fi
nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw --format=csv,noheader -lms 500 > "$OUT/clocks.log" 2>&1 &
CLK=$!
timeout 300 "$BIN/bench_cuda" ${GDN_BENCH_ARGS---rpt-sweep} > "$BL" 2>&1
echo "bench_cuda rc=$?"
kill $CLK 2>/dev/null
echo "SM clock during bench_cuda (MHz, every 0.5 s): $(cut -d, -f1 "$OUT/clocks.log" | tr -d ' MHz' | sort -n | uniq -c | sort -rn | head -5 | tr '\n' ' ')"
cat "$BL"
if [ "${GDN_BENCH_KERNELS:-0}" = 1 ]; then # each multi-token case on both kernels (30 replays each)
  for c in 0 1; do
    echo "== bench_cuda --quick GDN_CUDA_CHUNK=$c" >> "$BL"
    GDN_CUDA_CHUNK=$c timeout 100 "$BIN/bench_cuda" --quick > "$OUT/b.log" 2>&1
    echo "bench_cuda --quick GDN_CUDA_CHUNK=$c rc=$?"
    cat "$OUT/b.log" >> "$BL"
    grep -E "^(verify|prefill)" "$OUT/b.log"
  done
  rm -f "$OUT/b.log"
fi
if [ -f .fla/bench_fla.py ] && [ "${GDN_FLA:-1}" = 1 ]; then
  echo "== fla" >> "$BL"
  PYTHONUNBUFFERED=1 timeout 150 python3 .fla/bench_fla.py > "$OUT/f.log" 2>&1
  echo "bench_fla rc=$?"
  cat "$OUT/f.log" >> "$BL"
  grep -v "Warning\|warn" "$OUT/f.log" | tail -n 12
  rm -f "$OUT/f.log"
fi
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1)
if [ -n "$NCU" ] && [ "${GDN_NCU:-1}" = 1 ]; then
  # decode B=64 (bandwidth), decode B=1 (latency), prefill T=64 (token loop): where the time goes
  for c in "64 1 4" "1 1 4" "1 64 2"; do
    set -- $c
    echo "== ncu: bench_cuda --one $1 $2 (kernel launch $3)" >> "$OUT/ncu.log"
    timeout 60 "$NCU" --clock-control none -k regex:"recurrent_kernel|fast" -s "$3" -c 1 --section SpeedOfLight \
      --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats \
      --section SourceCounters --section MemoryWorkloadAnalysis "$BIN/bench_cuda" --one "$1" "$2" \
      >> "$OUT/ncu.log" 2>&1
    echo "ncu $1 $2 rc=$?"
  done
  grep -E "^== ncu|DRAM Throughput|Duration|Achieved Occupancy|Registers Per|Stall|Warp Cycles Per Issued" "$OUT/ncu.log" | head -40
fi
OBJ=$(command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump 2>/dev/null | head -n 1)
if [ -n "$OBJ" ] && [ "${GDN_SASS:-1}" = 1 ]; then
  # the fast kernels of the Qwen layer (D = 128, 16 lanes per row, bf16; T = 1 and T <= 8), then the
  # decode kernel: size, 64-bit multiplies, local memory
  "$OBJ" -sass "$BIN/bench_cuda" 2>/dev/null | awk '/Function : /{p=0} /Function : .*fast_kernelILi128ELi16ELb1ELi1E/{p=1} /Function : .*fast1_kernelILi128ELi16ELi1E/{p=1} /Function : .*recurrent_kernelILi4ELi1ELb1ELb0ELb0E/{p=1} p' > "$OUT/sass.txt"
  awk '/Function : /{if (f) printf "%s: %d instructions, %d IMAD.WIDE, %d LDL/STL, %d SHFL, %d BRA\n", f, n, w, l, s, b; f=$3; n=w=l=s=b=0}
       /\/\*[0-9a-f]+\*\//{n++} /IMAD.WIDE/{w++} /LDL|STL/{l++} /SHFL/{s++} /BRA/{b++}
       END{if (f) printf "%s: %d instructions, %d IMAD.WIDE, %d LDL/STL, %d SHFL, %d BRA\n", f, n, w, l, s, b}' "$OUT/sass.txt"
fi
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
if [ -n "$CS" ] && [ "${GDN_SAN:-1}" = 1 ]; then
  for mode in ${GDN_SAN_MODES-- GDN_CUDA_CHUNK=1 GDN_CUDA_CHUNK=1,GDN_CUDA_CHUNK_SPLIT=0 GDN_CUDA_FAST=1 GDN_CUDA_FAST=1,GDN_CUDA_FAST_J=8 GDN_CUDA_FAST=1,GDN_CUDA_FAST_LPR=2 GDN_CUDA_FAST=1,GDN_CUDA_L2_KEEP=1 GDN_CUDA_FAST=1,GDN_CUDA_FAST_LPR=2,GDN_CUDA_FAST_TAIL=3,GDN_CUDA_FAST_FRONT=5}; do
    [ "$mode" = - ] && mode=""
    for tool in memcheck racecheck; do
      echo "== $tool ${mode:-(defaults)}" >> "$SL"
      env ${mode//,/ } timeout 150 "$CS" --tool $tool --error-exitcode 3 "$BIN/test_cuda" sanitize > "$OUT/s.log" 2>&1
      rc=$?
      cat "$OUT/s.log" >> "$SL"
      echo "$tool ${mode:-(defaults)} rc=$rc: $(tail -n 1 "$OUT/s.log")"
    done
  done
  rm -f "$OUT/s.log"
fi
