"""LLM backends behind one interface (base.py): an OpenAI-compatible server and embedded llama.cpp, with the
deadline they share."""
