#!/bin/bash
# Session 34 (device; carry .cubin with base.txz from lab_build.sh base "" "" packed as in s33-next-run.sh):
# gdn bench at B=1 T=512/1024/4096 under the tuning switches (no build), and ncu of each kernel alone.
set -u
L=/tmp/L; mkdir -p $L; tar -C $L -xJf .cubin/base.txz
G=$L/base/gdn
b() { timeout 60 $G bench --backend cuda --algo chunked --B $1 --T $2 2>&1 | awk '/^prefill/ {print $4, $10}'; }
for T in 512 1024 4096; do
 echo "T=$T default: $(b 1 $T) | ovl0: $(GDN_CUDA_PREP_OVERLAP=0 b 1 $T) | ovl2: $(GDN_CUDA_PREP_OVERLAP=2 b 1 $T) | wg32: $(GDN_CUDA_CHUNK_SPLIT=2 GDN_CUDA_WG_RT=32 b 1 $T) | wg64: $(GDN_CUDA_CHUNK_SPLIT=2 GDN_CUDA_WG_RT=64 b 1 $T)"
done
for v in "" "GDN_CUDA_CHUNK_SPLIT=2 GDN_CUDA_WG_RT=32" "GDN_CUDA_PREP_OVERLAP=0"; do for T in 512 4096; do
 echo "== ncu $v T=$T"
 env $v ncu --clock-control none --cache-control none --metrics gpu__time_duration.sum,sm__inst_executed.sum -k regex:chunk_split $G bench --backend cuda --algo chunked --B 1 --T $T --reps 2 2>&1 | grep -E "chunk_split|duration|inst_exec" | sed 's/  */ /g' | tail -8
done; done
