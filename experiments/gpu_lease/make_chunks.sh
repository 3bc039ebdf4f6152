# The folders the lease's calls carry, each with its SHA256SUMS (run here, on the CPU):
#   bash experiments/gpu_lease/make_chunks.sh PACK MPNET_DIR ROWS.tar.xz SHARED.tar.xz .lease P0 P1 [GRUEN_WHEELS]
# c1: the wheels' companion (the packed model's high bytes, metadata, tokenizer, first P0 low bytes),
# c2: the next P1 low bytes, c3: the shared data, c4: the rest of the low bytes and the rows,
# c5 (with GRUEN_WHEELS, a folder of wheels): what GRUEN's focus needs there (pyemd and POT).
set -euo pipefail
PACK=$1 MODEL=$2 ROWS=$3 SHARED=$4 DEST=$5 P0=$6 P1=$7 WHEELS=${8:-}
rm -rf "$DEST"/c1 "$DEST"/c2 "$DEST"/c3 "$DEST"/c4 "$DEST"/c5
mkdir -p "$DEST"/c1/mpnet "$DEST"/c2 "$DEST"/c3 "$DEST"/c4
CALLS="c1 c2 c3 c4"
if [ -n "$WHEELS" ]; then mkdir -p "$DEST"/c5 && cp "$WHEELS"/*.whl "$DEST"/c5/ && CALLS="$CALLS c5"; fi
cp "$PACK"/hi.xz "$PACK"/meta.json "$PACK"/raw.npz "$DEST"/c1/
for f in config.json tokenizer.json tokenizer_config.json special_tokens_map.json vocab.txt; do
  cp "$MODEL/$f" "$DEST"/c1/mpnet/
done
python3 - "$PACK/lo.bin" "$DEST" "$P0" "$P1" <<'PY'
import sys
low, dest, p0, p1 = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
data = open(low, "rb").read()
for part, piece in (("c1/lo.part0", data[:p0]), ("c2/lo.part1", data[p0 : p0 + p1]), ("c4/lo.part2", data[p0 + p1 :])):
    open(f"{dest}/{part}", "wb").write(piece)
PY
cp "$SHARED" "$DEST"/c3/shared.tar.xz
cp "$ROWS" "$DEST"/c4/rows.tar.xz
cat "$DEST"/c1/lo.part0 "$DEST"/c2/lo.part1 "$DEST"/c4/lo.part2 | cmp - "$PACK"/lo.bin
for c in $CALLS; do (cd "$DEST/$c" && find . -type f ! -name SHA256SUMS -print0 | xargs -0 sha256sum > SHA256SUMS); done
for c in $CALLS; do du -sb "$DEST/$c"; done
