"""memeval: declarative evaluation of AI-agent memory."""

__version__ = "0.1.0"
