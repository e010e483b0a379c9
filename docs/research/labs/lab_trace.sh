#!/bin/bash
# Build the trace lab (s27-overlap-trace.patch): lab_build.sh with -DGDN_LAB_TRACE=1, then bench_cuda.c compiled
# to call gdn_lab_trace_print after `--one B T --chunked`, linked as bench_trace. Needs a Release build in build/.
#   docs/research/labs/lab_trace.sh NAME ["NVCC_DEFINES" ["MORE_PATCHES"]]
#   e.g. lab_trace.sh tr1g -DSP_GROUPS=1
# TRACE_PATCH, TRACE_DEF: another trace patch and its define (default s27-overlap-trace.patch, -DGDN_LAB_TRACE=1),
#   e.g. TRACE_PATCH=s29-state-pass-phase-trace.patch TRACE_DEF=-DGDN_LAB_RSTRACE=1 lab_trace.sh rst
# Out: /tmp/labs/NAME/bench_trace (and lab_build.sh's gdn, bench_cuda, test_cuda, ptxas.log).
set -e
R=$(cd "$(dirname "$0")/../../.." && pwd); L=/tmp/labs/$1
"$R/docs/research/labs/lab_build.sh" "$1" "${TRACE_PATCH:-s27-overlap-trace.patch} ${3:-}" \
    "${TRACE_DEF:--DGDN_LAB_TRACE=1} ${2:-}"
mkdir -p "$L/tests" && cp "$R/tests/bench_cuda.c" "$L/tests/"
python3 - "$L/tests/bench_cuda.c" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
old = "        const int ok = run(ctx, &one, 20, copy_bw);\n"
assert old in s
s = s.replace(old, old + "        if (chunked)\n            gdn_lab_trace_print();\n", 1)
s = s.replace("static int run(", "void gdn_lab_trace_print(void);\nstatic int run(", 1)
open(p, "w").write(s)
PY
gcc -DGDN_HAVE_CUDA=1 -I"$R/include" -I"$R/src" -isystem /usr/local/cuda/include -O3 -DNDEBUG -fPIE -std=c11 \
    -c "$L/tests/bench_cuda.c" -o "$L/bench_cuda_trace.o"
B=$R/build/tests
sed "s#[^ ]*libgdn_internal.a#$L/lib.a#" "$B/CMakeFiles/bench_cuda.dir/linkLibs.rsp" > "$L/bt.rsp"
objs=$(sed "s#[^ ]*bench_cuda.c.o#$L/bench_cuda_trace.o#" "$B/CMakeFiles/bench_cuda.dir/objects1")
(cd "$B" && g++ $objs -o "$L/bench_trace" @"$L/bt.rsp" -L/usr/local/cuda/targets/x86_64-linux/lib/stubs \
    -L/usr/local/cuda/targets/x86_64-linux/lib)
echo "$1: $L/bench_trace"
