"""The command line and the measurements: `nearsym search|index|serve`,
`nearsym bench` and `nearsym eval`.

May import: every layer.
"""
