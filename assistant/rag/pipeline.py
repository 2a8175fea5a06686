"""The RAG pipeline: finding text -> retrieved reports -> prompt -> LLM -> `Answer`.

A LangChain `Runnable[str, Answer]`, so it composes and batches like any other. `iter_answer` streams: first the
`Retrieval` (the reports and their evidence, so a caller shows them before the model starts), then the model's
text as it is generated, and last the Answer. The pipeline never raises for a backend problem: a server that is down,
a timeout or output with no answer in it gives an Answer with `degraded=True`, the reason, and the retrieved
reports (the retrieval-only result). Only bad input (an empty query) raises.

The prompt is fitted into the model's context: the query may take at most half of the room left after the
template and the answer, the references share the rest (best-ranked first); every cut is stated in `notes`.

Follow-up questions (the chat): a mapping input may carry `history`, earlier turns as chat messages
(`{"role": "user"|"assistant", "content": ...}`). They go between the system and the user message, newest
kept first within at most a quarter of the context room; dropped turns are stated in `notes`.
"""

from __future__ import annotations

import json
import re
import threading
import time
import unicodedata
from collections.abc import Iterator, Mapping
from typing import Any

from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import Runnable, RunnableConfig

import prompts
from assistant.llm.base import LLM, BackendMalformed, BackendTimeout, LLMError, LLMResult, Message
from assistant.rag import answer_defaults
from assistant.rag.answer import (
    Answer,
    DegradedKind,
    ParsedOutput,
    Retrieval,
    UnparseableOutput,
    answer_schema,
    parse_output,
)
from assistant.rag.choice import Choice, choice_name, choice_schema, parse_choice, render_choices
from assistant.rag.configuration import configuration_hash
from assistant.rag.evidence import EvidenceDifferential
from assistant.rag.grounding import contradiction, echoes_an_instruction
from assistant.rag.lc_retriever import documents_to_hits
from assistant.rag.question import NO_ABNORMALITY, read_question
from assistant.rag.strength import strength
from assistant.rag.votes import evidence_for
from assistant.rag.weighting import WEIGHTING, Weighting
from retriever.search.hit import Hit
from retriever.search.query import clean_query, visible_text

ANSWER_MAX_TOKENS = 512
#: What a timed-out answer says, so the resident knows the knob (assistant/settings.py reads it).
TIMEOUT_HINT = "allow more time with RADSEARCH_LLM_TIMEOUT=SECONDS (default 120)"
EVIDENCE_ONLY = answer_defaults.EVIDENCE_ONLY
CHAT_OVERHEAD_TOKENS = 16  # role markers and special tokens the chat template adds per message
HISTORY_SHARE = 4  # earlier turns may take at most 1/HISTORY_SHARE of the room left for query + references
_OPEN = "<\u2039\u27e8\u3008\u276c\u276e"  # "<" and the look-alikes NFKC does not map to it
_CLOSE = ">\u203a\u27e9\u3009\u276d\u276f"
# A delimiter however spelled: any bracket, slashes or a JSON-escaped one, `reference_report` with any separator,
# and the rest of the tag up to its bracket when it has one on the same line (an unterminated tag loses its name).
_TAGS = re.compile(
    rf"[{_OPEN}]\s*[/\\]*\s*(?:findings?|reference[\W_]*reports?|candidates?)\b(?:[^{_OPEN}{_CLOSE}\n]*[{_CLOSE}])?",
    re.IGNORECASE,
)
#: Chat-template control sequences of the common model families, which a tokenizer may read as control tokens
#: (a report holding `<|im_end|><|im_start|>system` would start a turn of its own): `<|...|>` tokens (ChatML/Qwen,
#: Llama 3, Phi, DeepSeek), Llama 2 / Mistral `[INST]` and `<<SYS>>`, Gemma's turn markers, and BOS/EOS tags.
_CONTROL = re.compile(
    r"<\|[^|<>\n]{1,40}\|>|\[/?INST\]|<</?SYS>>|</?(?:start_of_turn|end_of_turn|bos|eos|s)>",
    re.IGNORECASE,
)
_CUT_MARK = " [...]"
#: A candidate is an impression's opening: the diagnosis a radiologist put first, not every incidental finding after
#: it (a small model shown whole reports tends to copy their descriptions instead of naming a diagnosis).
CANDIDATE_TOKENS = 48
#: Candidates of the evidence differential listed after the chosen one, and supporting reports cited for it.
MAX_CHOICE_DIFFERENTIAL = 4
MAX_CITED = 5


