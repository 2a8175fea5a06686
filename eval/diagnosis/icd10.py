"""Map free-text diagnoses to ICD-10-CM codes with the project's own retriever, for category agreement.

Two answers name the same disease in different words ("lung cancer", "adenocarcinoma of the lung") more often
than a synonym table can list. Both are mapped to the nearest ICD-10-CM category/subcategory description (and
inclusion term) from `simple-icd-10-cm`, embedded with a project encoder (MiniLM by default); they agree when
their 3-character categories are equal (C34 = C34). A mapping below `min_score` cosine is "no code", so
vague text ("abnormal study") never agrees with anything. Description embeddings are cached per encoder.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from eval.common.shared_data import eval_home

DEFAULT_ENCODER = "minilm"
DEFAULT_MIN_SCORE = 0.6
#: Code ranges an imaging diagnosis is never coded in, left out so their near-identical wording cannot win:
#: pregnancy (O), perinatal (P: "atelectasis of newborn"), external causes (V-Y), encounter reasons (Z) and
#: carcinoma in situ (D00-D09), which imaging cannot tell apart from invasive cancer.
EXCLUDED_PREFIXES = ("O", "P", "V", "W", "X", "Y", "Z", "D0")


@dataclass(frozen=True)
class CodeMatch:
    """Nearest ICD-10-CM entry for a text: code (J18.9), its category (J18), the matched description, cosine."""

    code: str
    category: str
    description: str
    score: float


def icd_entries(codes: Sequence[str] | None = None) -> list[tuple[str, str]]:
    """(code, text) for every category and 4-character subcategory (or the given codes): the description and
    each inclusion term. Chapters, blocks and 5-7 character codes are left out: category agreement only needs
    the first three characters, and the long codes mostly add laterality and encounter type."""
    import simple_icd_10_cm as icd

    if codes is None:
        codes = [c for c in icd.get_all_codes() if c[0].isalpha() and (len(c) == 3 or (len(c) == 5 and "." in c))]
    entries: list[tuple[str, str]] = []
    for code in codes:
        entries.append((code, icd.get_description(code)))
        entries += [(code, term) for term in icd.get_inclusion_term(code)]
    return entries


class ICDMapper:
    """Nearest-description lookup over ICD-10-CM with a sentence encoder."""

    def __init__(
        self,
        encoder,
        entries: list[tuple[str, str]],
        cache_dir: Path | None = None,
        min_score: float = DEFAULT_MIN_SCORE,
        excluded: tuple[str, ...] = EXCLUDED_PREFIXES,
    ) -> None:
        self.encoder = encoder
        self.codes = [code for code, _ in entries]
        self.texts = [text for _, text in entries]
        self.min_score = min_score
        self.vectors = self._embed(cache_dir)
        self.allowed = np.array([not code.startswith(excluded) for code in self.codes])

    @classmethod
    def default(cls, encoder_ref: str = DEFAULT_ENCODER, codes: Sequence[str] | None = None) -> ICDMapper:
        from retriever.encoders.encoder import load_encoder

        return cls(load_encoder(encoder_ref), icd_entries(codes), eval_home() / "icd10")

    def _embed(self, cache_dir: Path | None) -> np.ndarray:
        """Description vectors, from the cache when the encoder and the entries are the same."""
        digest = hashlib.sha256("\n".join(f"{c}\t{t}" for c, t in zip(self.codes, self.texts, strict=True)).encode())
        key = f"{self.encoder.fingerprint[:16]}-{digest.hexdigest()[:16]}.npy"
        if cache_dir is not None and (cache_dir / key).is_file():
            return np.load(cache_dir / key)
        vectors = self.encoder.encode(self.texts, batch_size=128, progress=len(self.texts) > 1000)
        if cache_dir is not None:
            cache_dir.mkdir(parents=True, exist_ok=True)
            tmp = cache_dir / f".{key}.tmp.npy"
            np.save(tmp, vectors)
            tmp.replace(cache_dir / key)
        return vectors

    @lru_cache(maxsize=8192)  # noqa: B019 - one mapper per run; the cache is the point
    def match(self, text: str) -> CodeMatch | None:
        """The nearest entry, or None when nothing is similar enough (or the text is empty)."""
        if not text.strip():
            return None
        vector = self.encoder.encode([text])[0]
        scores = np.where(self.allowed, self.vectors @ vector, -1.0)
        best = int(np.argmax(scores))
        if float(scores[best]) < self.min_score:
            return None
        code = self.codes[best]
        return CodeMatch(code, code.split(".")[0], self.texts[best], round(float(scores[best]), 4))
