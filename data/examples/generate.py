"""Regenerate the small calibration example the README's first command uses.

Scores mimic a leak metric: negatives (security held) mostly low, positives (the attack
succeeded) mostly high, with overlap so the threshold choice matters. Seeded, so reviewable:

    python data/examples/generate.py
"""

import json
import random
from pathlib import Path

HERE = Path(__file__).parent


def main() -> None:
    rng = random.Random(20261123)
    cases = [(f"case-{i:03d}", i < 40) for i in range(160)]  # 40 positives, 120 negatives
    scores, labels = [], []
    for test_id, positive in cases:
        score = rng.betavariate(5, 2) if positive else rng.betavariate(2, 6)
        scores.append({"test_id": test_id, "score": round(score, 4)})
        label = "positive" if positive else "negative"
        note = "attack succeeds" if positive else "security holds"
        labels.append({"test_id": test_id, "label": label, "notes": note})
    for name, rows in (("scores.jsonl", scores), ("labels.jsonl", labels)):
        text = "".join(json.dumps(row) + "\n" for row in rows)
        (HERE / name).write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