def neutralise_tags(text: str) -> str:
    """Remove the prompt's own delimiters, and the chat templates' control sequences, from untrusted text (reports,
    queries, history) so it cannot close its block or start a turn of its own and pose as instructions (a report
    containing `</reference_report>` or `<|im_end|><|im_start|>system` followed by commands).

    The text is NFKC-normalised and stripped of invisible characters first, and the model reads it that way:
    otherwise a full-width `＜/reference_report＞` or a zero-width space inside the name would pass the filter
    and still read as the delimiter to the model."""
    visible = visible_text(unicodedata.normalize("NFKC", text))
    return _CONTROL.sub("[control removed]", _TAGS.sub("[tag removed]", visible))


def fit_tokens(llm: LLM, text: str, budget: int) -> tuple[str, bool]:
    """The longest prefix of `text` within `budget` tokens (marked when cut), and whether it was cut."""
    if llm.count_tokens(text) <= budget:
        return text, False
    mark = llm.count_tokens(_CUT_MARK)
    cut = len(text)
    for _ in range(12):  # shrink by the observed chars/token ratio until it fits
        tokens = llm.count_tokens(text[:cut])
        if tokens + mark <= budget:
            break
        cut = max(0, min(cut - 1, int(cut * (budget - mark) / tokens * 0.97)))
    else:
        cut = 0
    return text[:cut].rstrip() + _CUT_MARK, True


def _attributes(hit: Hit, rank: int) -> str:
    """A retrieved report's tag attributes; the id is JSON-quoted so it cannot break the tag."""
    return f'id={json.dumps(hit.report.id)} rank="{rank}" similarity="{hit.score:.3f}"'


def render_reference(hit: Hit, rank: int, text: str) -> str:
    """One retrieved report inside its delimiters (templates with `references: reports`)."""
    return f"<reference_report {_attributes(hit, rank)}>\n{text}\n</reference_report>"


def render_candidate(hit: Hit, rank: int, text: str) -> str:
    """One retrieved report's impression as a ranked candidate (templates with `references: impressions`)."""
    return f"<candidate {_attributes(hit, rank)}>{text}</candidate>"


