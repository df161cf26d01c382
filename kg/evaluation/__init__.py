"""Evaluation: keyphrases against gold sets (kg eval), and the concept-pair merge against labels."""
