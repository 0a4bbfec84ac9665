"""Text: the WordPiece tokenizer, the synthetic language the book pre-trains on, the task
datasets built from it, the masked-LM corruption, sliding windows over long documents, a
synthetic translation task, and BPE and Unigram beside WordPiece.
Read `tokenizer.py`, then `language.py`, `datasets.py`, `masking.py`."""
