# c3: the GPU speed figures, the GPU otherwise idle (bench_union_speed, BERT-base-sized and the shipped default).
set -u
: "${KEEP:?run it through lease.sh, which names the folder kept between calls}"
python3 -c 'import story_quality.metrics.union' 2>/dev/null || bash experiments/gpu_lease/fallback.sh
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
export STORY_QUALITY_DATA=$KEEP/data/shared PYTHONPATH=$KEEP/data/site
timeout 90 python3 -m benchmarks.bench_union_speed --device ${DEV:-cuda} --stories ${STORIES:-10000} --skip-pipeline 2>&1 | grep -v "Loading weights" | tee $OUT/speed-bert-base.txt
timeout 90 python3 -m benchmarks.bench_union_speed --device ${DEV:-cuda} --stories ${STORIES:-10000} --skip-pipeline --checkpoint default 2>&1 | grep -v "Loading weights" | tee $OUT/speed-default.txt
timeout 100 python3 -m benchmarks.bench_union_speed --device ${DEV:-cuda} --stories ${PSTORIES:-2000} --pipeline-dtype bf16 --precisions bf16 2>&1 | grep -v "Loading weights" | tee $OUT/speed-bert-base-pipeline.txt
