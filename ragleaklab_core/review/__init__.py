"""Labelling a run on your own system: the review page and its server (``label review``), the
labelling plan (``label plan``), and each reviewer's review file.

A room above ``run`` (it reads what a run wrote: its report, its records and its cases' tags)
and beside ``reporting``; ``calibration`` below it turns the finished reviews into labels.
"""
