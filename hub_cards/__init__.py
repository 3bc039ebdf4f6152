"""Model-card templates of the published checkpoints (package data of story_quality.hub_cards)."""
