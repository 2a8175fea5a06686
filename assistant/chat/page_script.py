"""The page's few scripts (run in the browser): habits residents bring from other chats, and the Export download.

- `PAGE_JS` (once, when the page opens): ArrowUp in the empty input recalls the last question; a citation in an
  answer (`#1`) or a link of the evidence panel scrolls to its report card and opens it when it is folded; a new
  question is scrolled to the top of the view, so its answer is read from its first line, the diagnosis (the chat's
  own scrolling to its end is off: it hid the diagnosis of a long answer);
- `SHOW_ANSWER_JS` (after each answer): the question and the first line of its answer, the diagnosis, are scrolled
  into view (the chat scrolls to its end while an answer streams, and on a phone the page is long);
- before printing, the folded reports are unfolded, so the print view (style.py) holds them all;
- `EXPORT_JS` (the Export button): saves the answer document (export.py) the last answer put in the page.

They read and move what is on the page and send nothing anywhere.
"""

from __future__ import annotations

from assistant.chat.export import EXPORT_ID

#: Where the questions and answers are in Gradio's chat (its messages carry these test ids).
USER_MESSAGES = '#rs-chat [data-testid="user"]'
BOT_MESSAGES = '#rs-chat [data-testid="bot"]'

PAGE_JS = f"""() => {{
    if (window.rsChatReady) {{ return; }}
    window.rsChatReady = true;
    document.addEventListener('keydown', (event) => {{
        const box = event.target;
        if (event.key !== 'ArrowUp' || !box.closest || !box.closest('#rs-input') || box.value !== '') {{ return; }}
        const asked = document.querySelectorAll('{USER_MESSAGES} .message-content');
        if (!asked.length) {{ return; }}
        event.preventDefault();
        box.value = asked[asked.length - 1].innerText.trim();
        box.dispatchEvent(new Event('input', {{bubbles: true}}));
    }}, true);
    document.addEventListener('click', (event) => {{
        const link = event.target.closest ? event.target.closest('a[href^="#rs-report-"]') : null;
        const card = link ? document.getElementById(link.getAttribute('href').slice(1)) : null;
        if (!card) {{ return; }}
        event.preventDefault();
        event.stopPropagation();
        const folded = card.closest('details');
        if (folded) {{ folded.open = true; }}
        card.scrollIntoView({{block: 'start'}});
        card.classList.add('rs-card-target');
        setTimeout(() => card.classList.remove('rs-card-target'), 2500);
    }}, true);
    const chat = document.getElementById('rs-chat');
    let questions = 0;
    if (chat) {{
        new MutationObserver(() => {{
            const asked = chat.querySelectorAll('[data-testid="user"]');
            if (asked.length > questions) {{ asked[asked.length - 1].scrollIntoView({{block: 'start'}}); }}
            questions = asked.length;
        }}).observe(chat, {{childList: true, subtree: true}});
    }}
    window.addEventListener('beforeprint', () => {{
        document.querySelectorAll('#rs-reports details.rs-more').forEach((folded) => {{ folded.open = true; }});
    }});
}}"""

SHOW_ANSWER_JS = f"""() => {{
    const asked = document.querySelectorAll('{USER_MESSAGES}');
    if (asked.length) {{ asked[asked.length - 1].scrollIntoView({{block: 'start'}}); }}
}}"""

EXPORT_JS = f"""() => {{
    const source = document.getElementById('{EXPORT_ID}');
    if (!source) {{ return; }}
    const link = document.createElement('a');
    link.href = URL.createObjectURL(new Blob([source.value], {{type: 'text/markdown'}}));
    link.download = 'radsearch-answer.md';
    document.body.appendChild(link);
    link.click();
    link.remove();
}}"""
