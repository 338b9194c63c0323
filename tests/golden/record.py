"""Write golden.json.gz from the functions of cases.py (run once, at the commit named in the file,
before a refactor; ``python tests/golden/record.py``)."""
import gzip
import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

import cases  # noqa: E402


def main() -> None:
    commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                            cwd=HERE).stdout.strip()
    out = {"commit": commit, "sections": {}}
    for name, fn in cases.SECTIONS.items():
        start = time.time()
        out["sections"][name] = cases.encode(fn())
        print(f"{name}: {time.time() - start:.1f} s", flush=True)
    start = time.time()
    points = cases.theory_points()
    out["theory"] = [{"point": p, "values": cases.encode(cases.theory_values(p))} for p in points]
    print(f"theory: {len(points)} points, {time.time() - start:.1f} s", flush=True)
    with gzip.open(HERE / "golden.json.gz", "wt") as fh:
        json.dump(out, fh)


if __name__ == "__main__":
    main()
