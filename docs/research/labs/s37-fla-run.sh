#!/bin/bash
# session 37: fla beside gdn, each case timed back to back and from an idle GPU (s37-bench-fla.py); carry .fla
# (fla's package, git-ignored, never committed: a git archive of flash-linear-attention's fla/, bc3b101d)
set -u
python3 -c "import triton, torch; print('triton', triton.__version__, 'torch', torch.__version__)"
timeout ${FLA_TIMEOUT:-540} python3 docs/research/labs/s37-bench-fla.py 2>&1 | grep -v Warning | tee $OUT/fla.log
