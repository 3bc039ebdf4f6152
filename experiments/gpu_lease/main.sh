# c4: the teachers (LRS x SEEDS runs side by side), their suites, and each teacher's and the shipped
# default's scores on the student's rows; everything small comes back in $OUT/results.tgz.
set -u
python3 -c 'import story_quality.metrics.union' 2>/dev/null || bash experiments/gpu_lease/fallback.sh
T0=$(date +%s); el(){ echo $(( $(date +%s) - T0 )); }
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 HF_EVALUATE_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
export STORY_QUALITY_DATA=/tmp/lease/data/shared PYTHONPATH=/tmp/lease/data/site
M=metrics/union/default_checkpoint/model.safetensors; [ -f $M ] || cp /tmp/lease/model.safetensors $M; sha256sum $M
R=$OUT/r; mkdir -p $R/runs $R/scores
log(){ echo "[$(el)s] $*" | tee -a $R/main.log; }
pack(){ tar czf $OUT/results.tgz -C $OUT r 2>/dev/null; }
DL=${DEADLINE:-540}
log "unpack"
mkdir -p ${MPNET_DIR:-/tmp/mpnet} && cp /tmp/lease/c1/mpnet/*.json /tmp/lease/c1/mpnet/vocab.txt ${MPNET_DIR:-/tmp/mpnet}/ 2>/dev/null
python3 -m experiments.gpu_lease.pack_checkpoint unpack /tmp/lease/c1 ${MPNET_DIR:-/tmp/mpnet}/model.safetensors /tmp/lease/c1/lo.part0 /tmp/lease/c2/lo.part1 /tmp/lease/c4/lo.part2 || { log "unpack failed"; pack; exit 1; }
sha256sum ${MPNET_DIR:-/tmp/mpnet}/model.safetensors | tee -a $R/main.log
mkdir -p /tmp/lease/data && tar xJf /tmp/lease/c4/rows.tar.xz -C /tmp/lease/data || { log "rows failed"; pack; exit 1; }
log "train"
RUNS=""
for lr in ${LRS:-1.5e-5 3e-5}; do for seed in ${SEEDS:-42 43}; do
  n=mpnet-lr$lr-s$seed; RUNS="$RUNS $n"
  python3 training/train_union.py training/configs/union-mpnet-teacher.json --model_name_or_path ${MPNET_DIR:-/tmp/mpnet} \
    --dataset /tmp/lease/data/outputs/union-mpnet-teacher-data --output_dir /tmp/runs/$n \
    --learning_rate $lr --seed $seed --bf16 ${BF16:-true} --preprocessing_num_workers 3 --logging_steps 100 --disable_tqdm true ${EXTRA_TRAIN:-} > $R/train-$n.log 2>&1 &
done; done
while [ -n "$(jobs -rp)" ]; do
  sleep 10; [ $(el) -gt $(( DL - 150 )) ] && { log "training past its time; stopping"; kill $(jobs -rp); break; }
done
wait; log "trained"; nvidia-smi --query-gpu=memory.used --format=csv | tail -1 >> $R/main.log
for n in $RUNS; do
  d=/tmp/runs/$n; [ -f $d/model.safetensors ] || { log "$n: no weights"; continue; }
  mkdir -p $R/runs/$n; (cd $d && sha256sum model.safetensors > $R/runs/$n/weights.sha256; cp *.json $R/runs/$n/ 2>/dev/null)
done
pack
log "suites and teacher scores"
for c in $RUNS ${WITH_DEFAULT-default}; do
  d=/tmp/runs/$c; [ $c = default ] && d=default || [ -f $d/model.safetensors ] || continue
  python3 -m benchmarks.union_dev_suite --checkpoint $d --long-stories windows --scores-dir $R/scores/$c --json $R/suite-$c.json > $R/suite-$c.log 2>&1 &
  t=$d; [ $c = default ] && t=metrics/union/default_checkpoint
  ( python3 training/teacher_scores.py --dataset /tmp/lease/data/outputs/union-mpnet-student-data --teacher $t \
      --output_dir /tmp/taught/$c --device ${DEV:-cuda} --batch_size 256 > $R/teacher-$c.log 2>&1 && \
    python3 -c "import datasets,numpy as np,sys; d=datasets.load_from_disk('/tmp/taught/$c'); np.save('$R/teacher-$c.npy', np.asarray(d['teacher'],dtype=np.float64))" >> $R/teacher-$c.log 2>&1; \
    cp /tmp/taught/$c/*summary*.json $R/teacher-$c-summary.json 2>/dev/null ) &
done
while [ -n "$(jobs -rp)" ]; do sleep 5; [ $(el) -gt $(( DL - 15 )) ] && { log "suites past their time"; kill $(jobs -rp); break; }; done
wait; log "done"; pack
