"""Write golden.json.gz from the functions of cases.py (run once, at the commit named in the file,
before a refactor; ``python tests/golden/record.py``).

``python tests/golden/record.py --section audits --reason "..."`` records one section again (a
section of cases.SECTIONS, or ``theory``) and keeps the others: for a change of the numbers that is
the point of an issue (for example admissible sampling in the audits, issue 22). The file then
names, per re-recorded section, the commit and the reason (``rerecorded``)."""
import argparse
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
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--section", nargs="+", choices=[*cases.SECTIONS, "theory"])
    parser.add_argument("--reason", default="")
    args = parser.parse_args()
    if args.section and not args.reason:
        parser.error("re-recording a section needs --reason")
    commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                            cwd=HERE).stdout.strip()
    if args.section:
        with gzip.open(HERE / "golden.json.gz", "rt") as fh:
            out = json.load(fh)
    else:
        out = {"commit": commit, "sections": {}}
    chosen = args.section or [*cases.SECTIONS, "theory"]
    for name in chosen:
        start = time.time()
        if name == "theory":
            points = cases.theory_points()
            out["theory"] = [{"point": p, "values": cases.encode(cases.theory_values(p))} for p in points]
        else:
            out["sections"][name] = cases.encode(cases.SECTIONS[name]())
        if args.section:
            out.setdefault("rerecorded", {})[name] = {"commit": commit, "reason": args.reason}
        print(f"{name}: {time.time() - start:.1f} s", flush=True)
    with gzip.open(HERE / "golden.json.gz", "wt") as fh:
        json.dump(out, fh)


if __name__ == "__main__":
    main()
