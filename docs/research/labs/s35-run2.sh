#!/bin/bash
# session 35: small-T choices: overlap forced (2) and the prep per key head (SHARE=1) or per value head (0)
L=/tmp/L; mkdir -p $L; tar -C $L -xJf .cubin/early.txz; E=$L/early  # early.txz: gdn, bench_cuda, test_cuda of a Release build of the tree with s35-split-early.patch
export GDN_CUDA_SPLIT_EARLY=0
for T in 256 512 1024; do
  for cfg in "1 -1" "2 -1" "2 1" "2 0" "1 1" "1 0"; do set -- $cfg
    r=""; for rep in 1 2; do
      if [ "$2" = "-1" ]; then r="$r $(GDN_CUDA_PREP_OVERLAP=$1 timeout 60 $E/gdn bench --backend cuda --algo chunked --B 1 --T $T 2>&1 | awk '/^prefill/ {print $4}')";
      else r="$r $(GDN_CUDA_PREP_OVERLAP=$1 GDN_CUDA_PREP_SHARE=$2 timeout 60 $E/gdn bench --backend cuda --algo chunked --B 1 --T $T 2>&1 | awk '/^prefill/ {print $4}')"; fi
    done; echo "T=$T overlap=$1 share=$2: $r"; done; done
