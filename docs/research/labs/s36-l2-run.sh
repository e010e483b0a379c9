#!/bin/bash
# session 36: gdn bench with q, k L2-normalised in the kernel (the new default) against --no-qk-l2norm (the old bench convention); carry build/gdn (a Release build of 95a675b)
set -u
G=build/gdn
$G bench --backend cuda > $OUT/suite.txt 2>&1; echo "suite rc=$?"; cat $OUT/suite.txt | grep -E "^(op|decode|verify|prefill|gdn bench|device)"
for r in 1 2; do
  for c in "1 1" "64 1" "256 1" "1 4" "64 4"; do set -- $c
    a=$(timeout 60 $G bench --backend cuda --B $1 --T $2 2>&1 | awk '/^(decode|prefill|verify) +[0-9]/ {print $4, $10}')
    b=$(timeout 60 $G bench --backend cuda --B $1 --T $2 --no-qk-l2norm 2>&1 | awk '/^(decode|prefill|verify) +[0-9]/ {print $4, $10}')
    echo "B=$1 T=$2 r$r: l2norm $a | no-l2norm $b"; done
  a=$(timeout 60 $G bench --backend cuda --B 64 --T 4 --capture 2>&1 | awk '/^verify +[0-9]/ {print $4, $10}')
  b=$(timeout 60 $G bench --backend cuda --B 64 --T 4 --capture --no-qk-l2norm 2>&1 | awk '/^verify +[0-9]/ {print $4, $10}')
  echo "B=64 T=4 capture r$r: l2norm $a | no-l2norm $b"
done
for c in "1 512" "1 4096" "1 32768" "8 4096" "64 4096"; do set -- $c
  a=$(timeout 60 $G bench --backend cuda --algo chunked --B $1 --T $2 2>&1 | awk '/^prefill +[0-9]/ {print $4, $10}')
  b=$(timeout 60 $G bench --backend cuda --algo chunked --B $1 --T $2 --no-qk-l2norm 2>&1 | awk '/^prefill +[0-9]/ {print $4, $10}')
  echo "chunked B=$1 T=$2: l2norm $a | no-l2norm $b"; done
$G bench --backend cuda --json --B 2 --T 1 --Hk 1 --Hv 2 --Dk 16 --Dv 16 --reps 3 | head -2
$G bench --backend cuda --json --B 2 --T 5 --capture --Hk 1 --Hv 3 --Dk 32 --Dv 16 --reps 3 --no-qk-l2norm | head -2
