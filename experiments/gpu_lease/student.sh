# c6: the student (training/configs/union-mpnet-student.json: MiniLM from the shipped default, the
# taught rows) in fp32 on the GPU, SEEDS side by side, and each one's suite; after a call that ran
# setup.sh (the wheels) and kept the shipped default's weights. Everything small comes back in
# $OUT/students.tgz. The call carries .lease/c6: the taught rows and the shared data, as tar.xz.
set -u
: "${KEEP:?run it through lease.sh, which names the folder kept between calls}"
python3 -c 'import story_quality.metrics.union' 2>/dev/null || bash experiments/gpu_lease/fallback.sh
T0=$(date +%s); el(){ echo $(( $(date +%s) - T0 )); }
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 HF_EVALUATE_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
M=metrics/union/default_checkpoint/model.safetensors; [ -f $M ] || cp "$KEEP"/model.safetensors $M; sha256sum $M
mkdir -p "$KEEP"/data && tar xJf "$KEEP"/c6/taught.tar.xz -C "$KEEP"/data && tar xJf "$KEEP"/c6/shared.tar.xz -C "$KEEP"/data
export STORY_QUALITY_DATA=$KEEP/data/shared PYTHONPATH=$KEEP/data/site
R=$OUT/s; mkdir -p $R; DL=${DEADLINE:-300}
log(){ echo "[$(el)s] $*" | tee -a $R/main.log; }
log "train"
for seed in ${SEEDS:-42 43}; do
  python3 training/train_union.py training/configs/union-mpnet-student.json \
    --dataset "$KEEP"/data/outputs/union-mpnet-student-taught --output_dir "$KEEP"/students/s$seed --seed $seed \
    --bf16 false --save_strategy no --preprocessing_num_workers 3 --logging_steps 200 --disable_tqdm true \
    ${EXTRA_TRAIN:-} > $R/train-s$seed.log 2>&1 &
done
while [ -n "$(jobs -rp)" ]; do sleep 5; [ $(el) -gt $(( DL - 90 )) ] && { log "training past its time; stopping"; kill $(jobs -rp); break; }; done
wait; log "trained"
for seed in ${SEEDS:-42 43}; do
  d=$KEEP/students/s$seed; [ -f $d/model.safetensors ] || { log "s$seed: no weights"; continue; }
  (cd $d && sha256sum model.safetensors > $R/weights-s$seed.sha256 && cp run_record.json $R/run_record-s$seed.json && cp all_results.json $R/all_results-s$seed.json)
  [ "${SUITES:-1}" = 0 ] || python3 -m benchmarks.union_dev_suite --checkpoint $d --long-stories windows \
    --json $R/suite-s$seed.json > $R/suite-s$seed.log 2>&1 &
done
while [ -n "$(jobs -rp)" ]; do sleep 5; [ $(el) -gt $(( DL - 10 )) ] && { log "suites past their time"; kill $(jobs -rp); break; }; done
wait; log "done"; tar czf $OUT/students.tgz -C $OUT s
