#!/bin/bash
# Session 41, run 5: decode's drain. At J = 2 a decode CTA streams 32 KiB and the grid's last wave drains over about
# one CTA's life; s41-decode-tail-one-tile.patch runs the last GDN_LAB_DTAIL sequences at one tile per CTA (J = 1,
# half the bytes a CTA) on a 1-D grid: dt4, dt8, dt16; dt0 = the 1-D grid with none at J = 1; m41 = main.
set -u
L=/tmp/L; mkdir -p $L; tar -C $L -xJf .cubin/m41.txz; tar -C $L -xJf .cubin/dt.txz
f() { grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv | tail -1
for l in dt0 dt4 dt8 dt16; do echo "== $l test_cuda rs: $(timeout 120 $L/$l/test_cuda rs 2>&1 | tail -n 1); J=2 forced: $(GDN_CUDA_FAST_J=2 timeout 120 $L/$l/test_cuda rs 2>&1 | tail -n 1)"; done
for r in 1 2; do for B in 64 128 256; do
  line="decode B=$B r$r:"
  for l in m41 dt0 dt4 dt8 dt16; do
    j=$(timeout 90 $L/$l/gdn bench --backend cuda --json --B $B --T 1 2>/dev/null)
    line="$line $l $(echo "$j" | f median_us) ($(echo "$j" | f pct_mem_bw) $(echo "$j" | f ok))"
  done; echo "$line"; done; done
echo "== dt4 test_cuda quick, J=2 forced: $(GDN_CUDA_FAST_J=2 timeout 200 $L/dt4/test_cuda quick 2>&1 | tail -n 1)"
