#!/bin/bash
# session 37: s37-run.sh then s37-fla-run.sh in one device command (carry build/gdn, build/tests/test_cli, .fla)
S=$(date +%s)
bash docs/research/labs/s37-run.sh 2>&1 | tee $OUT/gdn.log
echo "gdn part: $(( $(date +%s) - S )) s"
FLA_TIMEOUT=$(( 585 - ($(date +%s) - S) )) bash docs/research/labs/s37-fla-run.sh 2>&1
echo "all: $(( $(date +%s) - S )) s"
