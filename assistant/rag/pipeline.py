"""The RAG pipeline: finding text -> retrieved reports -> evidence -> a proposed diagnosis -> grounding -> `Answer`.

A LangChain `Runnable[str, Answer]`, so it composes and batches like any other. `iter_answer` streams: first the
`Retrieval` (the reports and their evidence, so a caller shows them before the model starts), then the model's
text as it is generated, and last the Answer. The pipeline never raises for a backend problem: a server that is down,
a timeout or output with no answer in it gives an Answer with `degraded=True`, the reason, and the retrieved
reports (the retrieval-only result). Only bad input (an empty query) raises.

One path for every answer mode (assistant/rag/modes.py): the evidence proposes its best-supported diagnosis, or the
model proposes one (choosing among the evidence, writing free text, or alone); either proposal goes through the one
grounding step (assistant/rag/grounding.py), and a replaced diagnosis is explained by the evidence for the diagnosis
that replaced it. The prompt is fitted into the model's context by assistant/rag/prompt_fit.py.

Follow-up questions (the chat): a mapping input may carry `history`, earlier turns as chat messages
(`{"role": "user"|"assistant", "content": ...}`), fitted into the prompt as prompt_fit.py says.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Generator, Iterator, Mapping
from dataclasses import replace
from typing import Any

from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import Runnable, RunnableConfig

from assistant.llm.base import LLM, BackendMalformed, BackendTimeout, LLMError, LLMResult, Message
from assistant.rag import answer_defaults, beside
from assistant.rag.answer import (
    Answer,
    DegradedKind,
    ParsedOutput,
    Retrieval,
    UnparseableOutput,
    answer_schema,
    parse_output,
)
from assistant.rag.choice import (
    Choice,
    ask_for_a_name,
    choice_name,
    choice_schema,
    chosen_output,
    nameless,
    parse_choice,
    render_choices,
)
from assistant.rag.configuration import configuration_hash
from assistant.rag.evidence import EvidenceDifferential
from assistant.rag.grounding import Grounding, ground
from assistant.rag.injection import neutralise_tags, set_aside
from assistant.rag.lc_retriever import documents_to_hits
from assistant.rag.modes import EVIDENCE_PROMPT_ID, AnswerMode, checked_prompt, mode_of_prompt
from assistant.rag.prompt_fit import PromptFitter
from assistant.rag.question import NO_ABNORMALITY, NO_FINDING, read_question
from assistant.rag.strength import strength
from assistant.rag.votes import evidence_for, no_evidence_reason
from assistant.rag.weighting import WEIGHTING, Weighting
from retriever.search.hit import Hit
from retriever.search.query import clean_query

ANSWER_MAX_TOKENS = 512
#: What a timed-out answer says, so the resident knows the knob (assistant/settings.py reads it).
TIMEOUT_HINT = "allow more time with RADSEARCH_LLM_TIMEOUT=SECONDS (default 120)"

#: A proposed diagnosis and the model's call that proposed it (None: the evidence alone proposed it).
Proposal = tuple[ParsedOutput, LLMResult | None]


class RagPipeline(Runnable[str | Mapping[str, Any], Answer]):
    """Answer a finding in one answer `mode` (None: no-retrieval without a retriever, else the mode `prompt`
    implies, else the preset's), with `prompt` the template a model is asked with (None: the mode's default).
    `settings_hash` is the hash of the Settings the pipeline was built from (assistant/rag/build.py); answers carry
    it as their configuration hash (without one, the hash of the pipeline's own configuration)."""

    def __init__(
        self,
        llm: LLM,
        retriever: BaseRetriever | None,
        *,
        mode: AnswerMode | None = None,
        prompt: str | None = None,
        max_tokens: int = ANSWER_MAX_TOKENS,
        temperature: float = 0.0,
        seed: int = 0,
        evidence_weighting: Weighting = WEIGHTING,
        settings_hash: str | None = None,
    ) -> None:
        if mode is None:
            mode = (
                AnswerMode.NO_RETRIEVAL
                if retriever is None
                else mode_of_prompt(prompt)
                if prompt
                else answer_defaults.MODE
            )
        if mode.retrieves != (retriever is not None):
            raise ValueError(f"the {mode} answer mode {'needs' if mode.retrieves else 'takes no'} retriever")
        self.llm = llm
        self.retriever = retriever
        self.mode = mode
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.seed = seed
        #: How the evidence differential counts a report by its rank (assistant/rag/evidence.py).
        self.evidence_weighting = evidence_weighting
        self.settings_hash = settings_hash
        name = prompt if prompt and prompt != EVIDENCE_PROMPT_ID else answer_defaults.prompt_for(mode)
        self.prompt = checked_prompt(mode, name) if mode.asks_model else None

    @property
    def evidence_only(self) -> bool:
        """No model is asked: the evidence differential answers."""
        return self.mode is AnswerMode.EVIDENCE

    @property
    def chooses(self) -> bool:
        """Whether the model chooses among the evidence differential (assistant/rag/choice.py)."""
        return self.mode is AnswerMode.CHOICE

    @property
    def prompt_id(self) -> str:
        """What answers record as their prompt: the template's id, or `evidence` when no model is asked."""
        return self.prompt.id if self.prompt is not None else EVIDENCE_PROMPT_ID

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
        base: dict[str, Any] = {"query": query, "notes": [], "timings": {}}
        question = read_question(query)
        if question.describes_nothing:  # nothing to search for or diagnose ("hello", "N/A")
            base |= self._record([], EvidenceDifferential())
            if streaming and self.retriever is not None:
                yield Retrieval([], base["evidence"])
            yield self._degraded(base, "no_finding", NO_FINDING, start)
            return
        docs = self._retrieve(query, config, base)
        retrieved = documents_to_hits(docs)
        evidence = evidence_for(question, retrieved, self.evidence_weighting, set_aside=set_aside(retrieved))
        if evidence.set_aside:
            base["notes"].append(
                f"evidence: {len(evidence.set_aside)} retrieved report(s) set aside, they address a model: "
                + ", ".join(neutralise_tags(i) for i in evidence.set_aside)
            )
        choices = [choice_name(neutralise_tags(c.diagnosis)) for c in evidence.candidates]
        base |= self._record(retrieved, evidence)
        if streaming and self.retriever is not None:
            yield Retrieval(retrieved, base["evidence"])
        if question.purely_negative and self.retriever is not None:
            yield self._degraded(base, "no_abnormality", f"{NO_ABNORMALITY}: every finding is negated or normal", start)
            return
        if self.mode is AnswerMode.EVIDENCE:
            if not choices:
                yield self._degraded(base, "no_evidence", no_evidence_reason(len(retrieved), evidence.excluded), start)
                return
            proposal: Proposal | Answer = (
                chosen_output(Choice(choices[0], False), evidence, choices, by_model=False),
                None,
            )
        else:
            proposal = yield from self._ask(query, docs, history, evidence, choices, base, start, streaming, cancel)
        if isinstance(proposal, Answer):
            yield proposal
            return
        answer = self._grounded(proposal, base, evidence, choices, start)
        if self.chooses and beside.wanted(answer):
            answer.model_knowledge = beside.model_knowledge(self.llm, query, self._sampling(), answer.notes)
            answer.timings["total"] = time.monotonic() - start
        yield answer

    def _retrieve(self, query: str, config: RunnableConfig | None, base: dict[str, Any]) -> list[Document]:
        """The retrieved reports (none without a retriever), with the retriever's notice about the query."""
        if self.retriever is None:
            return []
        start = time.monotonic()
        notice = getattr(self.retriever, "query_notice", None)
        if notice is not None and (text := notice(query)):
            base["notes"].append(f"retrieval: {text}")
        docs = self.retriever.invoke(query, config)
        base["timings"]["retrieval"] = time.monotonic() - start
        return docs

    def _record(self, retrieved: list[Hit], evidence: EvidenceDifferential) -> dict[str, Any]:
        """What every answer of this question carries, whatever becomes of it."""
        configuration = self.configuration()
        return {
            "retrieved": retrieved,
            "evidence": evidence.to_dict() if retrieved else {},
            "prompt_id": self.prompt_id,
            "configuration": configuration,
            "configuration_hash": self.settings_hash or configuration_hash(configuration),
        }

    def _ask(
        self,
        query: str,
        docs: list[Document],
        history: list[Message],
        evidence: EvidenceDifferential,
        choices: list[str],
        base: dict[str, Any],
        start: float,
        streaming: bool,
        cancel: threading.Event | None,
    ) -> Generator[str, None, Proposal | Answer]:
        """Ask the model (its text yielded as it is written when `streaming`); its proposal, or the degraded Answer
        when it could not be asked or wrote nothing to read."""
        assert self.prompt is not None
        llm_start = time.monotonic()  # the model's deadline counts from here: fitting the prompt may ask it too
        try:
            rendered = render_choices(evidence, choices) if self.chooses else ""
            fitter = PromptFitter(self.llm, self.prompt, self.max_tokens, base["notes"])
            messages = fitter.messages(query, docs, base["retrieved"], history, rendered)
            shown_ids = [neutralise_tags(h.report.id) for h in base["retrieved"]]  # as the prompt shows them
            schema = choice_schema(choices) if self.chooses else answer_schema(shown_ids)
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
            if self.chooses and nameless(result.text, choices):
                result = ask_for_a_name(self.llm, query, result, call, base["notes"])
        except BackendTimeout as exc:
            return self._degraded(base, "timeout", f"{exc}; {TIMEOUT_HINT}", start)
        except BackendMalformed as exc:  # the server's answer held no output to parse
            return self._degraded(base, "unparseable", str(exc), start)
        except LLMError as exc:
            return self._degraded(base, "backend_unavailable", str(exc), start)
        base["timings"]["llm"] = result.timings.get("total", time.monotonic() - llm_start)
        if "tokens_per_s" in result.timings:
            base["timings"]["tokens_per_s"] = result.timings["tokens_per_s"]
        try:
            return self._read(result.text, evidence, choices, base), result
        except UnparseableOutput as exc:
            answer = self._degraded(base, "unparseable", str(exc), start, model_id=result.model_id)
            answer.raw_output = result.text
            return answer

    def _read(self, text: str, evidence: EvidenceDifferential, choices: list[str], base: dict) -> ParsedOutput:
        """The model's output as answer fields; a choice that cannot be read falls back to the evidence's best
        candidate (UnparseableOutput when there is none, or the model was not choosing)."""
        if not self.chooses:
            return parse_output(text)
        try:
            return chosen_output(parse_choice(text, choices, base["query"]), evidence, choices)
        except UnparseableOutput as exc:
            if not choices:
                raise
            base["notes"].append(
                f"answer: the model's choice could not be read ({exc}); the diagnosis the most similar "
                "reports affirm is given"
            )
            return replace(chosen_output(Choice(choices[0], False), evidence, choices), mode="fallback")

    def _grounded(
        self,
        proposal: Proposal,
        base: dict[str, Any],
        evidence: EvidenceDifferential,
        choices: list[str],
        start: float,
    ) -> Answer:
        """The proposal through the grounding step: shown as proposed, replaced by the evidence's best candidate
        that is not ruled out (explained by that candidate's support), or no diagnosis (`ruled_out`)."""
        parsed, result = proposal
        model = {"model_id": result.model_id, "raw_output": result.text} if result else {"model_id": None}
        cited = _citations(parsed, base["retrieved"], base["notes"])
        proposer = "the model" if result else "the evidence"
        grounding, note = ground(parsed.diagnosis, base["query"], cited, base["retrieved"], evidence, choices, proposer)
        if note:
            base["notes"].append(note)
        if grounding.diagnosis is None:
            answer = self._degraded(base, "ruled_out", grounding.reason or "", start, model_id=model["model_id"])
            answer.raw_output = model.get("raw_output", "")
            return answer
        if not grounding.stands:
            parsed, cited = _replacement(grounding, evidence, choices)
        base["timings"]["total"] = time.monotonic() - start
        diagnosis = parsed.diagnosis
        return Answer(
            diagnosis=diagnosis,
            differential=[d for d in parsed.differential if d.lower() != diagnosis.lower()],
            rationale=parsed.rationale,
            cited_report_ids=cited,
            usage=result.usage if result else {},
            parse_mode=parsed.mode if result else None,
            grounding=grounding.to_dict(),
            strength=strength(base["evidence"], diagnosis),
            **model,
            **base,
        )

    def configuration(self) -> dict[str, Any]:
        """What answers with this pipeline (assistant/rag/configuration.py): the retriever's index and search (None for
        the no-retrieval baseline or a retriever that cannot say), the mode, the prompt, the model and its sampling."""
        describe = getattr(self.retriever, "configuration", None)
        return {
            "retrieval": describe() if describe is not None else None,
            "evidence_weighting": self.evidence_weighting if self.retriever is not None else None,
            "mode": str(self.mode),
            "prompt": self.prompt_id,
            "llm": None if self.evidence_only else self.llm.identity() | self._sampling(),
        }

    def _sampling(self) -> dict[str, Any]:
        return {"max_tokens": self.max_tokens, "temperature": self.temperature, "seed": self.seed}

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


def _citations(parsed: ParsedOutput, retrieved: list[Hit], notes: list[str]) -> list[str]:
    """Keep only ids that were actually retrieved (cited as stored or as the prompt showed them, neutralised); a model
    citing a report it never saw is noted."""
    known = {neutralise_tags(h.report.id): h.report.id for h in retrieved} | {
        h.report.id: h.report.id for h in retrieved
    }
    kept = list(dict.fromkeys(known[c] for c in parsed.cited_report_ids if c in known))
    dropped = [c for c in parsed.cited_report_ids if c not in known]
    if dropped:
        notes.append(f"answer: dropped citations of reports that were not retrieved: {', '.join(dropped)}")
    return kept


def _replacement(
    grounding: Grounding, evidence: EvidenceDifferential, choices: list[str]
) -> tuple[ParsedOutput, list[str]]:
    """The answer fields of the candidate that replaced a ruled-out diagnosis: its support is the rationale (the
    replaced diagnosis's rationale no longer applies), its reports the citations, the other candidates the
    differential."""
    assert grounding.diagnosis is not None and grounding.candidate is not None
    fields = chosen_output(Choice(grounding.diagnosis, False), evidence, choices, by_model=False)
    candidate = evidence.candidates[grounding.candidate]
    why = (
        f"Affirmed by {evidence.support(candidate)}: the best-supported diagnosis they affirm that is not ruled out, "
        f"in place of {grounding.replaced!r} ({grounding.reason})."
    )
    return ParsedOutput(fields.diagnosis, fields.differential, why, fields.cited_report_ids, fields.mode), list(
        fields.cited_report_ids
    )
