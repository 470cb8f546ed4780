"""Port of k8s.io/apiserver/pkg/storage/names/generate.go (v1.36.0): a name made from a ``generateName``.

``SimpleNameGenerator.GenerateName``: the prefix, cut to 58 characters (so that the name is at
most 63, a DNS-1123 label's length), and five random characters of k8s.io/apimachinery's
``util/rand`` alphabet (no vowels, no look-alikes: ``bcdfghjklmnpqrstvwxz2456789``).
"""

from __future__ import annotations

import random

MAX_NAME_LENGTH = 63
RANDOM_LENGTH = 5
MAX_GENERATED_NAME_LENGTH = MAX_NAME_LENGTH - RANDOM_LENGTH
ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"  # util/rand's alphanums


def generate_name(base: str, choice=random.choice) -> str:
    if len(base) > MAX_GENERATED_NAME_LENGTH:
        base = base[:MAX_GENERATED_NAME_LENGTH]
    return base + "".join(choice(ALPHANUMS) for _ in range(RANDOM_LENGTH))
