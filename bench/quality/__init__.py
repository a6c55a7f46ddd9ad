"""Review-quality benchmark: learn conventions from real code, plant violations, measure."""
