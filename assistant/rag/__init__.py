"""The RAG pipeline: retrieved reports as LangChain documents, the prompt, the model's answer parsed and checked."""
