"""What a method did: :class:`Trace`, :class:`TraceStep`, :class:`Prediction`, and their views.

``record`` holds the data; ``console`` and ``html`` render it; ``terminal`` makes text safe
to print.

Example:
    >>> from tablereason.trace import Prediction
    >>> Prediction(answer="yes").answer
    'yes'
"""

from tablereason.trace.record import Prediction, Trace, TraceStep

__all__ = ["Prediction", "Trace", "TraceStep"]
