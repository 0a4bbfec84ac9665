"""Training: one loop for pre-training and fine-tuning (`trainer.py`), its learning-rate
schedules, and the zoo of small pre-trained models the chapters share, trained on demand
and cached on disk."""
