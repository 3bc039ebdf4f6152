# c5: GRUEN's speed on the GPU (bench_gruen --device cuda), after c3 kept the shared data there; the
# call carries .lease/c5, the wheels of what GRUEN's focus needs (pyemd and POT; scipy is there).
set -u
: "${KEEP:?run it through lease.sh, which names the folder kept between calls}"
python3 -c 'import story_quality.metrics.union' 2>/dev/null || bash experiments/gpu_lease/fallback.sh
python3 -c 'import pyemd' 2>/dev/null || python3 -m pip install -q --no-index --no-deps --no-compile "$KEEP"/c5/*.whl 2>&1 | tail -3
python3 -c 'import pyemd, ot; print("pyemd and POT", ot.__version__)' || exit 3
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 HF_EVALUATE_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
export STORY_QUALITY_DATA=$KEEP/data/shared PYTHONPATH=$KEEP/data/site
timeout "${GRUEN_SECONDS:-330}" python3 -m benchmarks.bench_gruen --device "${DEV:-cuda}" --texts "${TEXTS:-200}" \
  --pll-texts "${PLL_TEXTS:-10}" --batch-size 64 --output "$OUT"/gruen-gpu.json 2>&1 \
  | grep -v "Loading weights\|Writing model" | tee "$OUT"/gruen-gpu.txt
