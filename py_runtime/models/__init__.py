"""Model adapters: each family is one small module behind ``base.ModelAdapter``."""
