#!/bin/bash
# main's kernels and fla beside them in one device command (session 36; carry .cubin and .fla). base.txz: lab_build.sh base "" "" packed as in s35-next-run.sh's header; .fla/fla: fla's package (git archive of flash-linear-attention's fla/, bc3b101d in session 36), never committed
set -u
L=/tmp/L; mkdir -p $L; tar -C $L -xJf .cubin/base.txz
G=$L/base/gdn
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
python3 -c "import triton, torch; print('triton', triton.__version__, 'torch', torch.__version__)"
for r in 1; do
  for c in "1 1" "64 1" "256 1" "1 4" "64 4"; do set -- $c
    echo "gdn B=$1 T=$2 r$r: $(timeout 60 $G bench --backend cuda --B $1 --T $2 2>&1 | awk '/^(decode|prefill|verify)/ {print $4, $10}')"; done
  echo "gdn B=64 T=4 capture r$r: $(timeout 60 $G bench --backend cuda --B 64 --T 4 --capture 2>&1 | awk '/^(decode|prefill|verify)/ {print $4, $10}')"
  for c in "1 512" "1 4096" "1 32768" "8 4096" "64 4096"; do set -- $c
    echo "gdn chunked B=$1 T=$2 r$r: $(timeout 60 $G bench --backend cuda --algo chunked --B $1 --T $2 2>&1 | awk '/^prefill/ {print $4, $10}')"; done
done
timeout 330 python3 docs/research/labs/s36-bench-fla.py 2>&1 | grep -v Warning | tee $OUT/fla.log
timeout 60 $G bench --backend cuda --B 1 --T 512 --algo chunked > $OUT/gdn_full.txt 2>&1
