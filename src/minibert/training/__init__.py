"""Training: one loop for pre-training and fine-tuning (`trainer.py`), its learning-rate
schedules, and the zoo of small pre-trained models the chapters share, in three modules:
what a zoo model is and how it trains (`recipes`), the disk cache with its locks
(`model_cache`), and where runs train (`zoo`, with `processes` and `ensemble`)."""
