"""An example third-party ragleaklab distribution: two packs, a metric and a fitter.

The tutorial (docs/tutorial.md in ragleaklab's repository) walks through every file.
"""
