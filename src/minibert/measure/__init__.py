"""The measuring tools the chapters use, one concept a module: comparisons over paired seeds,
attention, cross-attention against a word alignment, contextual word vectors, embedding
tables, frozen-feature probes, answer and entity spans, positions and segments, parameter
counts, the initialisation spread, compute cost, associative recall, fill-in-the-blank
tests, Adam's first updates, WordPiece traces, how far each part of a layer bends on the
inputs it really receives, the rare words of a batch, where dropout sits and how its
train mode averages, and masked-LM accuracy per whole word. Every function here reads a
model or data; models and their training live in minibert.model and minibert.training."""
