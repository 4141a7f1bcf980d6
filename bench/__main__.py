"""`make bench`: every scenario, each reported as a ratio against a baseline of the same run."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

SCENARIOS = ["scenario_me", "scenario_availability", "scenario_deliveries", "scenario_mixed",
             "scenario_replay", "scenario_orders"]


def main(argv: list[str]) -> int:
    chosen = [s for s in SCENARIOS if not argv or s.removeprefix("scenario_") in argv]
    results = []
    for name in chosen:
        module = importlib.import_module(f"bench.{name}")
        result = module.run()
        print(json.dumps(result, indent=2), flush=True)
        results.append(result)
    out = Path("bench/results")
    out.mkdir(parents=True, exist_ok=True)
    (out / "latest.json").write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
