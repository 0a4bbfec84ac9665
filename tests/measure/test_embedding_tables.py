"""Chapter 12's concatenating models: each table stays in its block, and a run made in a
training process is the run made here, bit for bit."""

import torch

from minibert.measure import embedding_tables

BLOCKS = {"word_embeddings": slice(0, 48), "position_embeddings": slice(48, 60),
          "token_type_embeddings": slice(60, 64)}
SHORT = {"steps": 4, "max_length": 16, "num_documents": 40, "warmup_steps": 1}


def test_concatenating_runs_stay_in_their_blocks_wherever_they_train(monkeypatch):
    monkeypatch.setenv("MINIBERT_TRAIN_PROCESSES", "2")
    in_processes = embedding_tables.concatenating_models(BLOCKS, [0, 1], progress=False,
                                                         **SHORT)
    monkeypatch.setenv("MINIBERT_TRAIN_PROCESSES", "1")
    here = embedding_tables.concatenating_models(BLOCKS, [0, 1], progress=False, **SHORT)
    for (a, record), (b, _) in zip(in_processes, here):
        assert all(torch.equal(x, y) for x, y in zip(a.state_dict().values(),
                                                       b.state_dict().values()))
        assert record["recipe"]["steps"] == 4
        for name, block in BLOCKS.items():
            table = getattr(a.bert.embeddings, name).weight.detach()  # (rows, 64)
            outside = torch.ones(table.shape[1], dtype=torch.bool)
            outside[block] = False
            assert table[:, outside].abs().max() == 0 and table[:, block].abs().max() > 0
    first, second = (model for model, _ in here)
    assert not torch.equal(first.bert.embeddings.word_embeddings.weight,
                           second.bert.embeddings.word_embeddings.weight)  # two seeds
