#!/usr/bin/env bash
# bench/scale.py on the lent 16-core machine, as one prepared run (../shared/device/README.md):
# the project's run-time wheels carried in .whl/, the project run from source, every figure
# written under $OUT as it comes.  Run there with: bash bench/device_scale.sh
set -uo pipefail
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
python3 .whl/unpack.py .whl /tmp/site >/dev/null && export PYTHONPATH=/tmp/site:$PWD
{ nproc; python3 --version; uptime; } 2>&1 | tee "$OUT/machine.txt"
timeout "${SCALE_LIMIT:-480}" python3 bench/scale.py --per-slot "${PER_SLOT:-8}" --multiples "${MULTIPLES:-1,4,8}" \
    --marginal --out "$OUT/scale.json" 2>&1 | tee "$OUT/scale.txt"
