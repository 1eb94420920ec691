"""Retrievers for the retrieval stacks users already run: LangChain (:mod:`.langchain`) and
LlamaIndex (:mod:`.llamaindex`), over traversal and passage retrieval (:mod:`.search`).
Each framework is an optional extra, imported only when one of its retrievers is made."""
