#!/bin/bash
# Build a lab: recurrent.cu of a patched copy of the tree, linked into gdn, bench_cuda and test_cuda with the
# other objects of an existing Release build in build/ (cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && cmake
# --build build -j 2). About 2.5 minutes on the 2-core machine; two at once are fine.
#   docs/research/labs/lab_build.sh NAME "PATCH ..." "NVCC_DEFINES"
#   e.g. lab_build.sh nsq s25-state-pass-outputs-one-chain.patch -DGDN_LAB_NSQ=1
# Out: /tmp/labs/NAME/{ptxas.log (ptxas -v: registers, spills, C7517/C7518), gdn, bench_cuda, test_cuda}.
set -e
N=$1; PATCHES=$2; DEFS=$3
R=$(cd "$(dirname "$0")/../../.." && pwd); B=$R/build; L=/tmp/labs/$N
rm -rf "$L"; mkdir -p "$L"; cp -r "$R/src" "$R/include" "$L/"
for p in $PATCHES; do (cd "$L" && patch -p1 -s < "$R/docs/research/labs/$p"); done
# only recurrent.cu is rebuilt: a change to what the other CUDA objects also read (the kernel parameters, the
# backend's interface) would leave them with the old layout (session 28: every call ran wrong)
for h in src/cuda/params.cuh src/cuda/cuda_backend.h; do
    cmp -s "$R/$h" "$L/$h" || { echo "lab_build: $h differs from the tree's; only recurrent.cu is rebuilt" >&2; exit 1; }
done
nvcc -DGDN_BUILDING -I"$L/include" -I"$L/src" -O3 -DNDEBUG -Xcompiler=-fPIC -gencode=arch=compute_90a,code=sm_90a \
    -Xcompiler=-fvisibility=hidden -Xcompiler=-fno-exceptions -Xcompiler=-fno-threadsafe-statics -std=c++17 $DEFS \
    -Xptxas -v -c "$L/src/cuda/recurrent.cu" -o "$L/recurrent.cu.o" > "$L/ptxas.log" 2>&1
cp "$B/libgdn_internal.a" "$L/lib.a"; (cd "$L" && ar r lib.a recurrent.cu.o)
link() { # directory of the target's CMakeFiles, target, output
    (cd "$1" && sed "s#[^ ]*libgdn_internal.a#$L/lib.a#" "CMakeFiles/$2.dir/linkLibs.rsp" > "$L/$2.rsp" &&
     sed -e "s# -o [^ ]*# -o $3#" -e "s#@CMakeFiles/$2.dir/linkLibs.rsp#@$L/$2.rsp#" "CMakeFiles/$2.dir/link.txt" > "$L/link_$2.sh" &&
     bash "$L/link_$2.sh")
}
link "$B" gdn_tool "$L/gdn"
link "$B/tests" bench_cuda "$L/bench_cuda"
link "$B/tests" test_cuda "$L/test_cuda"
grep -E "Used [0-9]+ registers|spill|C751" "$L/ptxas.log" | sort | uniq -c | sort -rn | head -12
echo "$N: $L"
