"""The prompt filled within the model's context: the query, earlier turns and the references, each cut to its share.

The query may take at most half of the room left after the template and the answer, the references share the rest
(best-ranked first); earlier turns of a conversation (the chat) go between the system and the user message, newest
kept first within at most a quarter of that room. Every cut is stated in the answer's notes. All untrusted text is
neutralised first (assistant/rag/injection.py).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from langchain_core.documents import Document

from assistant.llm.base import LLM, LLMError, Message
from assistant.rag.injection import neutralise_tags
from prompts import PromptTemplate
from retriever.search.hit import Hit

CHAT_OVERHEAD_TOKENS = 16  # role markers and special tokens the chat template adds per message
HISTORY_SHARE = 4  # earlier turns may take at most 1/HISTORY_SHARE of the room left for query + references
_CUT_MARK = " [...]"
#: A candidate is an impression's opening: the diagnosis a radiologist put first, not every incidental finding after
#: it (a small model shown whole reports tends to copy their descriptions instead of naming a diagnosis).
CANDIDATE_TOKENS = 48


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
    """A retrieved report's tag attributes; the id is neutralised like every string that reaches a prompt (issue 51:
    an id may hold `<|im_end|><|im_start|>system`), then JSON-quoted so it cannot break the tag."""
    return f'id={json.dumps(neutralise_tags(hit.report.id))} rank="{rank}" similarity="{hit.score:.3f}"'


def render_reference(hit: Hit, rank: int, text: str) -> str:
    """One retrieved report inside its delimiters (templates with `references: reports`)."""
    return f"<reference_report {_attributes(hit, rank)}>\n{text}\n</reference_report>"


def render_candidate(hit: Hit, rank: int, text: str) -> str:
    """One retrieved report's impression as a ranked candidate (templates with `references: impressions`)."""
    return f"<candidate {_attributes(hit, rank)}>{text}</candidate>"


@dataclass
class PromptFitter:
    """Fills `prompt` for `llm`, leaving room for a `max_tokens` answer; cuts are appended to `notes`."""

    llm: LLM
    prompt: PromptTemplate
    max_tokens: int
    notes: list[str]

    def messages(
        self, query: str, docs: list[Document], hits: list[Hit], history: list[Message], choices: str = ""
    ) -> list[Message]:
        """The messages for `query`. A template with `references: evidence` shows `choices` (the rendered evidence
        differential) instead of the reports. A reference report is its Document's text (a composed retriever may
        have shortened it), the rest its hit's."""
        llm = self.llm
        empty = self.prompt.messages(findings="", references="")
        overhead = sum(llm.count_tokens(m["content"]) + CHAT_OVERHEAD_TOKENS for m in empty)
        available = llm.context_window - self.max_tokens - overhead
        if available < 32:
            raise LLMError(
                f"the model's context ({llm.context_window} tokens) has no room for a query after the "
                f"prompt and a {self.max_tokens}-token answer: use a model or server with a longer context"
            )
        earlier = self.history(history, available // HISTORY_SHARE)
        available -= sum(llm.count_tokens(m["content"]) + CHAT_OVERHEAD_TOKENS for m in earlier)
        findings, cut = fit_tokens(llm, neutralise_tags(query), available // 2 if docs else available)
        if cut:
            self.notes.append(
                f"prompt: query cut from {len(query):,} to {len(findings) - len(_CUT_MARK):,} characters "
                f"to fit the model's {llm.context_window}-token context"
            )
        if self.prompt.references == "evidence":
            references = choices if docs else "(none)"
        else:
            references = self.references(docs, hits, available - llm.count_tokens(findings))
        system, user = self.prompt.messages(findings=findings, references=references)
        return [system, *earlier, user]  # type: ignore[list-item]

    def references(self, docs: list[Document], hits: list[Hit], remaining: int) -> str:
        """The retrieved reports (or their impressions), best-ranked first, each within its share of `remaining`."""
        blocks: list[str] = []
        for position, (doc, hit) in enumerate(zip(docs, hits, strict=True)):
            rank = position + 1
            share = remaining // (len(docs) - position) - CHAT_OVERHEAD_TOKENS
            if share < 16:
                self.notes.append(f"prompt: reference reports from rank {rank} on left out (no room in the context)")
                break
            if self.prompt.references == "impressions":
                impression = neutralise_tags(hit.report.shown_impression)
                text, _ = fit_tokens(self.llm, impression, min(share, CANDIDATE_TOKENS))
                block = render_candidate(hit, rank, text)
            else:
                text, cut = fit_tokens(self.llm, neutralise_tags(doc.page_content), share)
                if cut:
                    self.notes.append(f"prompt: reference report rank {rank} shortened to fit the context")
                block = render_reference(hit, rank, text)
            blocks.append(block)
            remaining -= self.llm.count_tokens(block)
        return "\n\n".join(blocks) if blocks else "(none)"

    def history(self, history: list[Message], budget: int) -> list[Message]:
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
            self.notes.append(
                f"prompt: {len(history) - len(kept)} earlier message(s) of the conversation left out (no room)"
            )
        return kept[::-1]
