"""Renderers: violations and plans as text, JSON, Markdown, SARIF and JUnit."""
