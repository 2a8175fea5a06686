"""The Gradio chat for radiology residents: a finding in, a streamed answer out, the reports it rests on beside it.

One module per job:
- `catalog.py`: the indexes a resident can choose from, each loaded once and shared by every session;
- `service.py`: `ChatService.respond`, the request handler, a plain generator so tests drive it without a browser
  (retrieval through `retriever.index.report_index`, answers through `assistant.rag.pipeline`);
- `render.py`: the HTML and Markdown of the page (all report and model text escaped there);
- `page.py`: `build_app`, the `gr.Blocks` wiring controls to the service;
- `serve.py`: `launch_app`, serving with the project's safe defaults (loopback, no share link, no analytics, no run
  history, sign-in rate limit from `sign_in_limit.py`, open streams per address bounded by `stream_limit.py`).
"""
