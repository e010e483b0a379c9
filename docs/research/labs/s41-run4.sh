#!/bin/bash
# Session 41, run 4: DRAM bytes of an overlapped B=1 chunked call from nsys's GPU metrics (sampled DRAM read and
# write throughput over the whole process, averaged over the samples inside the kernels' span), with decode B=64
# (known bytes: the state read and written once) as the calibration. Are k, q read from HBM twice at B=1?
set -u
L=/tmp/L; mkdir -p $L; tar -C $L -xJf .cubin/m41.txz
which nsys || ls /usr/local/cuda/bin /opt/nvidia 2>/dev/null | grep -i nsys
NS=$(which nsys 2>/dev/null || ls /usr/local/cuda*/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -1)
echo "nsys: $NS"; $NS --version
prof() { # name, args...
  local n=$1; shift
  timeout 150 $NS profile -t cuda --cuda-graph-trace=node --gpu-metrics-devices=0 --gpu-metrics-frequency=100000 -o /tmp/$n --force-overwrite true \
    "$@" > /tmp/$n.out 2>&1; tail -n 3 /tmp/$n.out
  timeout 120 $NS export --type sqlite -o /tmp/$n.sqlite --force-overwrite true /tmp/$n.nsys-rep > /dev/null 2>&1
  python3 - /tmp/$n.sqlite "$n" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1]); c = db.cursor()
tabs = [r[0] for r in c.execute("select name from sqlite_master where type='table'")]
mt = [t for t in tabs if t.startswith('TARGET_INFO_GPU_METRICS')]
names = {r[0]: r[1] for r in c.execute(f"select metricId, metricName from {mt[0]}")}
dram = {i: n for i, n in names.items() if 'DRAM' in n}
print(sys.argv[2], 'metrics:', sorted(set(dram.values())))
ks = sorted(c.execute("select k.start, k.end, s.value from CUPTI_ACTIVITY_KIND_KERNEL k join StringIds s on k.shortName = s.id"))
kn = {}
for _, _, nm in ks:
    kn[nm] = kn.get(nm, 0) + 1
print('kernels:', sorted(kn.items(), key=lambda x: -x[1])[:6])
# a call's window: decode, each fast1 kernel; chunked, a persistent prep's start to the next state pass's end
wins = []
if any('fast1' in k[2] for k in ks):
    wins = [(st, en) for st, en, nm in ks if 'fast1' in nm]
else:
    p = None
    for st, en, nm in ks:
        if 'prep_persistent' in nm:
            p = st
        elif 'state' in nm and p is not None:
            wins.append((p, en)); p = None
print(f'calls: {len(wins)}, mean window {sum(e - s for s, e in wins) / max(len(wins), 1) / 1e3:.2f} us')
for i, n in dram.items():
    rows = list(c.execute("select timestamp, value from GPU_METRICS where metricId=? order by timestamp", (i,)))
    dt = (rows[-1][0] - rows[0][0]) / (len(rows) - 1)
    import bisect
    ts = [r[0] for r in rows]
    tot = 0.0
    for s0, e0 in wins:
        a0, b0 = bisect.bisect_left(ts, s0), bisect.bisect_right(ts, e0)
        tot += sum(rows[j][1] for j in range(a0, b0)) / 100.0 * dt
    print(f'  {n}: sample {dt / 1e3:.2f} us, per call {tot / max(len(wins), 1) / 1e3:.3f} us at peak bandwidth')
PY
}
prof dec64 $L/m41/bench_cuda --one 64 1
prof ch4096 $L/m41/bench_cuda --one 1 4096 --chunked
prof ch32768 $L/m41/bench_cuda --one 1 32768 --chunked
