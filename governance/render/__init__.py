"""What `mm2gov` prints: pure functions from typed results to text, JSON, Markdown, SARIF and JUnit.

The CLI (governance/cli/) only echoes what these return, so output is read and tested here.
"""
