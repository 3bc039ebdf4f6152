# One call of the lease: check the carried folder's sha256, keep it outside the checkout (the next
# call's tree replaces the checkout's ignored folders), then the stage's work.
#   bash experiments/gpu_lease/lease.sh c1|c2|c3|c4|c5|s1|c6   (the call carries .lease/cN; c1 and s1 also .lease/whl)
set -u
STAGE=$1 HERE=experiments/gpu_lease
# where the parts, the data and the runs stay between calls: one folder outside the checkout
export KEEP=${LEASE_KEEP:-${TMPDIR:-/tmp}/story-quality-lease}
(cd .lease/"$STAGE" && sha256sum -c --quiet SHA256SUMS) || { echo "$STAGE: sha256 differs"; exit 2; }
mkdir -p "$KEEP" && rm -rf "${KEEP:?}/$STAGE" && cp -r .lease/"$STAGE" "$KEEP"/ && echo "$STAGE: kept"
case $STAGE in
  c1) python3 -c "import datasets, evaluate, story_quality.metrics.union" 2>/dev/null && echo "environment: kept" || bash $HERE/setup.sh ;;
  c3) cp metrics/union/default_checkpoint/model.safetensors "$KEEP"/model.safetensors
      mkdir -p "$KEEP"/data && tar xJf "$KEEP"/c3/shared.tar.xz -C "$KEEP"/data && echo "shared data: kept"
      [ "${SPEED:-1}" = 0 ] || bash $HERE/speed.sh ;;   # SPEED=0: keep the data and the default only
  c4) bash $HERE/main.sh ;;
  c5) bash $HERE/gruen_speed.sh ;;
  s1) bash $HERE/setup.sh && cp metrics/union/default_checkpoint/model.safetensors "$KEEP"/model.safetensors ;;
  c6) bash $HERE/student.sh ;;
esac