class RagPipeline(Runnable[str | Mapping[str, Any], Answer]):
    """Answer a finding with an LLM grounded in retrieved reports (`retriever=None`: no-retrieval
    baseline)."""

    def __init__(
        self,
        llm: LLM,
        retriever: BaseRetriever | None,
        *,
        max_tokens: int = ANSWER_MAX_TOKENS,
        temperature: float = 0.0,
        seed: int = 0,
        rag_prompt: str = answer_defaults.PROMPT,
        norag_prompt: str = answer_defaults.NORAG_PROMPT,
        evidence_weighting: Weighting = WEIGHTING,
    ) -> None:
        self.llm = llm
        self.retriever = retriever
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.seed = seed
        #: How the evidence differential counts a report by its rank (assistant/rag/evidence.py).
        self.evidence_weighting = evidence_weighting
        #: No model is asked: the evidence differential answers (EVIDENCE_ONLY).
        self.evidence_only = retriever is not None and rag_prompt == EVIDENCE_ONLY
        self.prompt = prompts.load(rag_prompt if retriever is not None and not self.evidence_only else norag_prompt)

    @property
    def prompt_id(self) -> str:
        """What answers record as their prompt: the template's id, or EVIDENCE_ONLY when no model is asked."""
        return EVIDENCE_ONLY if self.evidence_only else self.prompt.id

    def invoke(self, input: str | Mapping[str, Any], config: RunnableConfig | None = None, **kwargs: Any) -> Answer:
        """Run the pipeline (non-streaming call to the LLM, so token usage is reported)."""
        *_, answer = self._run(input, config, streaming=False)
        assert isinstance(answer, Answer)
        return answer

    def iter_answer(
        self,
        input: str | Mapping[str, Any],
        config: RunnableConfig | None = None,
        *,
        cancel: threading.Event | None = None,
    ) -> Iterator[Retrieval | str | Answer]:
        """Yield the `Retrieval` (when there is a retriever), the model's text as it is generated, then the final
        `Answer` (always the last item). A set `cancel` (the chat's Stop) ends the model's call early, even while
        it reads the prompt (LLM.stream); what it wrote so far is then answered from like any output."""
        return self._run(input, config, streaming=True, cancel=cancel)

    def _run(
        self,
        input: str | Mapping[str, Any],
        config: RunnableConfig | None,
        *,
        streaming: bool,
        cancel: threading.Event | None = None,
    ) -> Iterator[Retrieval | str | Answer]:
        start = time.monotonic()
        raw_query = input.get("query", "") if isinstance(input, Mapping) else input
        query = clean_query(raw_query)  # EmptyQueryError: bad input, the one case that raises
        history: list[Message] = list(input.get("history") or []) if isinstance(input, Mapping) else []
        notes: list[str] = []
        docs: list[Document] = []
        timings: dict[str, float] = {}
        if self.retriever is not None:
            notice = getattr(self.retriever, "query_notice", None)
            if notice is not None and (text := notice(query)):
                notes.append(f"retrieval: {text}")
            docs = self.retriever.invoke(query, config)
            timings["retrieval"] = time.monotonic() - start
        retrieved = documents_to_hits(docs)
        question = read_question(query)
        evidence = evidence_for(question, retrieved, self.evidence_weighting)
        choices = [choice_name(neutralise_tags(c.diagnosis)) for c in evidence.candidates]
        configuration = self.configuration()
        base = {
            "query": query,
            "retrieved": retrieved,
            "evidence": evidence.to_dict() if retrieved else {},
            "prompt_id": self.prompt_id,
            "notes": notes,
            "timings": timings,
            "configuration": configuration,
            "configuration_hash": configuration_hash(configuration),
        }
        if streaming and self.retriever is not None:
            yield Retrieval(retrieved, base["evidence"])
        if question.purely_negative and self.retriever is not None:
            yield self._degraded(base, "no_abnormality", f"{NO_ABNORMALITY}: every finding is negated or normal", start)
            return
        if self.evidence_only:
            yield self._from_evidence(base, query, retrieved, evidence, choices, start)
            return
        llm_start = time.monotonic()  # the model's deadline counts from here: fitting the prompt may ask it too
        try:
            rendered = render_choices(evidence, choices) if self.chooses else ""
            messages = self._messages(query, docs, retrieved, notes, history, rendered)
            schema = choice_schema(choices) if self.chooses else answer_schema([h.report.id for h in retrieved])
            call = {"json_schema": schema, "started_at": llm_start, **self._sampling()}
            if streaming:
                pieces: list[str] = []
                for piece in self.llm.stream(messages, cancel=cancel, **call):
                    pieces.append(piece)
                    yield piece
                elapsed = time.monotonic() - llm_start
                result = LLMResult("".join(pieces), self.llm.model_id, {"total": elapsed})
            else:
                result = self.llm.complete(messages, **call)
        except BackendTimeout as exc:
            yield self._degraded(base, "timeout", f"{exc}; {TIMEOUT_HINT}", start)
            return
        except BackendMalformed as exc:  # the server's answer held no output to parse
            yield self._degraded(base, "unparseable", str(exc), start)
            return
        except LLMError as exc:
            yield self._degraded(base, "backend_unavailable", str(exc), start)
            return
        timings["llm"] = result.timings.get("total", time.monotonic() - llm_start)
        if "tokens_per_s" in result.timings:
            timings["tokens_per_s"] = result.timings["tokens_per_s"]
        parsed: ParsedOutput | None = None
        try:
            parsed = (
                self._chosen(parse_choice(result.text, choices), evidence, choices)
                if self.chooses
                else parse_output(result.text)
            )
        except UnparseableOutput as exc:
            unreadable = str(exc)
            if self.chooses and choices:  # the evidence still answers: its best-supported diagnosis
                notes.append(
                    f"answer: the model's choice could not be read ({exc}); the diagnosis the most similar "
                    "reports affirm is given"
                )
                parsed = self._chosen(Choice(choices[0], False), evidence, choices)
        if parsed is None:
            answer = self._degraded(base, "unparseable", unreadable, start, model_id=result.model_id)
            answer.raw_output = result.text
            yield answer
            return
        cited = self._citations(parsed, retrieved, notes)
        grounding = self._grounded(parsed, query, cited, retrieved, evidence, choices, notes)
        if grounding and "replaced" not in grounding:
            answer = self._degraded(base, "ruled_out", grounding["reason"], start, model_id=result.model_id)
            answer.raw_output = result.text
            yield answer
            return
        timings["total"] = time.monotonic() - start
        diagnosis = grounding.get("diagnosis", parsed.diagnosis)
        yield Answer(
            diagnosis=diagnosis,
            differential=[d for d in parsed.differential if d.lower() != diagnosis.lower()],
            rationale=parsed.rationale,
            cited_report_ids=cited if not grounding else self._supporting(diagnosis, evidence, choices),
            model_id=result.model_id,
            usage=result.usage,
            parse_mode=parsed.mode,
            raw_output=result.text,
            grounding={k: v for k, v in grounding.items() if k != "diagnosis"},
            strength=strength(base["evidence"], diagnosis),
            **base,
        )

    def _from_evidence(
        self,
        base: dict[str, Any],
        query: str,
        retrieved: list[Hit],
        evidence: EvidenceDifferential,
        choices: list[str],
        start: float,
    ) -> Answer:
        """The answer without a model: the best-supported candidate of the evidence differential that the findings
        (and its own reports) do not rule out; `no_evidence` when no similar report affirms a diagnosis."""
        if not choices:
            return self._degraded(
                base,
                "no_evidence",
                f"none of the {len(retrieved)} most similar reports affirms a "
                "diagnosis (they read as normal, or only rule findings out)",
                start,
            )
        parsed = self._chosen(Choice(choices[0], False), evidence, choices, by_model=False)
        grounding = self._grounded(parsed, query, parsed.cited_report_ids, retrieved, evidence, choices, base["notes"])
        if grounding and "replaced" not in grounding:
            return self._degraded(base, "ruled_out", grounding["reason"], start)
        diagnosis = grounding.get("diagnosis", parsed.diagnosis)
        if grounding:
            parsed = self._chosen(Choice(diagnosis, False), evidence, choices, by_model=False)
        base["timings"]["total"] = time.monotonic() - start
        return Answer(
            diagnosis=diagnosis,
            differential=parsed.differential,
            rationale=parsed.rationale,
            cited_report_ids=parsed.cited_report_ids,
            model_id=None,
            grounding={k: v for k, v in grounding.items() if k != "diagnosis"},
            strength=strength(base["evidence"], diagnosis),
            **base,
        )

    @property
    def chooses(self) -> bool:
        """Whether the model chooses among the evidence differential (assistant/rag/choice.py)."""
        return self.retriever is not None and self.prompt.references == "evidence"

    @staticmethod
    def _chosen(
        choice: Choice, evidence: EvidenceDifferential, choices: list[str], *, by_model: bool = True
    ) -> ParsedOutput:
        """A choice as the answer fields: the chosen candidate's supporting reports are its citations, the other
        candidates its differential, its support its rationale."""
        others = [name for name in choices if name != choice.diagnosis][:MAX_CHOICE_DIFFERENTIAL]
        if choice.own:
            why = "None of the diagnoses the similar reports affirm fits the findings: the model's own diagnosis."
            return ParsedOutput(choice.diagnosis, others, why, [], "json")
        candidate = evidence.candidates[choices.index(choice.diagnosis)]
        why = (
            f"Affirmed by {evidence.support(candidate)}, the best fit among the diagnoses they affirm."
            if by_model
            else f"Affirmed by {evidence.support(candidate)}: the best-supported diagnosis they affirm that the "
            "findings do not rule out (no language model was asked)."
        )
        return ParsedOutput(choice.diagnosis, others, why, list(candidate.report_ids[:MAX_CITED]), "json")

    @staticmethod
    def _supporting(diagnosis: str, evidence: EvidenceDifferential, choices: list[str]) -> list[str]:
        """The reports that affirm a candidate of the evidence differential (none for another diagnosis)."""
        if diagnosis not in choices:
            return []
        return list(evidence.candidates[choices.index(diagnosis)].report_ids[:MAX_CITED])

    @staticmethod
    def _grounded(
        parsed: ParsedOutput,
        query: str,
        cited: list[str],
        retrieved: list[Hit],
        evidence: EvidenceDifferential,
        choices: list[str],
        notes: list[str],
    ) -> dict[str, str]:
        """Empty when nothing rules the diagnosis out (assistant/rag/grounding.py); else why, and the best-supported
        candidate of the evidence that neither the findings nor its own reports rule out, which takes its place
        (`diagnosis`; absent when there is none)."""
        impressions = {h.report.id: h.report.shown_impression for h in retrieved}
        reason = contradiction(parsed.diagnosis, query, [impressions[c] for c in cited if c in impressions])
        if reason is None and echoes_an_instruction(
            parsed.diagnosis, [f"{h.report.findings}\n{h.report.shown_impression}" for h in retrieved]
        ):
            reason = "it repeats an instruction written in a retrieved report"
        if reason is None:
            return {}
        for candidate, name in zip(evidence.candidates, choices, strict=True):
            supporting = [impressions[i] for i in candidate.report_ids if i in impressions]
            if name.lower() != parsed.diagnosis.lower() and contradiction(name, query, supporting) is None:
                notes.append(
                    f"answer: {parsed.diagnosis!r} is not given as the most likely diagnosis ({reason}); "
                    f"{name!r}, affirmed by {evidence.support(candidate)}, takes its place"
                )
                return {"replaced": parsed.diagnosis, "reason": reason, "diagnosis": name}
        return {
            "reason": f"the model answered {parsed.diagnosis!r}, but {reason}, and no diagnosis the similar "
            "reports affirm is left in its place"
        }

    def configuration(self) -> dict[str, Any]:
        """What answers with this pipeline (assistant/rag/configuration.py): the retriever's index and search (None for
        the no-retrieval baseline or a retriever that cannot say), the prompt, the model and its sampling."""
        describe = getattr(self.retriever, "configuration", None)
        return {
            "retrieval": describe() if describe is not None else None,
            "evidence_weighting": self.evidence_weighting if self.retriever is not None else None,
            "prompt": self.prompt_id,
            "llm": None if self.evidence_only else self.llm.identity() | self._sampling(),
        }

    def _sampling(self) -> dict[str, Any]:
        return {"max_tokens": self.max_tokens, "temperature": self.temperature, "seed": self.seed}

    def _messages(
        self,
        query: str,
        docs: list[Document],
        hits: list[Hit],
        notes: list[str],
        history: list[Message] | None = None,
        choices: str = "",
    ) -> list[Message]:
        """Fill the template within the context budget, recording every truncation in `notes`. A template with
        `references: evidence` shows `choices` (the rendered evidence differential) instead of the reports. A
        reference report is its Document's text (a composed retriever may have shortened it), the rest its hit's."""
        empty = self.prompt.messages(findings="", references="")
        overhead = sum(self.llm.count_tokens(m["content"]) + CHAT_OVERHEAD_TOKENS for m in empty)
        available = self.llm.context_window - self.max_tokens - overhead
        if available < 32:
            raise LLMError(
                f"the model's context ({self.llm.context_window} tokens) has no room for a query after the "
                f"prompt and a {self.max_tokens}-token answer: use a model or server with a longer context"
            )
        earlier = self._history(history or [], available // HISTORY_SHARE, notes)
        available -= sum(self.llm.count_tokens(m["content"]) + CHAT_OVERHEAD_TOKENS for m in earlier)
        findings, cut = fit_tokens(self.llm, neutralise_tags(query), available // 2 if docs else available)
        if cut:
            notes.append(
                f"prompt: query cut from {len(query):,} to {len(findings) - len(_CUT_MARK):,} characters "
                f"to fit the model's {self.llm.context_window}-token context"
            )
        remaining = available - self.llm.count_tokens(findings)
        blocks: list[str] = []
        if self.prompt.references == "evidence":
            system, user = self.prompt.messages(findings=findings, references=choices if docs else "(none)")
            return [system, *earlier, user]  # type: ignore[list-item]
        for position, (doc, hit) in enumerate(zip(docs, hits, strict=True)):
            rank = position + 1
            share = remaining // (len(docs) - position) - CHAT_OVERHEAD_TOKENS
            if share < 16:
                notes.append(f"prompt: reference reports from rank {rank} on left out (no room in the context)")
                break
            if self.prompt.references == "impressions":
                impression = neutralise_tags(hit.report.shown_impression)
                text, _ = fit_tokens(self.llm, impression, min(share, CANDIDATE_TOKENS))
                block = render_candidate(hit, rank, text)
            else:
                text, cut = fit_tokens(self.llm, neutralise_tags(doc.page_content), share)
                if cut:
                    notes.append(f"prompt: reference report rank {rank} shortened to fit the context")
                block = render_reference(hit, rank, text)
            blocks.append(block)
            remaining -= self.llm.count_tokens(block)
        references = "\n\n".join(blocks) if blocks else "(none)"
        system, user = self.prompt.messages(findings=findings, references=references)
        return [system, *earlier, user]  # type: ignore[list-item]

    def _history(self, history: list[Message], budget: int, notes: list[str]) -> list[Message]:
        """The newest earlier turns that fit in `budget` tokens, oldest first; user turns are delimited like
        the query (and their tags neutralised) so an earlier turn cannot pose as instructions either."""
        kept: list[Message] = []
        for message in reversed(history):
            role = "assistant" if message.get("role") == "assistant" else "user"
            content = neutralise_tags(str(message.get("content", "")))
            if role == "user":
                content = f"<findings>\n{content}\n</findings>"
            cost = self.llm.count_tokens(content) + CHAT_OVERHEAD_TOKENS
            if cost > budget:
                break
            budget -= cost
            kept.append({"role": role, "content": content})
        while kept and kept[-1]["role"] == "assistant":  # a conversation resumes with a user turn
            kept.pop()
        if len(kept) < len(history):
            notes.append(
                f"prompt: {len(history) - len(kept)} earlier message(s) of the conversation left out (no room)"
            )
        return kept[::-1]

    @staticmethod
    def _citations(parsed: ParsedOutput, retrieved: list[Hit], notes: list[str]) -> list[str]:
        """Keep only ids that were actually retrieved; a model citing a report it never saw is noted."""
        known = {h.report.id for h in retrieved}
        kept = [c for c in dict.fromkeys(parsed.cited_report_ids) if c in known]
        dropped = [c for c in parsed.cited_report_ids if c not in known]
        if dropped:
            notes.append(f"answer: dropped citations of reports that were not retrieved: {', '.join(dropped)}")
        return kept

    def _degraded(
        self,
        base: dict[str, Any],
        kind: DegradedKind,
        reason: str,
        start: float,
        *,
        model_id: str | None = None,
    ) -> Answer:
        base["timings"]["total"] = time.monotonic() - start
        return Answer(
            diagnosis=None,
            differential=[],
            rationale="",
            cited_report_ids=[],
            # the model asked, if it never answered
            model_id=model_id or (base["configuration"]["llm"] or {}).get("model"),
            degraded=True,
            degraded_kind=kind,
            degraded_reason=reason,
            **base,
        )
