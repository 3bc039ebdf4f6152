# The environment: the carried wheels, the package (editable), and what the lease relies on.
set -u
export PIP_DISABLE_PIP_VERSION_CHECK=1
python3 -m pip install -q --no-index --no-deps --no-compile .lease/whl/*.whl 2>&1 | tail -3
python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . 2>&1 | tail -3
python3 -c "import story_quality.metrics.union" 2>/dev/null && echo "editable install: ok" || bash experiments/gpu_lease/fallback.sh
python3 - <<'PY'
import importlib.metadata as md

import torch

for n in ["torch", "transformers", "accelerate", "datasets", "evaluate", "nltk", "pyarrow", "story-quality-metrics"]:
    try:
        print(n, md.version(n))
    except md.PackageNotFoundError:
        print(n, "MISSING")
print("cuda", torch.cuda.is_available(), torch.cuda.get_device_name() if torch.cuda.is_available() else "")
PY
python3 training/train_union.py --help > /dev/null && echo "train_union --help: ok"
