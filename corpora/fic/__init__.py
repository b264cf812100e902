"""Found in Conversation: sharded instructions for multi-turn evaluation (translation, code, arithmetic)."""
