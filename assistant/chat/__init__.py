"""The Gradio chat for radiology residents: a finding in, a streamed answer out, the reports it rests on beside it.

One module per job:
- `catalog.py`: the indexes a resident can choose from, each loaded once and shared by every session;
- `service.py`: `ChatService.respond`, the request handler, a plain generator so tests drive it without a browser
  (retrieval through `retriever.index.report_index`, answers through `assistant.rag.pipeline`);
- `render.py` (messages, notices, banner), `report_cards.py` (the report cards and the evidence panel), `escape.py`
  (all report and model text escaped there), `style.py` (the style sheet, phone layout and print view) and
  `export.py` (the answer as a Markdown document);
- `page.py`: `build_app`, the `gr.Blocks` made of `page_layout.py`'s parts (header; settings, question and reports
  panels) and wired to the service by `page_events.py`; `page_script.py`: its few browser scripts (ArrowUp, citation
  links, scrolling to a new question, the Export download);
- `feedback.py` and `feedback_panel.py`: residents' verdicts on the answers shown, stored by assistant/feedback/;
- `serve.py`: `launch_app`, serving with the project's safe defaults (loopback, no share link, no analytics, no run
  history, sign-in rate limit from `sign_in_limit.py` and its messages on the sign-in page from `sign_in_page.py`,
  open streams per address bounded by `stream_limit.py`), and the start-up lines.
"""
