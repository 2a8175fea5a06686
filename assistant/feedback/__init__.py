"""Residents' feedback on answers, kept on this server, and the site's own benchmark made from it.

- `store.py`: `FeedbackStore`, the SQLite file under the data folder (`RADSEARCH_HOME/feedback.sqlite`) that the chat
  and `assistant ask` write to: each entry holds the question, the whole answer, its configuration hash, the signed-in
  user (or none), the time, the index and the resident's verdict;
- `cases.py`: the entries as cases of the diagnosis benchmark (`eval/diagnosis/cases.py`'s JSONL format);
- `stats.py`: agreement with the answers, by configuration hash.

Nothing here sends anything anywhere: the file stays on the host, and only `assistant feedback export` writes it out.
"""
