# c4: the teachers (LRS x SEEDS runs side by side), their suites, and each teacher's and the shipped
# default's scores on the student's rows; everything small comes back in $OUT/results.tgz.
set -u
: "${KEEP:?run it through lease.sh, which names the folder kept between calls}"
python3 -c 'import story_quality.metrics.union' 2>/dev/null || bash experiments/gpu_lease/fallback.sh
T0=$(date +%s); el(){ echo $(( $(date +%s) - T0 )); }
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 HF_EVALUATE_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
export STORY_QUALITY_DATA=$KEEP/data/shared PYTHONPATH=$KEEP/data/site
M=metrics/union/default_checkpoint/model.safetensors; [ -f $M ] || cp $KEEP/model.safetensors $M; sha256sum $M
R=$OUT/r; mkdir -p $R/runs $R/scores
log(){ echo "[$(el)s] $*" | tee -a $R/main.log; }
pack(){ tar czf $OUT/results.tgz -C $OUT r 2>/dev/null; }
DL=${DEADLINE:-540}
log "unpack"
mkdir -p $KEEP/mpnet && cp $KEEP/c1/mpnet/*.json $KEEP/c1/mpnet/vocab.txt $KEEP/mpnet/ 2>/dev/null
python3 -m experiments.gpu_lease.pack_checkpoint unpack $KEEP/c1 $KEEP/mpnet/model.safetensors $KEEP/c1/lo.part0 $KEEP/c2/lo.part1 $KEEP/c4/lo.part2 || { log "unpack failed"; pack; exit 1; }
sha256sum $KEEP/mpnet/model.safetensors | tee -a $R/main.log
mkdir -p $KEEP/data && tar xJf $KEEP/c4/rows.tar.xz -C $KEEP/data || { log "rows failed"; pack; exit 1; }
log "train"
RUNS=""
for lr in ${LRS:-1.5e-5 3e-5}; do for seed in ${SEEDS:-42 43}; do
  n=mpnet-lr$lr-s$seed; RUNS="$RUNS $n"
  python3 training/train_union.py training/configs/union-mpnet-teacher.json --model_name_or_path $KEEP/mpnet \
    --dataset $KEEP/data/outputs/union-mpnet-teacher-data --output_dir $KEEP/runs/$n \
    --learning_rate $lr --seed $seed --bf16 ${BF16:-true} --preprocessing_num_workers 3 --logging_steps 100 --disable_tqdm true ${EXTRA_TRAIN:-} > $R/train-$n.log 2>&1 &
done; done
while [ -n "$(jobs -rp)" ]; do
  sleep 10; [ $(el) -gt $(( DL - 150 )) ] && { log "training past its time; stopping"; kill $(jobs -rp); break; }
done
wait; log "trained"; nvidia-smi --query-gpu=memory.used --format=csv | tail -1 >> $R/main.log
for n in $RUNS; do
  d=$KEEP/runs/$n; [ -f $d/model.safetensors ] || { log "$n: no weights"; continue; }
  mkdir -p $R/runs/$n; (cd $d && sha256sum model.safetensors > $R/runs/$n/weights.sha256; cp *.json $R/runs/$n/ 2>/dev/null)
done
pack
log "suites and teacher scores"
for c in $RUNS ${WITH_DEFAULT-default}; do
  if [ $c = default ]; then d=default; t=metrics/union/default_checkpoint; else d=$KEEP/runs/$c; t=$d; fi
  [ $c = default ] || [ -f $d/model.safetensors ] || continue
  python3 -m benchmarks.union_dev_suite --checkpoint $d --long-stories windows --scores-dir $R/scores/$c --json $R/suite-$c.json > $R/suite-$c.log 2>&1 &
  ( python3 training/teacher_scores.py --dataset $KEEP/data/outputs/union-mpnet-student-data --teacher $t \
      --output_dir $KEEP/taught/$c --device ${DEV:-cuda} --batch_size 256 > $R/teacher-$c.log 2>&1 && \
    python3 -c "import datasets, numpy as np; d=datasets.load_from_disk('$KEEP/taught/$c'); np.save('$R/teacher-$c.npy', np.asarray(d['teacher'],dtype=np.float64))" >> $R/teacher-$c.log 2>&1; \
    cp $KEEP/taught/$c/*summary*.json $R/teacher-$c-summary.json 2>/dev/null ) &
done
while [ -n "$(jobs -rp)" ]; do sleep 5; [ $(el) -gt $(( DL - 15 )) ] && { log "suites past their time"; kill $(jobs -rp); break; }; done
wait; log "done"; pack
